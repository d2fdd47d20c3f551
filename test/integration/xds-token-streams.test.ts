import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { LISTENER } from '../../src/xds/type-urls.js';
import { b64, decodeJwt, issueDataplaneToken } from '../helpers/auth.js';
import { startListeningPlane } from '../helpers/control-plane.js';
import { putDataplane, rawAdsClient, rawNode, statusWithin, type RawAdsClient } from '../helpers/xds.js';

const SVC = 'mesh.io/service';
const jti = (token: string): string => String(decodeJwt(token).payload.jti);

/** An open xDS stream ends with its data plane token, as a watch stream ends with its user token. */
describe('xDS streams end when their data plane token is revoked or expires', () => {
  let cp: ControlPlane;
  const open: RawAdsClient[] = [];

  const issue = (body: Record<string, unknown>): Promise<string> => issueDataplaneToken(cp.app, body);
  const putSecret = async (name: string, data: string) => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: `/meshes/default/secrets/${name}`,
      payload: { type: 'Secret', mesh: 'default', name, data },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  /** A stream of web-1 with `token`, once it has its first answer. */
  const connected = async (token: string): Promise<RawAdsClient> => {
    const client = rawAdsClient(cp.ports.xds);
    open.push(client);
    client.send({
      type_url: LISTENER,
      resource_names: ['web'],
      node: rawNode('default.web-1', { 'dataplane.token': token }),
    });
    const first = await client.next(5000);
    client.send({ type_url: LISTENER, resource_names: ['web'], response_nonce: first.nonce });
    return client;
  };

  beforeAll(async () => {
    cp = await startListeningPlane();
    await putDataplane(cp.app, 'default', 'web-1', {
      address: '127.0.0.1',
      inbound: [{ port: 8080, tags: { [SVC]: 'web' } }],
    });
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await cp?.close();
  });

  it('a revoked token ends its stream with UNAUTHENTICATED naming the token; other streams stay', async () => {
    const revoked = await issue({ mesh: 'default', name: 'web-1' });
    const kept = await issue({ mesh: 'default', name: 'web-1' });
    const doomed = await connected(revoked);
    const other = await connected(kept);
    // A secret that is not a token secret changes nothing.
    await putSecret('unrelated', b64('x'));
    await putSecret('dataplane-token-revocations-default', b64(jti(revoked)));
    const status = await statusWithin(doomed);
    expect(status.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(status.details).toBe(
      `the data plane token is not valid: the token ${jti(revoked)} has been revoked`,
    );
    await other.nothingFor(300);
    expect(cp.xds?.ads.streams()).toHaveLength(1);
  });

  it('an expiring token ends its stream at its expiry, saying when it expired', async () => {
    const token = await issue({ mesh: 'default', name: 'web-1', validFor: '2s' });
    const expiresAt = new Date(Number(decodeJwt(token).payload.exp) * 1000).toISOString();
    const client = await connected(token);
    const status = await statusWithin(client, 6000);
    expect(status.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(status.details).toBe(
      `the data plane token ${jti(token)} expired at ${expiresAt}: issue a new one (POST /tokens/dataplane) and reconnect`,
    );
  });

  it('a token whose signing key is deleted ends its stream', async () => {
    const token = await issue({ mesh: 'default', name: 'web-1' });
    const client = await connected(token);
    const del = await cp.app.inject({
      method: 'DELETE',
      url: '/meshes/default/secrets/dataplane-token-signing-key-default-1',
    });
    expect(del.statusCode, del.body).toBe(200);
    const status = await statusWithin(client);
    expect(status.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(status.details).toContain('dataplane-token-signing-key-default-1, which no longer exists');
  });
});
