import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { request } from 'node:https';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startControlPlane } from '../../src/runtime/control-plane.js';
import { testConfig, tempDir } from '../helpers/control-plane.js';

interface TlsClient {
  ca?: string;
  key?: string;
  cert?: string;
  servername?: string;
}

/** One HTTPS request to 127.0.0.1 with real TLS; resolves with the status and body, rejects on a TLS error. */
function httpsRequest(
  port: number,
  path: string,
  tls: TlsClient,
  method = 'GET',
  body?: unknown,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const req = request(
      {
        host: '127.0.0.1',
        port,
        path,
        method,
        agent: false,
        ...tls,
        headers: payload ? { 'content-type': 'application/json' } : {},
      },
      (res) => {
        let text = '';
        res.on('data', (chunk: Buffer) => (text += chunk.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: text }));
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}

/** A test CA and a client certificate it signed, made with the same library the server uses. */
async function clientPki(cn: string) {
  const ca = await generate([{ name: 'commonName', value: `${cn}-ca` }], {
    algorithm: 'sha256',
    extensions: [
      { name: 'basicConstraints', cA: true, critical: true },
      { name: 'keyUsage', keyCertSign: true, cRLSign: true, digitalSignature: true, critical: true },
    ],
  });
  const client = await generate([{ name: 'commonName', value: cn }], {
    algorithm: 'sha256',
    ca: { key: ca.private, cert: ca.cert },
    extensions: [
      { name: 'basicConstraints', cA: false },
      { name: 'keyUsage', digitalSignature: true, keyEncipherment: true },
      { name: 'extKeyUsage', clientAuth: true },
    ],
  });
  return { caCert: ca.cert, key: client.private, cert: client.cert };
}

const ports = { MESH_API_SERVER_PORT: '0', MESH_API_SERVER_HTTPS_PORT: '0', MESH_DIAGNOSTICS_PORT: '0' };

describe('HTTPS with a self-signed certificate made at first start (issue 4, decisions §7, §9)', () => {
  const dir = tempDir();
  let cp: ControlPlane;
  const config = () => testConfig({ ...ports, MESH_STORE_TYPE: 'level', MESH_STORE_LEVEL_PATH: dir.path });

  beforeAll(async () => {
    cp = await startControlPlane(config());
  });
  afterAll(async () => {
    await cp?.close();
    dir.cleanup();
  });

  it('listens on its own port, keeps the pair in <data dir>/tls/ and serves the API', async () => {
    expect(cp.ports.https).toBeGreaterThan(0);
    expect(cp.ports.https).not.toBe(cp.ports.api);
    expect(cp.tls).toEqual({ source: 'generated', certFile: join(dir.path, 'tls', 'cert.pem') });
    const cert = readFileSync(join(dir.path, 'tls', 'cert.pem'), 'utf8');
    const x509 = new X509Certificate(cert);
    expect(x509.subjectAltName).toContain('IP Address:127.0.0.1');
    expect(x509.subjectAltName).toContain('DNS:localhost');
    const res = await httpsRequest(cp.ports.https, '/meshes/default', { ca: cert });
    expect(res.status).toBe(200);
    expect(JSON.parse(res.body)).toMatchObject({ type: 'Mesh', name: 'default' });
    const byName = await httpsRequest(cp.ports.https, '/', { ca: cert, servername: 'localhost' });
    expect(byName.status).toBe(200);
  });

  it('is refused by a client that does not trust the certificate', async () => {
    await expect(httpsRequest(cp.ports.https, '/', {})).rejects.toThrow(/self-signed certificate/);
  });

  it('reuses the kept pair on restart', async () => {
    const before = readFileSync(join(dir.path, 'tls', 'cert.pem'), 'utf8');
    await cp.close();
    cp = await startControlPlane(config());
    expect(cp.tls?.source).toBe('kept');
    expect(readFileSync(join(dir.path, 'tls', 'cert.pem'), 'utf8')).toBe(before);
    expect((await httpsRequest(cp.ports.https, '/', { ca: before })).status).toBe(200);
  });
});

describe('HTTPS settings', () => {
  it('serves the configured certificate and key files', async () => {
    const dir = tempDir();
    const pair = await generate([{ name: 'commonName', value: 'localhost' }], {
      algorithm: 'sha256',
      extensions: [{ name: 'subjectAltName', altNames: [{ type: 7, ip: '127.0.0.1' }] }],
    });
    writeFileSync(join(dir.path, 'server.crt'), pair.cert);
    writeFileSync(join(dir.path, 'server.key'), pair.private);
    const cp = await startControlPlane(
      testConfig({
        ...ports,
        MESH_API_SERVER_HTTPS_TLS_CERT_FILE: join(dir.path, 'server.crt'),
        MESH_API_SERVER_HTTPS_TLS_KEY_FILE: join(dir.path, 'server.key'),
      }),
    );
    try {
      expect(cp.tls?.source).toBe('files');
      expect((await httpsRequest(cp.ports.https, '/', { ca: pair.cert })).status).toBe(200);
    } finally {
      await cp.close();
      dir.cleanup();
    }
  });

  it('is off with apiServer.https.enabled false', async () => {
    const cp = await startControlPlane(testConfig({ ...ports, MESH_API_SERVER_HTTPS_ENABLED: 'false' }));
    try {
      expect(cp.ports.https).toBe(0);
      expect(cp.httpsServer).toBeUndefined();
    } finally {
      await cp.close();
    }
  });
});

describe('client certificates (apiServer.auth.clientCertsDir)', () => {
  const dir = tempDir();
  let cp: ControlPlane;
  let serverCert: string;
  let trusted: Awaited<ReturnType<typeof clientPki>>;
  let stranger: Awaited<ReturnType<typeof clientPki>>;

  beforeAll(async () => {
    [trusted, stranger] = await Promise.all([clientPki('alice'), clientPki('mallory')]);
    mkdirSync(join(dir.path, 'clients'));
    writeFileSync(join(dir.path, 'clients', 'team-ca.pem'), trusted.caCert);
    writeFileSync(join(dir.path, 'clients', 'README.txt'), 'not a certificate, ignored');
    // Loopback is not admin here, so only the certificate can make the caller admin.
    cp = await startControlPlane(
      testConfig({
        ...ports,
        MESH_STORE_TYPE: 'level',
        MESH_STORE_LEVEL_PATH: join(dir.path, 'data'),
        MESH_API_SERVER_AUTH_CLIENT_CERTS_DIR: join(dir.path, 'clients'),
        MESH_API_SERVER_AUTHN_LOCALHOST_IS_ADMIN: 'false',
      }),
    );
    serverCert = readFileSync(join(dir.path, 'data', 'tls', 'cert.pem'), 'utf8');
  });
  afterAll(async () => {
    await cp?.close();
    dir.cleanup();
  });

  it('makes a caller with a certificate from a CA of the directory admin', async () => {
    const tls = { ca: serverCert, key: trusted.key, cert: trusted.cert };
    const res = await httpsRequest(cp.ports.https, '/global-secrets', tls);
    expect(res.status, res.body).toBe(200);
    const put = await httpsRequest(cp.ports.https, '/meshes/by-cert', tls, 'PUT', {
      type: 'Mesh',
      name: 'by-cert',
    });
    expect(put.status, put.body).toBe(201);
    const entries = [];
    for await (const e of cp.log.history('Mesh', undefined, 'by-cert')) entries.push(e);
    expect(entries[0].actor).toEqual({ name: 'alice', groups: ['mesh-system:admin'], address: '127.0.0.1' });
  });

  it('treats a caller without a certificate, or with one from another CA, as anonymous', async () => {
    for (const tls of [{}, { key: stranger.key, cert: stranger.cert }]) {
      const res = await httpsRequest(cp.ports.https, '/global-secrets', { ca: serverCert, ...tls });
      expect(res.status).toBe(403);
      expect(JSON.parse(res.body).details).toBe('anonymous caller (no credentials) may not GET GlobalSecret');
    }
  });

  it('refuses to start when the directory holds no certificate', async () => {
    const empty = tempDir();
    try {
      await expect(
        startControlPlane(testConfig({ ...ports, MESH_API_SERVER_AUTH_CLIENT_CERTS_DIR: empty.path })),
      ).rejects.toThrow(`apiServer.auth.clientCertsDir: no PEM certificate in ${empty.path}`);
    } finally {
      empty.cleanup();
    }
  });
});
