import { statSync } from 'node:fs';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { createLogger } from '../../src/runtime/logger.js';
import { generateSigningKey } from '../../src/tokens/signing-key.js';
import { REMOTE, b64, bearer, decodeJwt, issueUserToken } from '../helpers/auth.js';
import { startPlane, tempDir, testConfig } from '../helpers/control-plane.js';
import { testKeygen } from '../helpers/signing-keys.js';

const T0 = Date.parse('2026-03-04T05:06:07.000Z');
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/;

describe('token endpoints (spec 4.8)', () => {
  let cp: ControlPlane;

  beforeAll(async () => {
    cp = await startPlane(testConfig(), { listen: false, now: () => new Date(T0) });
    await cp.defaultsReady;
  });
  afterAll(async () => {
    await cp.close();
  });

  const post = (url: string, payload?: unknown, headers: Record<string, string> = {}) =>
    cp.app.inject({ method: 'POST', url, payload: payload as Record<string, unknown>, headers });

  describe('POST /tokens/user', () => {
    it('answers a text/plain RS256 JWT with kid = key serial, a jti, iat, nbf and exp = now + validFor', async () => {
      const res = await post('/tokens/user', { name: 'alice', groups: ['team-a', 'dev'], validFor: '24h' });
      expect(res.statusCode).toBe(200);
      expect(res.headers['content-type']).toBe('text/plain; charset=utf-8');
      expect(res.headers['cache-control']).toBe('no-store');
      const { header, payload } = decodeJwt(res.body);
      expect(header).toEqual({ alg: 'RS256', typ: 'JWT', kid: '1' });
      expect(payload).toMatchObject({
        name: 'alice',
        groups: ['team-a', 'dev'],
        tokenType: 'user',
        iat: T0 / 1000,
        nbf: T0 / 1000,
        exp: T0 / 1000 + 24 * 3600,
      });
      expect(payload.jti).toMatch(UUID);
      expect(await cp.tokens.verifyUser(res.body)).toEqual({
        name: 'alice',
        groups: ['team-a', 'dev'],
        tokenId: payload.jti,
        expiresAt: new Date(T0 + 24 * 3600_000),
      });
    });

    it('takes PUT as well, and groups default to none', async () => {
      const res = await cp.app.inject({
        method: 'PUT',
        url: '/tokens/user',
        payload: { name: 'bob', validFor: '10m' },
      });
      expect(res.statusCode).toBe(200);
      expect(decodeJwt(res.body).payload).toMatchObject({ name: 'bob', groups: [] });
    });

    it('gives each token its own id', async () => {
      const a = decodeJwt(await issueUserToken(cp.app, { name: 'x' })).payload.jti;
      const b = decodeJwt(await issueUserToken(cp.app, { name: 'x' })).payload.jti;
      expect(a).not.toBe(b);
    });

    it('refuses a bad body with 400 and a cause per field', async () => {
      const res = await post('/tokens/user', { groups: 'admins', validFor: 'forever', colour: 'red' });
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        title: 'Invalid token request',
        details: 'the user token request has invalid fields',
        causes: [
          { field: 'name', message: 'cannot be empty' },
          { field: 'groups', message: 'must be an array' },
          { field: 'validFor', message: 'must be a duration such as 300ms, 5s, 1.5s, 10m, 1h30m' },
          { field: 'colour', message: 'unknown field' },
        ],
      });
    });

    it('refuses a zero validFor, a body that is not an object, bad JSON and other content types', async () => {
      const zero = await post('/tokens/user', { name: 'a', validFor: '0s' });
      expect(zero.statusCode).toBe(400);
      expect(zero.json().causes).toEqual([{ field: 'validFor', message: 'must be longer than 0' }]);

      const array = await cp.app.inject({
        method: 'POST',
        url: '/tokens/user',
        headers: { 'content-type': 'application/json' },
        payload: '[1]',
      });
      expect(array.statusCode).toBe(400);
      expect(array.json().causes).toEqual([{ field: '', message: 'body must be a JSON object' }]);

      // No content type: what a browser form could send (browser-writes.test.ts); an empty JSON body.
      const none = await cp.app.inject({ method: 'POST', url: '/tokens/user' });
      expect(none.statusCode).toBe(415);
      const empty = await cp.app.inject({
        method: 'POST',
        url: '/tokens/user',
        headers: { 'content-type': 'application/json' },
      });
      expect(empty.statusCode).toBe(400);
      expect(empty.json().causes).toEqual([{ field: '', message: 'body must be a JSON object' }]);

      const badJson = await cp.app.inject({
        method: 'POST',
        url: '/tokens/user',
        headers: { 'content-type': 'application/json' },
        payload: '{"name":',
      });
      expect(badJson.statusCode).toBe(400);
      expect(badJson.json().title).toBe('Invalid request body');

      const text = await cp.app.inject({
        method: 'POST',
        url: '/tokens/user',
        headers: { 'content-type': 'text/plain' },
        payload: 'name=a',
      });
      expect(text.statusCode).toBe(415);
    });

    it('is for admins only: 403 for anonymous callers and for non-admin users', async () => {
      const anonymous = await cp.app.inject({
        method: 'POST',
        url: '/tokens/user',
        remoteAddress: REMOTE,
        payload: { name: 'me', groups: ['mesh-system:admin'], validFor: '1h' },
      });
      expect(anonymous.statusCode).toBe(403);
      expect(anonymous.json()).toEqual({
        title: 'Forbidden',
        details: 'anonymous caller (no credentials) may not POST /tokens/user',
      });
      const writer = await issueUserToken(cp.app, { name: 'wendy', groups: ['mesh-system:writer'] });
      const denied = await post('/tokens/user', { name: 'me', validFor: '1h' }, bearer(writer));
      expect(denied.statusCode).toBe(403);
      expect(denied.json().details).toBe(
        'user "wendy" (groups: mesh-system:writer) may not POST /tokens/user',
      );
      const admin = await issueUserToken(cp.app, { name: 'ada', groups: ['mesh-system:admin'] });
      const allowed = await post('/tokens/user', { name: 'me', validFor: '1h' }, bearer(admin));
      expect(allowed.statusCode).toBe(200);
    });
  });

  it('refuses a validFor below one second on every token type: exp is in whole seconds, so it would be expired at once', async () => {
    const bodies = {
      user: { name: 'a' },
      dataplane: { mesh: 'default' },
      zone: { zone: 'z' },
      'zone-ingress': { zone: 'z' },
    };
    for (const [type, body] of Object.entries(bodies)) {
      for (const validFor of ['500ms', '999ms', '0.5s']) {
        const res = await post(`/tokens/${type}`, { ...body, validFor });
        expect(res.statusCode, `${type} ${validFor}: ${res.body}`).toBe(400);
        expect(res.json().causes).toEqual([
          { field: 'validFor', message: 'must be at least 1s (a token expires on a whole second)' },
        ]);
      }
      const second = await post(`/tokens/${type}`, { ...body, validFor: '1s' });
      expect(second.statusCode, second.body).toBe(200);
    }
  });

  describe('POST /tokens/dataplane', () => {
    it('signs with the mesh key and binds name, mesh, tags and type; no validFor means no expiry', async () => {
      const res = await post('/tokens/dataplane', {
        name: 'web-1',
        mesh: 'default',
        tags: { 'mesh.io/service': ['web', 'web-canary'] },
        type: 'dataplane',
      });
      expect(res.statusCode).toBe(200);
      const { header, payload } = decodeJwt(res.body);
      expect(header.kid).toBe('1');
      expect(payload).toMatchObject({
        name: 'web-1',
        mesh: 'default',
        tags: { 'mesh.io/service': ['web', 'web-canary'] },
        type: 'dataplane',
        tokenType: 'dataplane',
      });
      expect(payload.exp).toBeUndefined();
      expect(await cp.tokens.verifyDataplane(res.body)).toEqual({
        tokenId: payload.jti,
        name: 'web-1',
        mesh: 'default',
        tags: { 'mesh.io/service': ['web', 'web-canary'] },
        type: 'dataplane',
      });
    });

    it('takes PUT (the spec request line) and a validFor', async () => {
      const res = await cp.app.inject({
        method: 'PUT',
        url: '/tokens/dataplane',
        payload: { mesh: 'default', type: 'egress', validFor: '1h' },
      });
      expect(res.statusCode).toBe(200);
      expect(decodeJwt(res.body).payload).toMatchObject({ type: 'egress', exp: T0 / 1000 + 3600 });
    });

    it('answers 404 naming the secret when the mesh has no signing key', async () => {
      const res = await post('/tokens/dataplane', { name: 'web-1', mesh: 'nowhere' });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({
        title: 'Signing key not found',
        details:
          'there is no signing key for dataplane tokens: secret "dataplane-token-signing-key-nowhere-1" not found in mesh "nowhere"',
      });
    });

    it('refuses a bad body with causes', async () => {
      const res = await post('/tokens/dataplane', {
        name: 'Web 1',
        tags: { 'mesh.io/service': 'web' },
        type: 'sidecar',
      });
      expect(res.statusCode).toBe(400);
      expect(res.json().causes).toEqual([
        {
          field: 'name',
          message: 'must be 1 to 253 characters of [0-9a-z._-], starting with a letter or digit',
        },
        { field: 'mesh', message: 'cannot be empty' },
        { field: 'tags["mesh.io/service"]', message: 'must be an array' },
        { field: 'type', message: 'must be one of "dataplane", "ingress", "egress"' },
      ]);
    });

    it('refuses a revoked token (mesh secret dataplane-token-revocations-<mesh>)', async () => {
      const token = (await post('/tokens/dataplane', { name: 'web-2', mesh: 'default' })).body;
      const id = String(decodeJwt(token).payload.jti);
      const put = await cp.app.inject({
        method: 'PUT',
        url: '/meshes/default/secrets/dataplane-token-revocations-default',
        payload: {
          type: 'Secret',
          mesh: 'default',
          name: 'dataplane-token-revocations-default',
          data: b64(`other-id, ${id}`),
        },
      });
      expect(put.statusCode).toBe(201);
      await expect(cp.tokens.verifyDataplane(token)).rejects.toThrow(`the token ${id} has been revoked`);
    });
  });

  describe('POST /tokens/zone', () => {
    it('binds the zone and the scope (all scopes by default)', async () => {
      const res = await post('/tokens/zone', { zone: 'east', validFor: '720h' });
      expect(res.statusCode).toBe(200);
      const { header, payload } = decodeJwt(res.body);
      expect(header.kid).toBe('1');
      expect(payload).toMatchObject({ zone: 'east', scope: ['cp', 'egress', 'ingress'], tokenType: 'zone' });
      const scoped = await post('/tokens/zone', { zone: 'west', scope: ['egress'], validFor: '1h' });
      expect(await cp.tokens.verifyZone(scoped.body)).toEqual({
        tokenId: decodeJwt(scoped.body).payload.jti,
        zone: 'west',
        scope: ['egress'],
      });
    });

    it('refuses unknown scopes, an empty scope and a missing zone', async () => {
      const res = await post('/tokens/zone', { scope: ['cp', 'gateway'], validFor: '1h' });
      expect(res.statusCode).toBe(400);
      expect(res.json().causes).toEqual([
        { field: 'zone', message: 'cannot be empty' },
        { field: 'scope[1]', message: 'must be one of "cp", "egress", "ingress"' },
      ]);
      const empty = await post('/tokens/zone', { zone: 'east', scope: [], validFor: '1h' });
      expect(empty.json().causes).toEqual([{ field: 'scope', message: 'must have at least one element' }]);
    });

    it('refuses a token revoked in the global secret zone-token-revocations', async () => {
      const token = (await post('/tokens/zone', { zone: 'east', validFor: '1h' })).body;
      const id = String(decodeJwt(token).payload.jti);
      await cp.app.inject({
        method: 'PUT',
        url: '/global-secrets/zone-token-revocations',
        payload: { type: 'Secret', name: 'zone-token-revocations', data: b64(id) },
      });
      await expect(cp.tokens.verifyZone(token)).rejects.toThrow('has been revoked');
    });
  });

  describe('POST /tokens/zone-ingress', () => {
    it('binds the zone', async () => {
      const res = await post('/tokens/zone-ingress', { zone: 'east', validFor: '1h' });
      expect(res.statusCode).toBe(200);
      expect(decodeJwt(res.body).payload).toMatchObject({ zone: 'east', tokenType: 'zone-ingress' });
      expect((await cp.tokens.verifyZoneIngress(res.body)).zone).toBe('east');
    });

    it('refuses a bad body', async () => {
      const res = await post('/tokens/zone-ingress', { zone: 'east' });
      expect(res.statusCode).toBe(400);
      expect(res.json().causes).toEqual([{ field: 'validFor', message: 'cannot be empty' }]);
    });

    it('answers 404 naming the global secret once its signing key is deleted', async () => {
      const del = await cp.app.inject({
        method: 'DELETE',
        url: '/global-secrets/zone-ingress-token-signing-key-1',
      });
      expect(del.statusCode).toBe(200);
      const res = await post('/tokens/zone-ingress', { zone: 'east', validFor: '1h' });
      expect(res.statusCode).toBe(404);
      expect(res.json().details).toBe(
        'there is no signing key for zone-ingress tokens: global secret "zone-ingress-token-signing-key-1" not found',
      );
    });
  });

  it('refuses a validFor beyond 10 years (huge, overflowing, 400 digits) on every endpoint: 400 naming validFor, not 500', async () => {
    const bodies = {
      '/tokens/user': { name: 'long' },
      '/tokens/dataplane': { mesh: 'default' },
      '/tokens/zone': { zone: 'east' },
      '/tokens/zone-ingress': { zone: 'east' },
    };
    const tooLong = [
      '9999999999999h',
      `${'9'.repeat(400)}h`,
      `${'9'.repeat(400)}.5s`,
      '1000000000h',
      '87601h',
    ];
    for (const [url, body] of Object.entries(bodies)) {
      for (const validFor of tooLong) {
        const res = await post(url, { ...body, validFor });
        expect(res.statusCode, `${url} ${validFor.slice(0, 20)}: ${res.body}`).toBe(400);
        expect(res.json()).toMatchObject({
          title: 'Invalid token request',
          causes: [{ field: 'validFor', message: 'must be at most 87600h (10 years)' }],
        });
      }
      // The limit itself is allowed (T0 + 87600h); zone ingress tokens have no signing key made at start.
      const longest = await post(url, { ...body, validFor: '87600h' });
      if (url === '/tokens/zone-ingress') expect(longest.json().title).toBe('Signing key not found');
      else expect(decodeJwt(longest.body).payload.exp).toBe(T0 / 1000 + 87600 * 3600);
    }
  });

  it('keeps token types apart: a zone token is not a user token', async () => {
    const zoneToken = (await post('/tokens/zone', { zone: 'east', validFor: '1h' })).body;
    const res = await cp.app.inject({ method: 'GET', url: '/meshes', headers: bearer(zoneToken) });
    expect(res.statusCode).toBe(401);
    expect(res.json().details).toBe("the token's signature does not match signing key 1");
  });

  it('returns private signing keys to admins only', async () => {
    const url = '/global-secrets/user-token-signing-key-1';
    const admin = await cp.app.inject({ method: 'GET', url });
    expect(admin.statusCode).toBe(200);
    expect(admin.json().data).toMatch(/^[A-Za-z0-9+/=]{200,}$/);
    const writer = await issueUserToken(cp.app, { name: 'w', groups: ['mesh-system:writer'] });
    for (const headers of [{}, bearer(writer)]) {
      const res = await cp.app.inject({ method: 'GET', url, headers, remoteAddress: REMOTE });
      expect(res.statusCode).toBe(403);
      expect(res.body).not.toContain('data');
      const list = await cp.app.inject({
        method: 'GET',
        url: '/global-secrets',
        headers,
        remoteAddress: REMOTE,
      });
      expect(list.statusCode).toBe(403);
      const meshKeys = await cp.app.inject({
        method: 'GET',
        url: '/secrets',
        headers,
        remoteAddress: REMOTE,
      });
      expect(meshKeys.statusCode).toBe(403);
    }
  });
});

