import { connect } from 'node:net';
import { Writable } from 'node:stream';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from '../../src/config/load.js';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { createLogger } from '../../src/runtime/logger.js';
import { REMOTE, b64, bearer, issueUserToken } from '../helpers/auth.js';
import { startListeningPlane, startPlane, testConfig } from '../helpers/control-plane.js';

/** Sends raw bytes (in steps, with pauses) over a plain socket and collects everything until the server closes. */
function rawExchange(port: number, steps: Array<string | number>): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port });
    let answer = '';
    socket.on('data', (chunk: Buffer) => (answer += chunk.toString()));
    socket.on('close', () => resolve(answer));
    socket.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ECONNRESET' ? resolve(answer) : reject(err),
    );
    socket.on('connect', async () => {
      for (const step of steps) {
        if (typeof step === 'number') await new Promise((r) => setTimeout(r, step));
        else if (!socket.destroyed) socket.write(step);
      }
    });
  });
}

/** The status line and JSON body of a raw HTTP answer. */
function parseAnswer(raw: string): { status: number; body: unknown } {
  const [head, body] = raw.split('\r\n\r\n');
  return { status: Number(head.split(' ')[1]), body: JSON.parse(body) };
}

describe('cut-offs before a request reaches a handler', () => {
  let cp: ControlPlane;

  beforeAll(async () => {
    cp = await startListeningPlane({
      MESH_API_SERVER_TIMEOUTS_HEADERS: '300ms',
      MESH_API_SERVER_TIMEOUTS_REQUEST: '600ms',
      MESH_API_SERVER_MAX_HEADER_SIZE: '4096',
    });
  });
  afterAll(async () => {
    await cp.close();
  });

  it('answers a header flood with 431 and a JSON error', async () => {
    const raw = await rawExchange(cp.ports.api, [
      `GET / HTTP/1.1\r\nHost: localhost\r\nX-Flood: ${'a'.repeat(8000)}\r\n\r\n`,
    ]);
    expect(parseAnswer(raw)).toEqual({
      status: 431,
      body: {
        title: 'Request header fields too large',
        details: 'the request headers are larger than 4096 bytes (apiServer.maxHeaderSize)',
      },
    });
  });

  it('answers headers that do not arrive in time with 408 and closes', async () => {
    const started = Date.now();
    const raw = await rawExchange(cp.ports.api, [
      'GET / HTTP/1.1\r\nHost: localhost\r\n',
      2000,
      'X-Late: 1\r\n\r\n',
    ]);
    expect(parseAnswer(raw)).toEqual({
      status: 408,
      body: {
        title: 'Request timeout',
        details:
          'the request was not received in time: headers must arrive within 300ms and the whole request within 600ms (apiServer.timeouts)',
      },
    });
    expect(Date.now() - started).toBeLessThan(1900);
  });

  it('answers a body that does not arrive in time with 408', async () => {
    const raw = await rawExchange(cp.ports.api, [
      'PUT /meshes/slow HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/json\r\nContent-Length: 40\r\n\r\n{"type":',
      2000,
      '"Mesh"}',
    ]);
    expect(parseAnswer(raw).status).toBe(408);
    const mesh = await cp.app.inject({ method: 'GET', url: '/meshes/slow' });
    expect(mesh.statusCode).toBe(404);
  });

  it('cuts off the diagnostics port the same way: headers late are 408', async () => {
    const raw = await rawExchange(cp.ports.diagnostics, [
      'GET /ready HTTP/1.1\r\nHost: localhost\r\n',
      3000,
      'Connection: close\r\n\r\n',
    ]);
    expect(parseAnswer(raw).status).toBe(408);
    const inTime = await rawExchange(cp.ports.diagnostics, [
      'GET /healthy HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    ]);
    expect(inTime.startsWith('HTTP/1.1 200')).toBe(true);
  });

  it('still answers a request that arrives in time', async () => {
    const raw = await rawExchange(cp.ports.api, [
      'GET /versions HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n',
    ]);
    expect(raw.startsWith('HTTP/1.1 200')).toBe(true);
  });

  it('refuses a header deadline later than the request deadline at start-up', () => {
    expect(() =>
      loadConfig({
        env: { MESH_API_SERVER_TIMEOUTS_HEADERS: '1m', MESH_API_SERVER_TIMEOUTS_REQUEST: '30s' },
      }),
    ).toThrow('apiServer.timeouts.headers (from MESH_API_SERVER_TIMEOUTS_HEADERS): must not be longer than');
  });
});

describe('secrets never reach the logs', () => {
  let lines: string[];
  let cp: ControlPlane;

  beforeAll(async () => {
    lines = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        lines.push(...chunk.toString().split('\n').filter(Boolean));
        done();
      },
    });
    cp = await startPlane(testConfig(), { listen: false, logger: createLogger('trace', sink) });
    await cp.defaultsReady;
  });
  afterAll(async () => {
    await cp.close();
  });

  it('logs token issue by id, never the token, the Authorization header or a secret body', async () => {
    const token = await issueUserToken(cp.app, { name: 'ada', groups: ['mesh-system:admin'] });
    const secretText = 'correct-horse-battery-staple';
    const put = await cp.app.inject({
      method: 'PUT',
      url: '/global-secrets/db-password',
      headers: bearer(token),
      payload: { type: 'Secret', name: 'db-password', data: b64(secretText) },
    });
    expect(put.statusCode).toBe(201);
    await cp.app.inject({ method: 'GET', url: '/meshes', headers: bearer(`${token}x`) });
    await cp.app.inject({
      method: 'PUT',
      url: '/global-secrets/db-password',
      headers: bearer(token),
      payload: { type: 'Secret', name: 'db-password', data: 'not base64!' },
    });
    await cp.app.inject({ method: 'GET', url: '/global-secrets', remoteAddress: REMOTE });

    const text = lines.join('\n');
    expect(lines.some((l) => JSON.parse(l).msg === 'token issued')).toBe(true);
    const issued = lines.map((l) => JSON.parse(l)).find((l) => l.msg === 'token issued');
    expect(issued).toMatchObject({ tokenType: 'user', subject: 'ada', signingKey: 1 });
    expect(issued.tokenId).toMatch(/^[0-9a-f-]{36}$/);
    expect(lines.some((l) => JSON.parse(l).msg === 'resource created')).toBe(true);
    const [, payload, signature] = token.split('.');
    for (const needle of [payload, signature, b64(secretText), secretText, 'not base64!', 'Bearer']) {
      expect(text).not.toContain(needle);
    }
  });

  it('redacts credential and body fields if a log line ever carries them', () => {
    const out: string[] = [];
    const sink = new Writable({
      write(chunk: Buffer, _enc, done) {
        out.push(chunk.toString());
        done();
      },
    });
    createLogger('info', sink).info(
      {
        req: { headers: { authorization: 'Bearer abc.def.ghi', cookie: 'sid=1' }, body: { data: 'x' } },
        token: 't',
      },
      'oops',
    );
    const line = JSON.parse(out.join(''));
    expect(line.req).toEqual({
      headers: { authorization: '[redacted]', cookie: '[redacted]' },
      body: '[redacted]',
    });
    expect(line.token).toBe('[redacted]');
  });

  it('masks the zone token in /config for the readers who may read it', async () => {
    const zone = await startPlane(
      testConfig({
        MESH_MODE: 'zone',
        MESH_MULTIZONE_ZONE_NAME: 'east',
        MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: 'grpcs://127.0.0.1:5685',
        MESH_MULTIZONE_ZONE_KDS_TOKEN: 'zone-token-value',
      }),
      { listen: false },
    );
    try {
      const res = await zone.app.inject({ method: 'GET', url: '/config', remoteAddress: REMOTE });
      expect(res.statusCode).toBe(200);
      expect(res.json().multizone.zone.kds.token).toBe('*****');
      expect(res.body).not.toContain('zone-token-value');
    } finally {
      await zone.close();
    }
  });
});
