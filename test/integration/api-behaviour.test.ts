import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { registry } from '../../src/resources/registry.js';
import { startTestPlane } from '../helpers/control-plane.js';

const zone = (name: string, enabled = true) => ({ type: 'Zone', name, enabled });

describe('read-only flag and kubernetes environment (decisions §4: 405 with a reason)', () => {
  it('apiServer.readOnly refuses writes, says why, and marks every policy read-only', async () => {
    const cp = await startTestPlane({ MESH_API_SERVER_READ_ONLY: 'true' });
    try {
      const put = await cp.app.inject({ method: 'PUT', url: '/zones/z', payload: zone('z') });
      expect(put.statusCode).toBe(405);
      expect(put.json().details).toContain('apiServer.readOnly');
      const del = await cp.app.inject({ method: 'DELETE', url: '/meshes/default' });
      expect(del.statusCode).toBe(405);
      const policies = (await cp.app.inject({ method: 'GET', url: '/policies' })).json().policies as Array<{
        readOnly: boolean;
      }>;
      expect(policies.every((p) => p.readOnly)).toBe(true);
      expect((await cp.app.inject({ method: 'GET', url: '/meshes/default' })).statusCode).toBe(200);
    } finally {
      await cp.close();
    }
  });

  it('environment kubernetes refuses every PUT and DELETE', async () => {
    const cp = await startTestPlane({ MESH_ENVIRONMENT: 'kubernetes' });
    try {
      const put = await cp.app.inject({
        method: 'PUT',
        url: '/meshes/default/secrets/s',
        payload: { type: 'Secret', mesh: 'default', name: 's', data: 'YQ==' },
      });
      expect(put.statusCode).toBe(405);
      expect(put.json().details).toContain('kubernetes');
    } finally {
      await cp.close();
    }
  });
});

describe('body limit', () => {
  it('413 names the configured limit', async () => {
    const cp = await startTestPlane({ MESH_API_SERVER_BODY_LIMIT: '200' });
    try {
      const res = await cp.app.inject({
        method: 'PUT',
        url: '/zones/z',
        payload: { type: 'Zone', name: 'z', enabled: true, pad: 'x'.repeat(300) },
      });
      expect(res.statusCode).toBe(413);
      expect(res.json().details).toBe(
        'request body is larger than the limit of 200 bytes (apiServer.bodyLimit)',
      );
    } finally {
      await cp.close();
    }
  });
});