describe('signing keys at first start', () => {
  it('are generated once start-up is over (the HTTP port listens first), and then exist', async () => {
    const events: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        for (const line of chunk.toString().split('\n').filter(Boolean))
          events.push((JSON.parse(line) as { msg: string }).msg);
        done();
      },
    });
    const keygen = async (): Promise<string> => {
      events.push('keygen');
      return testKeygen();
    };
    const cp = await startPlane(
      testConfig({
        MESH_API_SERVER_PORT: '0',
        MESH_API_SERVER_HTTPS_ENABLED: 'false',
        MESH_DIAGNOSTICS_PORT: '0',
        MESH_XDS_SERVER_GRPC_PORT: '0',
      }),
      { logger: createLogger('info', sink), keygen },
    );
    try {
      await cp.defaultsReady;
      const listening = events.findIndex((m) => m.startsWith('Server listening at'));
      expect(listening).toBeGreaterThanOrEqual(0);
      expect(events.indexOf('keygen')).toBeGreaterThan(listening);
      expect(events.filter((m) => m === 'keygen')).toHaveLength(4);
      for (const url of [
        '/global-secrets/user-token-signing-key-1',
        '/global-secrets/zone-token-signing-key-1',
        '/global-secrets/zone-ingress-token-signing-key-1',
        '/meshes/default/secrets/dataplane-token-signing-key-default-1',
      ])
        expect((await cp.app.inject({ url })).statusCode, url).toBe(200);
    } finally {
      await cp.close();
    }
  });
});

