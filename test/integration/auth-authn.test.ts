import { generateKeyPairSync } from 'node:crypto';
import { SignJWT, UnsecuredJWT } from 'jose';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { generateSigningKey } from '../../src/tokens/signing-key.js';
import { REMOTE, b64, bearer, decodeJwt, issueUserToken } from '../helpers/auth.js';
import { startPlane, testConfig } from '../helpers/control-plane.js';

const T0 = Date.parse('2026-05-06T07:08:09.000Z');
const MINUTE = 60_000;
const all = [{ match: { 'mesh.io/service': '*' } }];

describe('authentication (decisions §7)', () => {
  let cp: ControlPlane;
  let clock = T0;

  beforeAll(async () => {
    cp = await startPlane(testConfig(), { listen: false, now: () => new Date(clock) });
    await cp.defaultsReady;
  });
  afterAll(async () => {
    await cp.close();
  });

  const get = (headers: Record<string, string>, url = '/meshes') =>
    cp.app.inject({ method: 'GET', url, headers, remoteAddress: REMOTE });

  const expect401 = async (headers: Record<string, string>, details: string) => {
    const res = await get(headers);
    expect(res.statusCode, res.body).toBe(401);
    expect(res.headers['content-type']).toMatch(/^application\/json/);
    expect(res.headers['www-authenticate']).toBe('Bearer realm="mesh-cp"');
    expect(res.headers['x-request-id']).toBeTruthy();
    expect(res.json()).toEqual({ title: 'Unauthorized', details });
  };

  it('refuses credentials that are not a bearer token, and tokens that are not JWTs', async () => {
    const notBearer = 'the Authorization header must be "Bearer <user token>"';
    await expect401({ authorization: 'Basic YWRtaW46YWRtaW4=' }, notBearer);
    await expect401({ authorization: 'Bearer' }, notBearer);
    await expect401({ authorization: '' }, notBearer);
    await expect401(bearer('not-a-jwt'), 'the token is not a valid JWT');
    await expect401(bearer('a.b.c'), 'the token is not a valid JWT');
  });

  it('refuses a token that is unsigned, signed with another algorithm, or with no key id', async () => {
    const unsecured = new UnsecuredJWT({ name: 'eve', groups: ['mesh-system:admin'] }).encode();
    await expect401(bearer(unsecured), 'the token is signed with none; only RS256 is accepted');
    const hs = await new SignJWT({ name: 'eve', groups: ['mesh-system:admin'] })
      .setProtectedHeader({ alg: 'HS256', kid: '1' })
      .sign(new TextEncoder().encode('a-shared-secret-of-enough-length'));
    await expect401(bearer(hs), 'the token is signed with HS256; only RS256 is accepted');
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const noKid = await new SignJWT({ name: 'eve' }).setProtectedHeader({ alg: 'RS256' }).sign(privateKey);
    await expect401(bearer(noKid), 'the token has no key id (kid) naming a signing key serial');
  });

  it('refuses a token signed with a key that is not ours, or with a serial that does not exist', async () => {
    const { privateKey } = generateKeyPairSync('rsa', { modulusLength: 2048 });
    const forge = (kid: string) =>
      new SignJWT({ name: 'eve', groups: ['mesh-system:admin'], tokenType: 'user' })
        .setProtectedHeader({ alg: 'RS256', kid })
        .setJti('forged')
        .setIssuedAt(T0 / 1000)
        .setExpirationTime(T0 / 1000 + 3600)
        .sign(privateKey);
    await expect401(bearer(await forge('1')), "the token's signature does not match signing key 1");
    await expect401(
      bearer(await forge('7')),
      'the token was signed with user-token-signing-key-7, which no longer exists',
    );
  });

  it('makes a token holder that user even from loopback, so restricted access can be tried locally', async () => {
    const reader = await issueUserToken(cp.app, { name: 'rita', groups: ['mesh-system:reader'] });
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/traffic-permissions/local',
      headers: bearer(reader),
      payload: { type: 'TrafficPermission', mesh: 'default', name: 'local', sources: all, destinations: all },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json().details).toBe(
      'user "rita" (groups: mesh-system:reader) may not PUT TrafficPermission in mesh "default"',
    );
    // Without the token the same loopback caller is admin.
    const admin = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/traffic-permissions/local',
      payload: { type: 'TrafficPermission', mesh: 'default', name: 'local', sources: all, destinations: all },
    });
    expect(admin.statusCode).toBe(201);
  });

  it('refuses a bad token with 401 even on a path anyone may read', async () => {
    const res = await cp.app.inject({ method: 'GET', url: '/', headers: bearer('x.y.z') });
    expect(res.statusCode).toBe(401);
  });

  it('honours expiry: valid until exp, 401 from then on', async () => {
    clock = T0;
    const token = await issueUserToken(cp.app, {
      name: 'eli',
      groups: ['mesh-system:reader'],
      validFor: '1h',
    });
    clock = T0 + 59 * MINUTE;
    expect((await get(bearer(token))).statusCode).toBe(200);
    clock = T0 + 60 * MINUTE;
    await expect401(bearer(token), 'the token expired at 2026-05-06T08:08:09.000Z');
    clock = T0;
  });

  it('honours not-before: a token is refused before the time it was issued', async () => {
    clock = T0;
    const token = await issueUserToken(cp.app, { name: 'nora', groups: ['mesh-system:reader'] });
    clock = T0 - 5 * MINUTE;
    await expect401(bearer(token), 'the token is not valid before 2026-05-06T07:08:09.000Z');
    clock = T0;
    expect((await get(bearer(token))).statusCode).toBe(200);
  });

  it('refuses a token whose id is in the user-token-revocations secret, everywhere, and no other', async () => {
    const revoked = await issueUserToken(cp.app, { name: 'rex', groups: ['mesh-system:admin'] });
    const kept = await issueUserToken(cp.app, { name: 'kim', groups: ['mesh-system:admin'] });
    const id = String(decodeJwt(revoked).payload.jti);
    const put = await cp.app.inject({
      method: 'PUT',
      url: '/global-secrets/user-token-revocations',
      payload: { type: 'Secret', name: 'user-token-revocations', data: b64(`first-id,${id}\n`) },
    });
    expect(put.statusCode).toBe(201);
    await expect401(bearer(revoked), `the token ${id} has been revoked`);
    for (const url of ['/', '/config', '/global-secrets', '/meshes/default']) {
      expect((await get(bearer(revoked), url)).statusCode).toBe(401);
    }
    const tokenRoute = await cp.app.inject({
      method: 'POST',
      url: '/tokens/user',
      headers: bearer(revoked),
      payload: { name: 'x', validFor: '1h' },
    });
    expect(tokenRoute.statusCode).toBe(401);
    expect((await get(bearer(kept))).statusCode).toBe(200);
  });

  it('rotates keys: key 2 signs new tokens, key 1 tokens stay valid until key 1 is deleted', async () => {
    const old = await issueUserToken(cp.app, { name: 'olga', groups: ['mesh-system:reader'] });
    expect(decodeJwt(old).header.kid).toBe('1');
    const put = await cp.app.inject({
      method: 'PUT',
      url: '/global-secrets/user-token-signing-key-2',
      payload: { type: 'Secret', name: 'user-token-signing-key-2', data: await generateSigningKey() },
    });
    expect(put.statusCode).toBe(201);
    const fresh = await issueUserToken(cp.app, { name: 'nina', groups: ['mesh-system:reader'] });
    expect(decodeJwt(fresh).header.kid).toBe('2');
    expect((await get(bearer(old))).statusCode).toBe(200);
    expect((await get(bearer(fresh))).statusCode).toBe(200);

    const del = await cp.app.inject({ method: 'DELETE', url: '/global-secrets/user-token-signing-key-1' });
    expect(del.statusCode).toBe(200);
    await expect401(
      bearer(old),
      'the token was signed with user-token-signing-key-1, which no longer exists',
    );
    expect((await get(bearer(fresh))).statusCode).toBe(200);
    expect(decodeJwt(await issueUserToken(cp.app, { name: 'x' })).header.kid).toBe('2');
  });

  it('answers 503 when the newest signing key is not an RSA key', async () => {
    await cp.app.inject({
      method: 'PUT',
      url: '/global-secrets/user-token-signing-key-3',
      payload: { type: 'Secret', name: 'user-token-signing-key-3', data: b64('not a key') },
    });
    const res = await cp.app.inject({
      method: 'POST',
      url: '/tokens/user',
      payload: { name: 'x', validFor: '1h' },
    });
    expect(res.statusCode).toBe(503);
    expect(res.json().details).toBe(
      'global secret "user-token-signing-key-3" does not hold an RSA private key (base64 of a PEM)',
    );
    await cp.app.inject({ method: 'DELETE', url: '/global-secrets/user-token-signing-key-3' });
  });
});
