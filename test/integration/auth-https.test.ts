import { readFileSync, writeFileSync, mkdirSync } from 'node:fs';
import { X509Certificate } from 'node:crypto';
import { Agent, request } from 'node:https';
import { connect as netConnect } from 'node:net';
import { connect as tlsConnect } from 'node:tls';
import { join } from 'node:path';
import { generate } from 'selfsigned';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startPlane, tempDir, testConfig } from '../helpers/control-plane.js';
import { clientPki, httpsRequest } from '../helpers/tls.js';

const ports = {
  MESH_API_SERVER_PORT: '0',
  MESH_API_SERVER_HTTPS_PORT: '0',
  MESH_DIAGNOSTICS_PORT: '0',
  MESH_XDS_SERVER_GRPC_PORT: '0',
};

describe('HTTPS with a self-signed certificate made at first start (decisions §7, §9)', () => {
  const dir = tempDir();
  let cp: ControlPlane;
  const config = () => testConfig({ ...ports, MESH_STORE_TYPE: 'level', MESH_STORE_LEVEL_PATH: dir.path });

  beforeAll(async () => {
    cp = await startPlane(config());
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
    cp = await startPlane(config());
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
    const cp = await startPlane(
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

  it('answers on the HTTPS port with the limits and JSON errors of the HTTP port', async () => {
    const cp = await startPlane(
      testConfig({
        ...ports,
        MESH_API_SERVER_MAX_HEADER_SIZE: '4096',
        MESH_API_SERVER_TIMEOUTS_HEADERS: '300ms',
        MESH_API_SERVER_TIMEOUTS_REQUEST: '600ms',
      }),
    );
    const tlsExchange = (parts: Array<string | number>): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = tlsConnect(
          { host: '127.0.0.1', port: cp.ports.https, rejectUnauthorized: false },
          async () => {
            for (const part of parts) {
              if (typeof part === 'number') await new Promise((r) => setTimeout(r, part));
              else if (!socket.destroyed) socket.write(part);
            }
          },
        );
        let text = '';
        socket.on('data', (c: Buffer) => (text += c.toString()));
        socket.on('close', () => resolve(text));
        socket.on('error', (err: NodeJS.ErrnoException) =>
          err.code === 'ECONNRESET' ? resolve(text) : reject(err),
        );
      });
    try {
      const flood = await tlsExchange([`GET / HTTP/1.1\r\nHost: x\r\nX-Flood: ${'a'.repeat(8000)}\r\n\r\n`]);
      expect(flood).toMatch(/^HTTP\/1\.1 431 /);
      expect(JSON.parse(flood.slice(flood.indexOf('\r\n\r\n') + 4))).toEqual({
        title: 'Request header fields too large',
        details: 'the request headers are larger than 4096 bytes (apiServer.maxHeaderSize)',
      });
      const slow = await tlsExchange(['GET / HTTP/1.1\r\nHost: x\r\n', 2000, 'X-Late: 1\r\n\r\n']);
      expect(slow).toMatch(/^HTTP\/1\.1 408 /);
      // The same route table: request ids, CORS and auth behave as on HTTP.
      const res = await httpsRequest(cp.ports.https, '/meshes/default', { rejectUnauthorized: false });
      expect(res.status).toBe(200);
    } finally {
      await cp.close();
    }
  });

  it('closes a connection whose TLS handshake does not finish within the header timeout', async () => {
    const cp = await startPlane(
      testConfig({
        ...ports,
        MESH_API_SERVER_TIMEOUTS_HEADERS: '300ms',
        MESH_API_SERVER_TIMEOUTS_REQUEST: '600ms',
        MESH_API_SERVER_TIMEOUTS_IDLE: '1h',
      }),
    );
    // Opens TCP, sends nothing or the first bytes of a ClientHello, and waits (at most 5 s) to be let go.
    const cutOff = (hello: Buffer): Promise<boolean> =>
      new Promise((resolve) => {
        const socket = netConnect({ host: '127.0.0.1', port: cp.ports.https }, () => socket.write(hello));
        const timer = setTimeout(() => {
          socket.destroy();
          resolve(false);
        }, 5000);
        socket.on('error', () => undefined);
        socket.on('close', () => {
          clearTimeout(timer);
          resolve(true);
        });
      });
    try {
      const [silent, half] = await Promise.all([
        cutOff(Buffer.alloc(0)),
        cutOff(Buffer.from([0x16, 0x03, 0x01, 0x02, 0x00, 0x01])),
      ]);
      expect({ silent, half }).toEqual({ silent: true, half: true });
    } finally {
      await cp.close();
    }
  });

  it('close() closes the HTTPS listener, a kept-alive connection included', async () => {
    const cp = await startPlane(testConfig(ports));
    const agent = new Agent({ keepAlive: true, rejectUnauthorized: false });
    const get = () =>
      new Promise<number>((resolve, reject) => {
        request({ host: '127.0.0.1', port: cp.ports.https, path: '/', agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(res.statusCode ?? 0));
        })
          .on('error', reject)
          .end();
      });
    try {
      expect(await get()).toBe(200);
      const started = Date.now();
      await cp.close();
      expect(Date.now() - started).toBeLessThan(3000);
      await expect(get()).rejects.toThrow(/ECONNREFUSED|socket hang up|ECONNRESET/);
    } finally {
      agent.destroy();
    }
  });

  it('is off with apiServer.https.enabled false', async () => {
    const cp = await startPlane(testConfig({ ...ports, MESH_API_SERVER_HTTPS_ENABLED: 'false' }));
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
    cp = await startPlane(
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

  it('writes control characters of a common name as \\uXXXX in the actor', async () => {
    // RFC 4514 hex form (the DER of a UTF8String) of "eve", BEL, LF, "admin", U+202E.
    const eve = await clientPki('#0c0d657665070a61646d696ee280ae');
    const other = tempDir();
    writeFileSync(join(other.path, 'eve-ca.pem'), eve.caCert);
    const plane = await startPlane(
      testConfig({ ...ports, MESH_API_SERVER_AUTH_CLIENT_CERTS_DIR: other.path }),
    );
    try {
      const tls = { rejectUnauthorized: false, key: eve.key, cert: eve.cert };
      const put = await httpsRequest(plane.ports.https, '/meshes/by-eve', tls, 'PUT', {
        type: 'Mesh',
        name: 'by-eve',
      });
      expect(put.status, put.body).toBe(201);
      const entries = [];
      for await (const e of plane.log.history('Mesh', undefined, 'by-eve')) entries.push(e);
      expect(entries[0].actor.name).toBe('eve\\u0007\\u000aadmin\\u202e');
    } finally {
      await plane.close();
      other.cleanup();
    }
  });

  it('refuses to start when the directory holds no certificate', async () => {
    const empty = tempDir();
    try {
      await expect(
        startPlane(testConfig({ ...ports, MESH_API_SERVER_AUTH_CLIENT_CERTS_DIR: empty.path })),
      ).rejects.toThrow(`apiServer.auth.clientCertsDir: no PEM certificate in ${empty.path}`);
    } finally {
      empty.cleanup();
    }
  });
});