describe('HTTP behaviour', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane({ MESH_API_SERVER_CORS_ALLOWED_DOMAINS: 'https://gui\\.example\\.com' });
  });
  afterAll(() => cp.close());

  it('start-up creates the default mesh, its defaults and the global signing keys', async () => {
    const meshes = (await cp.app.inject({ method: 'GET', url: '/meshes' })).json();
    expect(meshes.items.map((m: { name: string }) => m.name)).toEqual(['default']);
    const secrets = (await cp.app.inject({ method: 'GET', url: '/global-secrets' })).json();
    expect(secrets.items.map((s: { name: string }) => s.name)).toEqual([
      'user-token-signing-key-1',
      'zone-ingress-token-signing-key-1',
      'zone-token-signing-key-1',
    ]);
    const key = (
      await cp.app.inject({
        method: 'GET',
        url: '/meshes/default/secrets/dataplane-token-signing-key-default-1',
      })
    ).json();
    expect(Buffer.from(key.data, 'base64').toString()).toContain('BEGIN RSA PRIVATE KEY');
  });

  it('GET of one resource has ETag and x-mesh-revision; PUT answers the new revision', async () => {
    const created = await cp.app.inject({ method: 'PUT', url: '/zones/a', payload: zone('a') });
    expect(created.statusCode).toBe(201);
    const rev = Number(JSON.parse(created.headers.etag as string));
    expect(created.headers['x-mesh-revision']).toBe(String(rev));
    const got = await cp.app.inject({ method: 'GET', url: '/zones/a' });
    expect(got.headers.etag).toBe(`"${rev}"`);
    expect(Number(got.headers['x-mesh-revision'])).toBeGreaterThanOrEqual(rev);
    const updated = await cp.app.inject({
      method: 'PUT',
      url: '/zones/a',
      payload: zone('a', false),
      headers: { 'if-match': `"${rev}"` },
    });
    expect(updated.statusCode).toBe(200);
    expect(updated.json().enabled).toBe(false);
    const stale = await cp.app.inject({
      method: 'PUT',
      url: '/zones/a',
      payload: zone('a', true),
      headers: { 'if-match': `"${rev}"` },
    });
    expect(stale.statusCode).toBe(412);
  });

  it('two racing writers with the same If-Match: exactly one wins', async () => {
    const rev = (await cp.app.inject({ method: 'PUT', url: '/zones/race', payload: zone('race') })).headers
      .etag as string;
    const results = await Promise.all(
      [1, 2, 3, 4].map(() =>
        cp.app.inject({
          method: 'PUT',
          url: '/zones/race',
          payload: zone('race', false),
          headers: { 'if-match': rev },
        }),
      ),
    );
    const codes = results.map((r) => r.statusCode).sort();
    expect(codes.filter((c) => c === 200)).toHaveLength(1);
    expect(codes.filter((c) => c === 412)).toHaveLength(3);
  });

  it('a false or 0 the user wrote is echoed back', async () => {
    const res = await cp.app.inject({ method: 'PUT', url: '/zones/f', payload: zone('f', false) });
    expect(res.json().enabled).toBe(false);
  });

  it('dryRun validates and answers like the write, but writes nothing', async () => {
    const before = (await cp.app.inject({ method: 'GET', url: '/zones' })).headers['x-mesh-revision'];
    const dry = await cp.app.inject({ method: 'PUT', url: '/zones/dry?dryRun=true', payload: zone('dry') });
    expect(dry.statusCode).toBe(201);
    expect((await cp.app.inject({ method: 'GET', url: '/zones/dry' })).statusCode).toBe(404);
    const bad = await cp.app.inject({
      method: 'PUT',
      url: '/zones/dry?dryRun=true',
      payload: { type: 'Zone', name: 'dry', enabled: 'yes' },
    });
    expect(bad.statusCode).toBe(400);
    const delDry = await cp.app.inject({ method: 'DELETE', url: '/zones/a?dryRun=true' });
    expect(delDry.statusCode).toBe(200);
    expect((await cp.app.inject({ method: 'GET', url: '/zones/a' })).statusCode).toBe(200);
    expect((await cp.app.inject({ method: 'GET', url: '/zones' })).headers['x-mesh-revision']).toBe(before);
    expect(
      (await cp.app.inject({ method: 'PUT', url: '/zones/dry?dryRun=maybe', payload: zone('dry') }))
        .statusCode,
    ).toBe(400);
  });

  it('accepts application/json with a charset, refuses text/plain with 415', async () => {
    const ok = await cp.app.inject({
      method: 'PUT',
      url: '/zones/cs',
      payload: JSON.stringify(zone('cs')),
      headers: { 'content-type': 'application/json; charset=utf-8' },
    });
    expect(ok.statusCode).toBe(201);
    const bad = await cp.app.inject({
      method: 'PUT',
      url: '/zones/cs',
      payload: 'x',
      headers: { 'content-type': 'text/plain' },
    });
    expect(bad.statusCode).toBe(415);
    expect(bad.json().title).toBeTruthy();
  });

  it('ignores unknown query parameters, even size/offset on single GETs', async () => {
    expect(
      (await cp.app.inject({ method: 'GET', url: '/meshes/default?size=5&offset=2&foo=bar' })).statusCode,
    ).toBe(200);
  });

  it('request ids: generated, or taken from a well-formed x-request-id', async () => {
    const gen = await cp.app.inject({ method: 'GET', url: '/meshes' });
    expect(gen.headers['x-request-id']).toMatch(/^[0-9a-f-]{36}$/);
    const mine = await cp.app.inject({
      method: 'GET',
      url: '/meshes',
      headers: { 'x-request-id': 'trace-42' },
    });
    expect(mine.headers['x-request-id']).toBe('trace-42');
    const err = await cp.app.inject({ method: 'GET', url: '/nope', headers: { 'x-request-id': 'trace-43' } });
    expect(err.headers['x-request-id']).toBe('trace-43');
  });

  it('CORS allows only the configured origins', async () => {
    const ok = await cp.app.inject({
      method: 'GET',
      url: '/meshes',
      headers: { origin: 'https://gui.example.com' },
    });
    expect(ok.headers['access-control-allow-origin']).toBe('https://gui.example.com');
    const no = await cp.app.inject({
      method: 'GET',
      url: '/meshes',
      headers: { origin: 'https://evil.example.com' },
    });
    expect(no.headers['access-control-allow-origin']).toBeUndefined();
    const pre = await cp.app.inject({
      method: 'OPTIONS',
      url: '/meshes/default',
      headers: { origin: 'https://gui.example.com', 'access-control-request-method': 'PUT' },
    });
    expect(pre.statusCode).toBe(204);
  });

  it('insights follow writes at once: MeshInsight counts a new data plane and policy', async () => {
    const before = (await cp.app.inject({ method: 'GET', url: '/mesh-insights/default' })).json();
    await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/dataplanes/ins-1',
      payload: {
        type: 'Dataplane',
        mesh: 'default',
        name: 'ins-1',
        networking: { address: '10.0.0.2', inbound: [{ port: 80, tags: { 'mesh.io/service': 'ins' } }] },
      },
    });
    const after = (await cp.app.inject({ method: 'GET', url: '/mesh-insights/default' })).json();
    expect(after.dataplanes.total).toBe((before.dataplanes?.total ?? 0) + 1);
    expect(after.dataplanes.offline).toBe((before.dataplanes?.offline ?? 0) + 1);
    expect(after.services.internal).toBe(before.services.internal + 1);
    const svc = (await cp.app.inject({ method: 'GET', url: '/meshes/default/service-insights/ins' })).json();
    expect(svc).toMatchObject({ status: 'offline', dataplanes: { total: 1, online: 0, offline: 1 } });
    const gi = (await cp.app.inject({ method: 'GET', url: '/global-insights' })).json();
    expect(gi.resources.Mesh.total).toBe(1);
  });

  it('deleting a mesh removes everything in it, so it can be made again with fresh defaults', async () => {
    await cp.app.inject({ method: 'PUT', url: '/meshes/tmp', payload: { type: 'Mesh', name: 'tmp' } });
    await cp.app.inject({
      method: 'PUT',
      url: '/meshes/tmp/secrets/s',
      payload: { type: 'Secret', mesh: 'tmp', name: 's', data: 'YQ==' },
    });
    expect((await cp.app.inject({ method: 'GET', url: '/meshes/tmp/timeouts' })).json().total).toBe(1);
    expect((await cp.app.inject({ method: 'DELETE', url: '/meshes/tmp' })).statusCode).toBe(200);
    expect((await cp.app.inject({ method: 'GET', url: '/meshes/tmp/timeouts' })).json().total).toBe(0);
    expect((await cp.app.inject({ method: 'GET', url: '/meshes/tmp/secrets/s' })).statusCode).toBe(404);
    expect((await cp.app.inject({ method: 'GET', url: '/mesh-insights/tmp' })).statusCode).toBe(404);
    expect(
      (await cp.app.inject({ method: 'PUT', url: '/meshes/tmp', payload: { type: 'Mesh', name: 'tmp' } }))
        .statusCode,
    ).toBe(201);
    expect((await cp.app.inject({ method: 'GET', url: '/meshes/tmp/timeouts' })).json().total).toBe(1);
  });
});

