import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { CLUSTER, LISTENER } from '../../src/xds/type-urls.js';
import { issueDataplaneToken } from '../helpers/auth.js';
import { tempDir } from '../helpers/control-plane.js';
import { eventually, startGlobal, startZone, zoneToken } from '../helpers/multizone.js';
import { putDataplane, rawAdsClient, rawNode, type RawAdsClient } from '../helpers/xds.js';

const SVC = 'mesh.io/service';

describe('Global answers a zone proxy’s views through its zone', () => {
  const gdir = tempDir('views-global-');
  let global: ControlPlane;
  let zone: ControlPlane | undefined;
  let client: RawAdsClient | undefined;
  const get = (cp: ControlPlane, url: string) => cp.app.inject({ method: 'GET', url });

  beforeAll(async () => {
    global = await startGlobal(gdir.path);
    const z = await startZone(global, gdir.path, 'zone-1', await zoneToken(global, 'zone-1'));
    zone = z;
    await eventually(() => z.multizone?.link?.().connected, 10_000, 'zone-1 to connect');
    await eventually(() => z.views.get('Mesh', undefined, 'default'), 5000, 'the mesh on zone-1');
    for (const [name, address, inbound, outbound] of [
      ['client-1', '127.0.0.1', 'client', 'greeter'],
      ['greeter-1', '10.0.1.1', 'greeter', undefined],
    ] as const) {
      await putDataplane(z.app, 'default', name, {
        address,
        inbound: [{ port: 50051, tags: { [SVC]: inbound } }],
        ...(outbound ? { outbound: [{ port: 10001, tags: { [SVC]: outbound } }] } : {}),
      });
    }
    const ingress = await z.app.inject({
      method: 'PUT',
      url: '/zone-ingresses/ingress-1',
      payload: { type: 'ZoneIngress', name: 'ingress-1', networking: { address: '127.0.0.1', port: 10001 } },
    });
    expect(ingress.statusCode, ingress.body).toBe(201);
    await eventually(
      () =>
        global.views.get('Dataplane', 'default', 'zone-1.client-1') &&
        global.views.get('ZoneIngress', undefined, 'zone-1.ingress-1'),
      10_000,
      'the proxies on Global',
    );
    const token = await issueDataplaneToken(z.app, { mesh: 'default', name: 'client-1', validFor: '1h' });
    const c = rawAdsClient(z.ports.xds);
    client = c;
    c.send({
      type_url: LISTENER,
      resource_names: ['greeter'],
      node: rawNode('default.client-1', { 'dataplane.token': token }),
    });
    const lds = await c.next();
    c.send({
      type_url: LISTENER,
      resource_names: ['greeter'],
      response_nonce: lds.nonce,
      version_info: lds.version_info,
    });
    c.send({ type_url: CLUSTER, resource_names: ['greeter'] });
    const cds = await c.next();
    c.send({
      type_url: CLUSTER,
      resource_names: ['greeter'],
      response_nonce: cds.nonce,
      error_detail: { code: 3, message: 'rejected by the test' },
    });
    await eventually(
      async () =>
        (await get(z, '/meshes/default/dataplanes/client-1/stats')).body.includes(
          'cluster_manager.cds.update_rejected: 1',
        ),
      5000,
      'the NACK counted on the zone',
    );
  });
  afterAll(async () => {
    client?.close();
    await zone?.close();
    await global?.close();
    gdir.cleanup();
  });

  it('the dump, stats and clusters via Global equal the zone’s own answers', async () => {
    const z = zone as ControlPlane;
    for (const view of ['xds', 'stats', 'clusters']) {
      const own = await get(z, `/meshes/default/dataplanes/client-1/${view}`);
      const viaGlobal = await get(global, `/meshes/default/dataplanes/zone-1.client-1/${view}`);
      expect(viaGlobal.statusCode, viaGlobal.body).toBe(200);
      expect(viaGlobal.headers['content-type']).toBe(own.headers['content-type']);
      expect(viaGlobal.body).toBe(own.body);
    }
    const dump = (await get(global, '/meshes/default/dataplanes/zone-1.client-1/xds')).json();
    expect(dump.configs[3].dynamic_active_clusters[0].error_state.details).toBe('rejected by the test');
    const ingress = await get(global, '/zoneingresses/zone-1.ingress-1/xds');
    expect(ingress.statusCode, ingress.body).toBe(200);
    expect(ingress.body).toBe((await get(z, '/zoneingresses/ingress-1/xds')).body);
    const missing = await get(global, '/meshes/default/dataplanes/zone-1.nope/xds');
    expect(missing.statusCode).toBe(404);
  });

  it('503 naming the zone once it is disconnected', async () => {
    await zone?.close();
    zone = undefined;
    await eventually(() => !global.multizone?.isConnected('zone-1'), 10_000, 'zone-1 disconnected');
    for (const view of ['xds', 'stats', 'clusters']) {
      const res = await get(global, `/meshes/default/dataplanes/zone-1.client-1/${view}`);
      expect(res.statusCode).toBe(503);
      expect(res.json()).toMatchObject({
        title: 'Zone not connected',
        details: 'zone "zone-1" is not connected to Global',
      });
    }
  });
});
