import { request as httpsRequest } from 'node:https';
import { brotliDecompressSync } from 'node:zlib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { bearer, issueUserToken, REMOTE } from '../helpers/auth.js';
import { startHttpsPlane, startTestPlane, tempDir } from '../helpers/control-plane.js';

// How the control plane serves its web GUI (`/gui`): files, headers, deep links, the config key,
// who may fetch it, and `/_identity`, which the GUI asks to offer only what its caller may do.

const scriptOf = (html: string): string => {
  const m = /<script type="module" src="(\/gui\/assets\/app-[A-Z0-9]+\.js)"><\/script>/.exec(html);
  expect(m, html).not.toBeNull();
  return (m as RegExpExecArray)[1];
};

describe('GET /gui', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane();
  });
  afterAll(() => cp.close());

  it('serves the page with a strict content policy, never cached, and its hashed files cached for a year', async () => {
    const page = await cp.app.inject({ method: 'GET', url: '/gui' });
    expect(page.statusCode).toBe(200);
    expect(page.headers['content-type']).toBe('text/html; charset=utf-8');
    expect(page.headers['cache-control']).toBe('no-cache');
    const csp = String(page.headers['content-security-policy']);
    // No inline script, nothing from another origin, no framing.
    expect(csp).toContain("default-src 'none'");
    expect(csp).toContain("script-src 'self'");
    expect(csp).toContain("connect-src 'self'");
    expect(csp).toContain("frame-ancestors 'none'");
    expect(csp).not.toContain('unsafe');
    expect(page.headers['x-frame-options']).toBe('DENY');
    expect(page.headers['x-content-type-options']).toBe('nosniff');
    expect(page.body).not.toMatch(/<script(?![^>]*\ssrc=)/);

    const script = await cp.app.inject({ method: 'GET', url: scriptOf(page.body) });
    expect(script.statusCode).toBe(200);
    expect(script.headers['content-type']).toMatch(/^(text|application)\/javascript/);
    expect(script.headers['cache-control']).toBe('public, max-age=31536000, immutable');
    expect(script.headers['content-security-policy']).toBe(csp);
  });

  it('sends the pre-compressed file to a client that takes brotli, under the 250 KB budget', async () => {
    const page = await cp.app.inject({ method: 'GET', url: '/gui' });
    const url = scriptOf(page.body);
    const plain = await cp.app.inject({ method: 'GET', url });
    const br = await cp.app.inject({ method: 'GET', url, headers: { 'accept-encoding': 'br' } });
    expect(br.headers['content-encoding']).toBe('br');
    expect(brotliDecompressSync(br.rawPayload).toString()).toBe(plain.body);
    expect(br.rawPayload.length).toBeLessThan(250 * 1024);
  });

  it('answers every view path (a deep link, a reload) with the page, and a missing file with 404', async () => {
    for (const url of ['/gui/', '/gui/meshes/default/dataplanes/web-1', '/gui/audit?kind=Mesh']) {
      const res = await cp.app.inject({ method: 'GET', url });
      expect(res.statusCode, url).toBe(200);
      expect(res.body, url).toContain('<div id="app">');
    }
    const missing = await cp.app.inject({ method: 'GET', url: '/gui/assets/no-such-file.js' });
    expect(missing.statusCode).toBe(404);
    const escape = await cp.app.inject({ method: 'GET', url: '/gui/assets/..%2f..%2fpackage.json' });
    // No file outside the GUI's folder, whatever the path says.
    expect([400, 403, 404]).toContain(escape.statusCode);
    expect(escape.body).not.toContain('"name": "mesh-cp"');
  });

  it('/_identity says who the caller is: the loopback admin, a user and its roles, anonymous', async () => {
    const admin = await cp.app.inject({ method: 'GET', url: '/_identity' });
    expect(admin.json()).toEqual({
      name: 'admin',
      groups: ['mesh-system:admin'],
      via: 'loopback',
      grants: [{ role: 'admin' }],
    });
    const token = await issueUserToken(cp.app, { name: 'rita', groups: ['mesh-system:reader'] });
    const reader = await cp.app.inject({
      method: 'GET',
      url: '/_identity',
      headers: bearer(token),
      remoteAddress: REMOTE,
    });
    expect(reader.json()).toMatchObject({
      name: 'rita',
      via: 'token',
      grants: [{ role: 'reader' }, { role: 'reader' }],
    });
    expect(reader.headers['cache-control']).toBe('no-store');
    const anonymous = await cp.app.inject({ method: 'GET', url: '/_identity', remoteAddress: REMOTE });
    expect(anonymous.json()).toMatchObject({ via: 'anonymous', grants: [{ role: 'reader' }] });
  });

  it('lets no web page of another origin be admin through the GUI: the API refuses its writes', async () => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/evil',
      headers: { origin: 'http://evil.example', 'content-type': 'application/json' },
      payload: { type: 'Mesh', name: 'evil' },
    });
    expect(res.statusCode).toBe(403);
    // The GUI's own origin (the same as the API's) stays admin from loopback.
    const own = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/own?dryRun=true',
      headers: { origin: 'http://localhost:80', host: 'localhost:80', 'content-type': 'application/json' },
      payload: { type: 'Mesh', name: 'own' },
    });
    expect(own.statusCode, own.body).toBe(201);
  });
});

