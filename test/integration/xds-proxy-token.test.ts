import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startControlPlane } from '../../src/runtime/control-plane.js';
import type { DataplaneResource, ProxyIdentity } from '../../src/xds/node-identity.js';
import { dataplaneLookup, nodeIdentity } from '../../src/xds/node-identity.js';
import { authnWarning, createProxyTokenCheck } from '../../src/xds/proxy-token.js';
import { b64, decodeJwt, issueDataplaneToken } from '../helpers/auth.js';
import { testConfig } from '../helpers/control-plane.js';
import { gatewayProxy, putDataplane, sidecar } from '../helpers/xds.js';

const SVC = 'mesh.io/service';

/** Data plane tokens issued through the API, checked against the Dataplane of a proxy. */
describe('proxy token check (decisions §11)', () => {
  let cp: ControlPlane;
  // A clock the test moves: the token service verifies expiry by it.
  let nowMs = Date.parse('2026-03-01T00:00:00Z');
  let web: DataplaneResource;
  const issue = (body: Record<string, unknown>): Promise<string> => issueDataplaneToken(cp.app, body);
  const check = () => createProxyTokenCheck({ tokens: cp.tokens, authnType: 'dpToken' });

  beforeAll(async () => {
    cp = await startControlPlane(testConfig(), { listen: false, now: () => new Date(nowMs) });
    await cp.defaultsReady;
    for (const name of ['other']) {
      const res = await cp.app.inject({
        method: 'PUT',
        url: `/meshes/${name}`,
        payload: { type: 'Mesh', name },
      });
      expect(res.statusCode).toBe(201);
    }
    await putDataplane(cp.app, 'default', 'web-1', {
      address: '10.0.0.1',
      inbound: [
        { port: 8080, tags: { [SVC]: 'web', version: 'v1' } },
        { port: 8081, tags: { [SVC]: 'web-api' } },
      ],
    });
    // The proxy as stored, found from a node as the xDS server will find it.
    const identity = nodeIdentity({ id: 'default.web-1' }, dataplaneLookup(cp.views));
    expect(identity).toMatchObject({ ok: true, mesh: 'default', name: 'web-1' });
    web = (identity as ProxyIdentity).dataplane;
    expect(web.networking.inbound).toHaveLength(2);
    expect(dataplaneLookup(cp.views)('default', 'web-2')).toBeUndefined();
  });
  afterAll(() => cp.close());

  it('admits a proxy whose token names its mesh and name, or only its mesh', async () => {
    const named = await issue({ mesh: 'default', name: 'web-1' });
    expect(await check()(web, named)).toEqual({ ok: true, tokenId: decodeJwt(named).payload.jti });
    const meshWide = await issue({ mesh: 'default' });
    expect(await check()(web, meshWide)).toMatchObject({ ok: true });
  });

  it('refuses a proxy without a token, saying how to get one', async () => {
    expect(await check()(web, undefined)).toEqual({
      ok: false,
      code: 'UNAUTHENTICATED',
      message:
        'no data plane token: issue one (POST /tokens/dataplane with mesh "default" and name "web-1") and put it in the bootstrap\'s node.metadata "dataplane.token"',
    });
  });

  it('refuses a token that is not a valid JWT, or whose signature does not match', async () => {
    expect(await check()(web, 'not-a-jwt')).toEqual({
      ok: false,
      code: 'UNAUTHENTICATED',
      message: 'the data plane token is not valid: the token is not a valid JWT',
    });
    const token = await issue({ mesh: 'default', name: 'web-1' });
    const [header, payload] = token.split('.');
    const forged = `${header}.${payload}.${'A'.repeat(342)}`;
    expect(await check()(web, forged)).toMatchObject({
      ok: false,
      code: 'UNAUTHENTICATED',
      message: expect.stringContaining('signature does not match signing key 1') as unknown,
    });
  });

  it('refuses an expired token once the clock passes its expiry', async () => {
    const token = await issue({ mesh: 'default', name: 'web-1', validFor: '1h' });
    expect(await check()(web, token)).toMatchObject({ ok: true });
    const start = nowMs;
    nowMs += 2 * 3600_000;
    try {
      const result = await check()(web, token);
      expect(result).toMatchObject({ ok: false, code: 'UNAUTHENTICATED' });
      expect(result.ok ? '' : result.message).toMatch(
        /^the data plane token is not valid: the token expired at /,
      );
    } finally {
      nowMs = start;
    }
  });

  it('refuses a revoked token', async () => {
    const token = await issue({ mesh: 'default', name: 'web-1' });
    const id = String(decodeJwt(token).payload.jti);
    expect(await check()(web, token)).toMatchObject({ ok: true });
    const put = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/secrets/dataplane-token-revocations-default',
      payload: {
        type: 'Secret',
        mesh: 'default',
        name: 'dataplane-token-revocations-default',
        data: b64(id),
      },
    });
    expect(put.statusCode).toBe(201);
    expect(await check()(web, token)).toEqual({
      ok: false,
      code: 'UNAUTHENTICATED',
      message: `the data plane token is not valid: the token ${id} has been revoked`,
    });
  });

  it('denies a valid token of another proxy name, naming both', async () => {
    const token = await issue({ mesh: 'default', name: 'web-2' });
    const id = String(decodeJwt(token).payload.jti);
    expect(await check()(web, token)).toEqual({
      ok: false,
      code: 'PERMISSION_DENIED',
      message: `the data plane token ${id} does not cover Dataplane "web-1" in mesh "default": the token is for Dataplane "web-2", the proxy is Dataplane "web-1"`,
    });
  });

  it('denies a valid token of another mesh, naming both', async () => {
    const token = await issue({ mesh: 'other', name: 'web-1' });
    const result = await check()(web, token);
    expect(result).toMatchObject({ ok: false, code: 'PERMISSION_DENIED' });
    expect(result.ok ? '' : result.message).toContain(
      ': the token is for mesh "other", the proxy is in mesh "default"',
    );
  });

  it('denies a token whose tags the proxy does not carry (Kuma 2.0: every value of a token key must be allowed)', async () => {
    // The proxy carries mesh.io/service web and web-api: a token for web alone does not cover it.
    const webOnly = await check()(web, await issue({ mesh: 'default', tags: { [SVC]: ['web'] } }));
    expect(webOnly).toMatchObject({ ok: false, code: 'PERMISSION_DENIED' });
    expect(webOnly.ok ? '' : webOnly.message).toContain(
      ': the proxy has tag "mesh.io/service" with value "web-api", which the token does not allow (it allows "web")',
    );
    const missingKey = await check()(web, await issue({ mesh: 'default', tags: { zone: ['east'] } }));
    expect(missingKey.ok ? '' : missingKey.message).toContain(
      ': the proxy has no tag "zone", which the token requires',
    );
    const otherService = await check()(web, await issue({ mesh: 'default', tags: { [SVC]: ['db'] } }));
    expect(otherService.ok ? '' : otherService.message).toContain(
      'with values "web", "web-api", which the token does not allow (it allows "db")',
    );
  });

  it('admits a token whose tags cover every inbound, or the gateway', async () => {
    const both = await issue({
      mesh: 'default',
      tags: { [SVC]: ['web', 'web-api', 'spare'], version: ['v1'] },
    });
    expect(await check()(web, both)).toMatchObject({ ok: true });
    const gw = gatewayProxy('default', 'edge-1', { [SVC]: 'edge' });
    expect(await check()(gw, await issue({ mesh: 'default', tags: { [SVC]: ['edge'] } }))).toMatchObject({
      ok: true,
    });
    const side = sidecar('default', 'edge-1', { [SVC]: 'web' });
    expect(await check()(side, await issue({ mesh: 'default', tags: { [SVC]: ['edge'] } }))).toMatchObject({
      ok: false,
      code: 'PERMISSION_DENIED',
    });
  });

  it('denies an ingress or egress token to a Dataplane', async () => {
    const result = await check()(web, await issue({ mesh: 'default', type: 'ingress' }));
    expect(result).toMatchObject({ ok: false, code: 'PERMISSION_DENIED' });
    expect(result.ok ? '' : result.message).toContain(
      ': the token is for a proxy of type ingress, the proxy is a Dataplane',
    );
  });

  it('with dpServer.authn.type none admits every proxy, with or without a token, and has a start-up warning', async () => {
    const none = createProxyTokenCheck({ tokens: cp.tokens, authnType: 'none' });
    expect(await none(web, undefined)).toEqual({ ok: true });
    expect(await none(web, 'not-a-jwt')).toEqual({ ok: true });
    expect(await none(web, await issue({ mesh: 'other', name: 'x' }))).toEqual({ ok: true });
    expect(authnWarning('none')).toMatch(/^dpServer.authn.type is none: every proxy/);
    expect(authnWarning('dpToken')).toBeUndefined();
  });
});