describe('resource URLs (parametric routes over the registry)', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane();
  });
  afterAll(async () => {
    await cp.close();
  });
  const get = (url: string) => cp.app.inject({ method: 'GET', url });

  it('serves a list at every collection segment and alias of every kind, and the singletons', async () => {
    for (const d of registry.all) {
      const segs = d.singleton ? [d.path] : [d.path, ...d.aliases];
      for (const seg of segs) {
        const url = d.singleton || d.scope !== 'mesh' ? `/${seg}` : `/meshes/default/${seg}`;
        const res = await get(url);
        expect(res.statusCode, `${d.kind} ${url}: ${res.body}`).toBe(200);
        if (!d.singleton) expect(res.json()).toHaveProperty('items');
        if (d.scope === 'mesh' && d.crossMeshList) expect((await get(`/${seg}`)).statusCode).toBe(200);
      }
    }
  });

  it('answers a segment that names no kind like any unknown path, before reading the body', async () => {
    const cases: Array<[string, string]> = [
      ['GET', '/meshes/default/no-such-kind'],
      ['GET', '/no-such-kind/x'],
      ['DELETE', '/meshes/default/no-such-kind/x'],
      ['GET', '/meshes/default/no-such-kind/x/_history'],
    ];
    for (const [method, url] of cases) {
      const res = await cp.app.inject({ method: method as 'GET', url: `${url}?size=2` });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ title: 'Not found', details: `no such endpoint: ${method} ${url}` });
    }
    // A malformed body on an unknown path is still a 404, as before the body was read.
    const bad = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/no-such-kind/x',
      headers: { 'content-type': 'application/json' },
      payload: '{not json',
    });
    expect(bad.statusCode).toBe(404);
  });

  it('reads item-only aliases but does not write through them; mesh-scoped kinds are not at the root', async () => {
    const withItemAlias = registry.all.find((d) => d.itemAliases.length > 0);
    expect(withItemAlias).toBeDefined();
    const d = withItemAlias as (typeof registry.all)[number];
    const prefix = d.scope === 'mesh' ? '/meshes/default/' : '/';
    const read = await get(`${prefix}${d.itemAliases[0]}/x`);
    expect(read.statusCode).toBe(404);
    expect(read.json().details).toContain('"x" not found');
    const write = await cp.app.inject({ method: 'DELETE', url: `${prefix}${d.itemAliases[0]}/x` });
    // The path exists for reads: 405 with what it supports, not "no such endpoint".
    expect(write.statusCode).toBe(405);
    expect(write.headers.allow).toBe('GET, HEAD');
    expect(write.json().details).toBe(
      `DELETE is not supported on ${prefix}${d.itemAliases[0]}/x; it supports GET, HEAD`,
    );
    // A mesh-scoped kind has no item URL at the root, and a global kind none under a mesh.
    expect((await get('/traffic-permissions/x')).json().details).toMatch(/^no such endpoint/);
    expect((await get('/meshes/default/zones/x')).json().details).toMatch(/^no such endpoint/);
  });

  it("serves a mesh's own history beside the lists under that mesh", async () => {
    const res = await get('/meshes/default/_history');
    expect(res.statusCode).toBe(200);
    expect(res.json().items[0]).toMatchObject({ operation: 'create' });
  });
});

