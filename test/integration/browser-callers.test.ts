import { request } from 'node:http';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { bearer, issueUserToken } from '../helpers/auth.js';
import { startListeningPlane, startTestPlane } from '../helpers/control-plane.js';
import { tp } from '../helpers/multizone.js';

const SIGNING_KEY = '/global-secrets/user-token-signing-key-1';
const EVIL = 'https://evil.example';

/** A request on a real port from 127.0.0.1 with the given headers (Host included: what a browser sends). */
function raw(
  port: number,
  method: string,
  path: string,
  headers: Record<string, string>,
  body?: string,
): Promise<{ status: number; headers: Record<string, unknown>; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (c: string) => (text += c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, headers: res.headers, body: text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

describe('a web page on the control plane host is not admin', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane();
  });
  afterAll(async () => {
    await cp.close();
  });

  it('by default no cross-origin caller is allowed: the preflight gets no allow-origin', async () => {
    const pre = await cp.app.inject({
      method: 'OPTIONS',
      url: SIGNING_KEY,
      headers: { origin: EVIL, 'access-control-request-method': 'GET' },
    });
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    expect(pre.statusCode).toBe(403);
    expect(pre.json()).toEqual({
      title: 'Forbidden',
      details:
        'origin "https://evil.example" may not call this API from a browser: list it in apiServer.corsAllowedDomains',
    });
    const put = await cp.app.inject({
      method: 'OPTIONS',
      url: '/meshes/default/traffic-permissions/x',
      headers: { origin: EVIL, 'access-control-request-method': 'PUT' },
    });
    expect(put.headers['access-control-allow-origin']).toBeUndefined();
  });

  it('a loopback request carrying a foreign Origin is anonymous: no secret, no write', async () => {
    const read = await cp.app.inject({ method: 'GET', url: SIGNING_KEY, headers: { origin: EVIL } });
    expect(read.statusCode).toBe(403);
    expect(read.body).not.toContain('"data"');
    const write = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/traffic-permissions/from-page',
      headers: { origin: EVIL },
      payload: tp('from-page'),
    });
    expect(write.statusCode).toBe(403);
    const origNull = await cp.app.inject({ method: 'GET', url: SIGNING_KEY, headers: { origin: 'null' } });
    expect(origNull.statusCode).toBe(403);
  });

  it('a loopback request whose Host does not name the control plane (DNS rebinding) is anonymous', async () => {
    for (const host of ['evil.example', 'evil.example:5681', '10.1.2.3:5681', 'localhost.evil.example']) {
      const read = await cp.app.inject({ method: 'GET', url: SIGNING_KEY, headers: { host } });
      expect(read.statusCode, host).toBe(403);
      const write = await cp.app.inject({
        method: 'PUT',
        url: '/meshes/default/traffic-permissions/rebound',
        headers: { host },
        payload: tp('rebound'),
      });
      expect(write.statusCode, host).toBe(403);
    }
    const gone = await cp.app.inject({ method: 'GET', url: '/meshes/default/traffic-permissions/rebound' });
    expect(gone.statusCode).toBe(404);
  });

  it('loopback names and addresses, and the same origin, stay admin', async () => {
    for (const host of [
      'localhost',
      'localhost:5681',
      '127.0.0.1:5681',
      '[::1]:5681',
      'app.localhost',
      'LOCALHOST.',
    ]) {
      const read = await cp.app.inject({ method: 'GET', url: SIGNING_KEY, headers: { host } });
      expect(read.statusCode, host).toBe(200);
    }
    const same = await cp.app.inject({
      method: 'GET',
      url: SIGNING_KEY,
      headers: { host: 'localhost:5681', origin: 'http://localhost:5681' },
    });
    expect(same.statusCode).toBe(200);
  });

  it('a token works from any Origin and Host', async () => {
    const token = await issueUserToken(cp.app, { name: 'ops', groups: ['mesh-system:admin'] });
    const res = await cp.app.inject({
      method: 'GET',
      url: SIGNING_KEY,
      headers: { origin: EVIL, host: 'evil.example', ...bearer(token) },
    });
    expect(res.statusCode).toBe(200);
  });
});

describe('the operator lists the GUI origin and extra host names', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane({
      MESH_API_SERVER_CORS_ALLOWED_DOMAINS: 'https://gui\\.example\\.com',
      MESH_API_SERVER_ALLOWED_HOSTS: 'cp.internal,.mesh.example.com',
    });
  });
  afterAll(async () => {
    await cp.close();
  });

  it('a listed origin is allowed cross-origin and keeps loopback admin', async () => {
    const pre = await cp.app.inject({
      method: 'OPTIONS',
      url: '/meshes/default',
      headers: { origin: 'https://gui.example.com', 'access-control-request-method': 'PUT' },
    });
    expect(pre.headers['access-control-allow-origin']).toBe('https://gui.example.com');
    const read = await cp.app.inject({
      method: 'GET',
      url: SIGNING_KEY,
      headers: { origin: 'https://gui.example.com' },
    });
    expect(read.statusCode).toBe(200);
    expect(read.headers['access-control-allow-origin']).toBe('https://gui.example.com');
    const other = await cp.app.inject({ method: 'GET', url: SIGNING_KEY, headers: { origin: EVIL } });
    expect(other.statusCode).toBe(403);
  });

  it('allowedHosts names are trusted, exactly or as subdomains', async () => {
    for (const [host, status] of [
      ['cp.internal:5681', 200],
      ['a.mesh.example.com', 200],
      ['mesh.example.com', 200],
      ['cp.internal.evil.example', 403],
      ['xmesh.example.com', 403],
    ] as const) {
      const res = await cp.app.inject({ method: 'GET', url: SIGNING_KEY, headers: { host } });
      expect(res.statusCode, host).toBe(status);
    }
  });
});

