import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { bearer, issueUserToken } from '../helpers/auth.js';
import { startPlane, startTestPlane, tempDir, testConfig } from '../helpers/control-plane.js';
import { tp } from '../helpers/multizone.js';
import { clientPki, httpsRequest } from '../helpers/tls.js';

// A browser sends a POST with no content type, or as a form or text, from any web page without a
// CORS preflight, and it attaches a client certificate (and is on loopback) by itself.
const SIMPLE_TYPES = [
  undefined,
  'text/plain',
  'text/plain;charset=UTF-8',
  'application/x-www-form-urlencoded',
  'multipart/form-data; boundary=x',
];
const EVIL = 'https://evil.example';

const REFUSED_POST = {
  title: 'Unsupported media type',
  details:
    'a POST must say "Content-Type: application/json" (or a YAML type), even with no body: a web page can make a browser send a POST without one, with its client certificate or from loopback',
};

describe('a POST that a web page could forge is refused (loopback admin)', () => {
  let cp: ControlPlane;
  let before: number;
  const url = '/meshes/default/traffic-permissions/kept';
  beforeAll(async () => {
    cp = await startTestPlane();
    before = cp.log.head();
    const put = await cp.app.inject({ method: 'PUT', url, payload: tp('kept') });
    expect(put.statusCode).toBe(201);
  });
  afterAll(async () => {
    await cp?.close();
  });

  it('refuses a revert with no content type or a form or text type, and writes nothing', async () => {
    for (const type of SIMPLE_TYPES) {
      const head = cp.log.head();
      const res = await cp.app.inject({
        method: 'POST',
        url: `${url}/_revert?toRevision=${before}`,
        headers: type === undefined ? {} : { 'content-type': type },
        ...(type === undefined ? {} : { payload: 'a=b' }),
      });
      expect(res.statusCode, String(type)).toBe(415);
      expect(res.json()).toEqual(REFUSED_POST);
      expect(cp.log.head()).toBe(head);
    }
    expect((await cp.app.inject({ method: 'GET', url })).statusCode).toBe(200);
  });

  it('refuses a token request with no content type', async () => {
    const res = await cp.app.inject({ method: 'POST', url: '/tokens/user' });
    expect(res.statusCode).toBe(415);
    expect(res.json()).toEqual(REFUSED_POST);
  });

  it('takes a revert that says application/json, with no body', async () => {
    const res = await cp.app.inject({
      method: 'POST',
      url: `${url}/_revert?toRevision=${before}&dryRun=true`,
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('takes a POST with a user token and no content type (a browser cannot add one unasked)', async () => {
    const token = await issueUserToken(cp.app, { name: 'ops', groups: ['mesh-system:admin'] });
    const res = await cp.app.inject({
      method: 'POST',
      url: `${url}/_revert?toRevision=${before}&dryRun=true`,
      headers: bearer(token),
    });
    expect(res.statusCode, res.body).toBe(200);
  });

  it('leaves other methods alone: a browser preflights them', async () => {
    const del = await cp.app.inject({ method: 'DELETE', url: '/meshes/default/traffic-permissions/nope' });
    expect(del.statusCode).toBe(404);
  });
});

describe('client certificates and forged browser writes', () => {
  const dir = tempDir();
  let cp: ControlPlane;
  let tls: { ca: string; key: string; cert: string };

  beforeAll(async () => {
    const alice = await clientPki('alice');
    mkdirSync(join(dir.path, 'clients'));
    writeFileSync(join(dir.path, 'clients', 'team-ca.pem'), alice.caCert);
    // Loopback is not admin here, so only the certificate can make the caller admin.
    cp = await startPlane(
      testConfig({
        MESH_API_SERVER_PORT: '0',
        MESH_API_SERVER_HTTPS_PORT: '0',
        MESH_DIAGNOSTICS_PORT: '0',
        MESH_XDS_SERVER_GRPC_PORT: '0',
        MESH_STORE_TYPE: 'level',
        MESH_STORE_LEVEL_PATH: join(dir.path, 'data'),
        MESH_API_SERVER_AUTH_CLIENT_CERTS_DIR: join(dir.path, 'clients'),
        MESH_API_SERVER_AUTHN_LOCALHOST_IS_ADMIN: 'false',
      }),
    );
    await cp.defaultsReady;
    tls = {
      ca: readFileSync(join(dir.path, 'data', 'tls', 'cert.pem'), 'utf8'),
      key: alice.key,
      cert: alice.cert,
    };
  });
  afterAll(async () => {
    await cp?.close();
    dir.cleanup();
  });

  it('a page cannot delete a mesh with a body-less POST …/_revert', async () => {
    const before = cp.log.head();
    const put = await httpsRequest(cp.ports.https, '/meshes/doomed', tls, 'PUT', {
      type: 'Mesh',
      name: 'doomed',
    });
    expect(put.status, put.body).toBe(201);
    for (const type of SIMPLE_TYPES) {
      const res = await httpsRequest(
        cp.ports.https,
        `/meshes/doomed/_revert?toRevision=${before}`,
        tls,
        'POST',
        type === undefined ? undefined : '',
        { ...(type === undefined ? {} : { 'content-type': type }), origin: EVIL },
      );
      expect(res.status, `${type}: ${res.body}`).toBe(415);
    }
    expect((await httpsRequest(cp.ports.https, '/meshes/doomed', tls)).status).toBe(200);
  });

  it('a request with a foreign Origin does not count the certificate: 403 that says why', async () => {
    const secrets = await httpsRequest(cp.ports.https, '/global-secrets', tls, 'GET', undefined, {
      origin: EVIL,
    });
    expect(secrets.status).toBe(403);
    expect(JSON.parse(secrets.body)).toEqual({
      title: 'Forbidden',
      details:
        'anonymous caller (its client certificate does not count with Origin "https://evil.example", which apiServer.corsAllowedDomains does not allow: call without an Origin header, with a user token, or list the origin) may not GET GlobalSecret',
    });
    const put = await httpsRequest(
      cp.ports.https,
      '/meshes/from-page',
      tls,
      'PUT',
      { type: 'Mesh', name: 'from-page' },
      { origin: 'null' },
    );
    expect(put.status).toBe(403);
    expect((await httpsRequest(cp.ports.https, '/meshes/from-page', tls)).status).toBe(404);
  });

  it('the same request without an Origin, or with its own, is admin', async () => {
    const plain = await httpsRequest(cp.ports.https, '/global-secrets', tls);
    expect(plain.status).toBe(200);
    const own = await httpsRequest(cp.ports.https, '/global-secrets', tls, 'GET', undefined, {
      origin: `https://127.0.0.1:${cp.ports.https}`,
      host: `127.0.0.1:${cp.ports.https}`,
    });
    expect(own.status).toBe(200);
  });

  it('a JSON POST with the certificate still reverts', async () => {
    const before = cp.log.head();
    const put = await httpsRequest(cp.ports.https, '/meshes/reverted', tls, 'PUT', {
      type: 'Mesh',
      name: 'reverted',
    });
    expect(put.status).toBe(201);
    const res = await httpsRequest(
      cp.ports.https,
      `/meshes/reverted/_revert?toRevision=${before}`,
      tls,
      'POST',
      '',
      { 'content-type': 'application/json' },
    );
    expect(res.status, res.body).toBe(200);
    expect((await httpsRequest(cp.ports.https, '/meshes/reverted', tls)).status).toBe(404);
  });
});