describe('HEAD (RFC 9110: the headers GET would send, no body)', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane();
  });
  afterAll(() => cp.close());

  it.each([
    '/',
    '/config',
    '/meshes',
    '/meshes/default',
    '/meshes/default/traffic-permissions',
    '/meshes/default/traffic-permissions?size=1',
    '/meshes/default/dataplanes+insights',
    '/meshes/default/_history',
    '/global-insights',
  ])('HEAD %s: status and headers of the GET, empty body', async (url) => {
    const get = await cp.app.inject({ method: 'GET', url });
    const head = await cp.app.inject({ method: 'HEAD', url });
    expect(get.statusCode).toBe(200);
    expect(head.statusCode).toBe(200);
    expect(head.body).toBe('');
    expect(head.headers['content-length']).toBe(get.headers['content-length']);
    expect(head.headers['content-type']).toBe(get.headers['content-type']);
    expect(head.headers.etag).toBe(get.headers.etag);
  });

  it('HEAD of what GET does not find is the same 404', async () => {
    for (const url of ['/meshes/default/traffic-permissions/nope', '/meshes/default/no-such-kind', '/nope']) {
      const get = await cp.app.inject({ method: 'GET', url });
      const head = await cp.app.inject({ method: 'HEAD', url });
      expect([get.statusCode, head.statusCode]).toEqual([404, 404]);
      expect(head.body).toBe('');
    }
  });

  it('HEAD /_events is 405 with Allow: GET (GET may stream)', async () => {
    const head = await cp.app.inject({ method: 'HEAD', url: '/_events' });
    expect(head.statusCode).toBe(405);
    expect(head.headers.allow).toBe('GET');
  });
});