describe('browser callers and next links on a real port', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startListeningPlane();
    for (const name of ['a', 'b', 'c']) {
      const res = await cp.app.inject({
        method: 'PUT',
        url: `/meshes/default/traffic-permissions/${name}`,
        payload: tp(name),
      });
      expect(res.statusCode).toBeLessThan(300);
    }
  });
  afterAll(async () => {
    await cp.close();
  });

  it('a rebound name and a foreign page are anonymous; curl from loopback is admin', async () => {
    const port = cp.ports.api;
    expect((await raw(port, 'GET', SIGNING_KEY, { host: 'rebind.evil.example' })).status).toBe(403);
    expect((await raw(port, 'GET', SIGNING_KEY, { origin: EVIL })).status).toBe(403);
    const pre = await raw(port, 'OPTIONS', SIGNING_KEY, {
      origin: EVIL,
      'access-control-request-method': 'GET',
    });
    expect(pre.headers['access-control-allow-origin']).toBeUndefined();
    expect(pre.status).toBe(403);
    const put = await raw(
      port,
      'PUT',
      '/meshes/default/traffic-permissions/d',
      { host: 'rebind.evil.example', 'content-type': 'application/json' },
      JSON.stringify(tp('d')),
    );
    expect(put.status).toBe(403);
    expect((await raw(port, 'GET', SIGNING_KEY, { host: `127.0.0.1:${port}` })).status).toBe(200);
  });

  it('a Host that is not strictly host[:port] is 400: never admin, never in a next link', async () => {
    const port = cp.ports.api;
    const path = '/meshes/default/traffic-permissions?size=1';
    for (const host of [
      'localhost:1@evil.example',
      '127.0.0.1@evil.example',
      'localhost:80/evil.example',
      'localhost:abc',
      'localhost:99999',
      'localhost:1:2',
      '[::1',
      '[::1]x',
      '[evil.example]',
      'local host',
    ]) {
      const list = await raw(port, 'GET', path, { host });
      expect(list.status, `${host}: ${list.body}`).toBe(400);
      expect(JSON.parse(list.body)).toEqual({
        title: 'Bad request',
        details: `the Host header ${JSON.stringify(host)} is not host[:port]: send a host name, an IPv4 address or an [IPv6] address, with an optional numeric port`,
      });
      expect((await raw(port, 'GET', SIGNING_KEY, { host })).status, host).toBe(400);
    }
    for (const host of [`localhost:${port}`, `[::1]:${port}`, 'cp_1.internal.', '10.0.0.1']) {
      expect((await raw(port, 'GET', path, { host })).status, host).toBe(200);
    }
  });

  it('next links never carry a Host that does not name the control plane', async () => {
    const port = cp.ports.api;
    const path = '/meshes/default/traffic-permissions?size=1';
    const trusted = JSON.parse((await raw(port, 'GET', path, { host: `localhost:${port}` })).body);
    expect(trusted.next).toBe(`http://localhost:${port}/meshes/default/traffic-permissions?offset=1&size=1`);
    const forged = JSON.parse((await raw(port, 'GET', path, { host: 'evil.example' })).body);
    expect(forged.next).toBe(`http://127.0.0.1:${port}/meshes/default/traffic-permissions?offset=1&size=1`);
    const events = JSON.parse((await raw(port, 'GET', '/_events?size=1', { host: 'evil.example' })).body);
    expect(events.next.startsWith(`http://127.0.0.1:${port}/_events?`)).toBe(true);
  });
});

describe('apiServer.externalUrl', () => {
  it('is the base of every next link, whatever the Host', async () => {
    const cp = await startTestPlane({ MESH_API_SERVER_EXTERNAL_URL: 'https://cp.example.com:8443/' });
    try {
      const put = await cp.app.inject({
        method: 'PUT',
        url: '/meshes/default/traffic-permissions/second',
        payload: tp('second'),
      });
      expect(put.statusCode).toBe(201);
      for (const host of ['localhost:80', 'evil.example']) {
        const res = await cp.app.inject({
          method: 'GET',
          url: '/meshes/default/traffic-permissions?size=1',
          headers: { host },
        });
        expect(res.json().next).toBe(
          'https://cp.example.com:8443/meshes/default/traffic-permissions?offset=1&size=1',
        );
      }
    } finally {
      await cp.close();
    }
  });

  it('must be an http(s) URL', async () => {
    await expect(startTestPlane({ MESH_API_SERVER_EXTERNAL_URL: 'ftp://x' })).rejects.toThrow(
      /apiServer\.externalUrl.*http\(s\) URL/,
    );
    await expect(startTestPlane({ MESH_API_SERVER_ALLOWED_HOSTS: 'a b' })).rejects.toThrow(
      /apiServer\.allowedHosts.*host name/,
    );
  });
});