describe('signing keys at a restart', () => {
  /** A control plane on the LevelDB data dir `path` (a new one each call: a real restart). */
  const start = async (path: string): Promise<ControlPlane> => {
    const cp = await startPlane(testConfig({ MESH_STORE_TYPE: 'level', MESH_STORE_LEVEL_PATH: path }), {
      listen: false,
    });
    await cp.defaultsReady;
    return cp;
  };
  const keyUrls = {
    user: '/global-secrets/user-token-signing-key',
    zone: '/global-secrets/zone-token-signing-key',
    'zone-ingress': '/global-secrets/zone-ingress-token-signing-key',
    dataplane: '/meshes/default/secrets/dataplane-token-signing-key-default',
  };

  it('keeps a retired key 1 retired: a default key is made only when no key of its type exists', async () => {
    const dir = tempDir('signing-keys-');
    const data = join(dir.path, 'data');
    try {
      const first = await start(data);
      // The data dir holds the keys: it is made readable by its owner only.
      expect(statSync(data).mode & 0o777).toBe(0o700);
      // Every type's key 1 is rotated out: key 2 added, key 1 deleted (docs/security.md), except
      // the zone-ingress keys, which are all deleted.
      for (const [type, url] of Object.entries(keyUrls)) {
        const secret = (n: number) => ({
          type: 'Secret',
          ...(type === 'dataplane' ? { mesh: 'default' } : {}),
          name: `${url.slice(url.lastIndexOf('/') + 1)}-${n}`,
        });
        if (type !== 'zone-ingress') {
          const added = await first.app.inject({
            method: 'PUT',
            url: `${url}-2`,
            payload: { ...secret(2), data: await generateSigningKey() },
          });
          expect(added.statusCode, url).toBe(201);
        }
        expect((await first.app.inject({ method: 'DELETE', url: `${url}-1` })).statusCode, url).toBe(200);
      }
      await first.close();

      const second = await start(data);
      try {
        for (const [type, url] of Object.entries(keyUrls)) {
          const one = await second.app.inject({ url: `${url}-1` });
          // Key 1 again only where no key of the type was left.
          expect(one.statusCode, `${url}-1 after the restart`).toBe(type === 'zone-ingress' ? 200 : 404);
          if (type !== 'zone-ingress')
            expect((await second.app.inject({ url: `${url}-2` })).statusCode).toBe(200);
        }
        // Tokens are signed with key 2, the one left.
        const token = await second.app.inject({
          method: 'POST',
          url: '/tokens/user',
          payload: { name: 'a', validFor: '1h' },
        });
        expect(token.statusCode, token.body).toBe(200);
        expect(decodeJwt(token.body).header.kid).toBe('2');
      } finally {
        await second.close();
      }
    } finally {
      dir.cleanup();
    }
  });

  it('gives a new mesh no key 1 when a key of its mesh was written before it', async () => {
    const cp = await startPlane(testConfig(), { listen: false });
    try {
      await cp.defaultsReady;
      const name = 'dataplane-token-signing-key-early-2';
      const early = await cp.app.inject({
        method: 'PUT',
        url: `/meshes/early/secrets/${name}`,
        payload: { type: 'Secret', mesh: 'early', name, data: await generateSigningKey() },
      });
      expect(early.statusCode).toBe(201);
      expect(
        (
          await cp.app.inject({
            method: 'PUT',
            url: '/meshes/early',
            payload: { type: 'Mesh', name: 'early' },
          })
        ).statusCode,
      ).toBe(201);
      const one = await cp.app.inject({ url: '/meshes/early/secrets/dataplane-token-signing-key-early-1' });
      expect(one.statusCode).toBe(404);
      const fresh = await cp.app.inject({
        method: 'PUT',
        url: '/meshes/fresh',
        payload: { type: 'Mesh', name: 'fresh' },
      });
      expect(fresh.statusCode).toBe(201);
      const freshKey = await cp.app.inject({
        url: '/meshes/fresh/secrets/dataplane-token-signing-key-fresh-1',
      });
      expect(freshKey.statusCode).toBe(200);
    } finally {
      await cp.close();
    }
  });
});