describe('who may fetch the GUI, and the config key', () => {
  it('serves the page to a caller refused everything else, so that it can sign in', async () => {
    const cp = await startTestPlane({ MESH_API_SERVER_AUTHZ_ANONYMOUS: 'none' });
    try {
      const page = await cp.app.inject({ method: 'GET', url: '/gui', remoteAddress: REMOTE });
      expect(page.statusCode).toBe(200);
      const asset = await cp.app.inject({ method: 'GET', url: scriptOf(page.body), remoteAddress: REMOTE });
      expect(asset.statusCode).toBe(200);
      const me = await cp.app.inject({ method: 'GET', url: '/_identity', remoteAddress: REMOTE });
      expect(me.json()).toMatchObject({ via: 'anonymous', grants: [{ role: 'none' }] });
      const data = await cp.app.inject({ method: 'GET', url: '/meshes', remoteAddress: REMOTE });
      expect(data.statusCode).toBe(403);
    } finally {
      await cp.close();
    }
  });

  it('/_identity names the meshes a grant is limited to', async () => {
    const cp = await startTestPlane({
      MESH_API_SERVER_AUTHZ_GROUPS: JSON.stringify({ 'team-a': { role: 'writer', meshes: ['a'] } }),
    });
    try {
      const token = await issueUserToken(cp.app, { name: 'ann', groups: ['team-a'] });
      const me = await cp.app.inject({
        method: 'GET',
        url: '/_identity',
        headers: bearer(token),
        remoteAddress: REMOTE,
      });
      expect(me.json()).toMatchObject({
        name: 'ann',
        groups: ['team-a'],
        via: 'token',
        grants: [{ role: 'reader' }, { role: 'writer', meshes: ['a'] }],
      });
      expect(me.json().expiresAt).toMatch(/^\d{4}-\d\d-\d\dT/);
    } finally {
      await cp.close();
    }
  });

  it('is off with apiServer.gui.enabled=false', async () => {
    const cp = await startTestPlane({ MESH_API_SERVER_GUI_ENABLED: 'false' });
    try {
      for (const url of ['/gui', '/gui/meshes']) {
        expect((await cp.app.inject({ method: 'GET', url })).statusCode, url).toBe(404);
      }
    } finally {
      await cp.close();
    }
  });

  it('is served by a read-only control plane and by a Global', async () => {
    for (const env of [{ MESH_API_SERVER_READ_ONLY: 'true' }, { MESH_MODE: 'global' }] as Array<
      Record<string, string>
    >) {
      const dir = tempDir();
      const cp = await startTestPlane({ ...env, MESH_STORE_TYPE: 'level', MESH_STORE_LEVEL_PATH: dir.path });
      try {
        const res = await cp.app.inject({ method: 'GET', url: '/gui/meshes' });
        expect(res.statusCode, JSON.stringify(env)).toBe(200);
        expect(res.body).toContain('<div id="app">');
      } finally {
        await cp.close();
        dir.cleanup();
      }
    }
  });

  it('is served on the HTTPS port too', async () => {
    const dir = tempDir();
    const cp = await startHttpsPlane(dir.path);
    try {
      const { status, body } = await new Promise<{ status: number; body: string }>((resolve, reject) => {
        const req = httpsRequest(
          { host: '127.0.0.1', port: cp.ports.https, path: '/gui', rejectUnauthorized: false },
          (res) => {
            let text = '';
            res.on('data', (c: Buffer) => (text += c.toString()));
            res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
          },
        );
        req.on('error', reject);
        req.end();
      });
      expect(status).toBe(200);
      expect(body).toContain('<div id="app">');
    } finally {
      await cp.close();
      dir.cleanup();
    }
  });
});
