import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { decodeAny } from '../../src/xds/encode-any.js';
import { LISTENER } from '../../src/xds/type-urls.js';
import { issueDataplaneToken } from '../helpers/auth.js';
import { startListeningPlane } from '../helpers/control-plane.js';
import { eventually } from '../helpers/multizone.js';
import { putDataplane, rawAdsClient, rawNode } from '../helpers/xds.js';

const SVC = 'mesh.io/service';

describe('the data plane server of a standalone control plane (decisions §11)', () => {
  let cp: ControlPlane;
  let token: string;
  const get = async (url: string) => (await cp.app.inject({ method: 'GET', url })).json();

  beforeAll(async () => {
    cp = await startListeningPlane();
    await putDataplane(cp.app, 'default', 'web-1', {
      address: '127.0.0.1',
      inbound: [{ port: 8080, tags: { [SVC]: 'web' } }],
    });
    token = await issueDataplaneToken(cp.app, { mesh: 'default', name: 'web-1', validFor: '1h' });
  });
  afterAll(async () => {
    await cp?.close();
  });

  it('serves ADS on its own port; a stream makes the proxy online, its end offline with a disconnectTime', async () => {
    expect(cp.ports.xds).toBeGreaterThan(0);
    const client = rawAdsClient(cp.ports.xds);
    client.send({
      type_url: LISTENER,
      resource_names: ['web'],
      node: rawNode('default.web-1', { 'dataplane.token': token }),
    });
    const lds = await client.next();
    expect(lds.version_info).toBe(String(cp.views.revision()));
    expect(decodeAny(lds.resources[0]).name).toBe('web');
    client.send({
      type_url: LISTENER,
      resource_names: ['web'],
      response_nonce: lds.nonce,
      version_info: lds.version_info,
    });
    await eventually(
      async () => (await get('/meshes/default/dataplanes+insights?status=online')).total === 1,
      5000,
      'web-1 online',
    );
    const online = await get('/meshes/default/dataplanes+insights/web-1');
    expect(online.dataplaneInsight.subscriptions[0]).toMatchObject({
      version: { proxy: { version: '9.9.9', build: 'raw-test-client' } },
    });
    client.close();
    await eventually(
      async () =>
        (await get('/meshes/default/dataplanes+insights/web-1')).dataplaneInsight.subscriptions[0]
          .disconnectTime,
      5000,
      'web-1 disconnected',
    );
    expect((await get('/meshes/default/dataplanes+insights?status=offline')).total).toBe(1);
  });

  it('refuses a stream without a token, with the reason', async () => {
    const client = rawAdsClient(cp.ports.xds);
    client.send({ type_url: LISTENER, resource_names: ['web'], node: rawNode('default.web-1') });
    const status = await client.status;
    expect(status.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(status.details).toContain('no data plane token');
    client.close();
  });
});
