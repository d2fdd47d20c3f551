import { readFileSync } from 'node:fs';
import type { ClientHttp2Session } from 'node:http2';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { createLogger } from '../../src/runtime/logger.js';
import { capturedLog } from '../helpers/captured-log.js';
import { tempDir } from '../helpers/control-plane.js';
import { measureLoopDelay, measureRssGrowth as rssGrowth } from '../helpers/loop-delay.js';
import { startGlobal, zoneToken } from '../helpers/multizone.js';
import { connectSync, hugeHello, rawSyncCall } from '../helpers/sync-wire.js';

const MiB = 1024 * 1024;

describe('the sync port reads no message before the zone token in the call metadata is verified', () => {
  const dir = tempDir('mz-preauth-');
  let global: ControlPlane;
  let ca: Buffer;
  const sessions: ClientHttp2Session[] = [];

  beforeAll(async () => {
    // The default sync timers: a 60 MiB message is not cut off by a short idle timeout.
    global = await startGlobal(dir.path, {}, { multizone: {} });
    ca = readFileSync(join(dir.path, 'tls', 'cert.pem'));
  });
  afterAll(async () => {
    for (const s of sessions) s.destroy();
    await global?.close();
    dir.cleanup();
  });

  it('refuses eight 60 MiB Hellos without a token at once, without reading them: no stall, no memory growth', async () => {
    for (let i = 0; i < 8; i++) sessions.push(await connectSync(global.ports.kds, ca));
    // One refusal first, so that what is measured is the cost of a refusal, not of code run once.
    await rawSyncCall(sessions[0], { body: [Buffer.alloc(5)] });
    const { result, growth } = await rssGrowth(() =>
      measureLoopDelay(() => Promise.all(sessions.map((s) => rawSyncCall(s, { body: hugeHello(60 * MiB) })))),
    );
    console.log(
      `8 × 60 MiB Hellos without a token: longest loop stall ${result.maxMs.toFixed(1)} ms, RSS growth ${(growth / MiB).toFixed(1)} MiB`,
    );
    for (const end of result.result) {
      expect(end.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(end.details).toBe('no zone token in the call metadata (authorization: Bearer <token>)');
      // Refused on the headers, long before the client could send its message.
      expect(end.written).toBeLessThan(60 * MiB);
    }
    expect(result.maxMs).toBeLessThan(100);
    expect(growth).toBeLessThan(64 * MiB);
    expect((await fetch(`http://127.0.0.1:${global.ports.diagnostics}/ready`)).status).toBe(200);
    expect((await fetch(`http://127.0.0.1:${global.ports.api}/meshes/default`)).status).toBe(200);
  }, 120_000);

  it('answers a caller without a token that never finishes its message: the refusal does not wait for it', async () => {
    const session = await connectSync(global.ports.kds, ca);
    sessions.push(session);
    // The start of a 60 MiB Hello, and then nothing: before, Global waited for the rest.
    const start = hugeHello(60 * MiB).next().value as Buffer;
    const end = await rawSyncCall(session, { body: [start], keepOpen: true });
    expect(end).toMatchObject({ code: grpc.status.UNAUTHENTICATED, written: start.length });
  });

  it('refuses a token that does not verify and one without the cp scope before the Hello, on both streams', async () => {
    const session = await connectSync(global.ports.kds, ca);
    sessions.push(session);
    const noCp = await zoneToken(global, 'zone-1', ['ingress']);
    for (const method of ['GlobalToZone', 'ZoneToGlobal'] as const) {
      const bad = await rawSyncCall(session, {
        method,
        headers: { authorization: 'Bearer not-a-token' },
        body: hugeHello(8 * MiB),
      });
      expect(bad.code).toBe(grpc.status.UNAUTHENTICATED);
      expect(bad.written).toBeLessThan(8 * MiB);
      const scope = await rawSyncCall(session, {
        method,
        headers: { authorization: `Bearer ${noCp}` },
        body: hugeHello(8 * MiB),
      });
      expect(scope).toMatchObject({
        code: grpc.status.PERMISSION_DENIED,
        details: 'the token has no "cp" scope',
      });
      expect(scope.written).toBeLessThan(8 * MiB);
    }
    expect(global.views.get('Zone', undefined, 'zone-1')).toBeUndefined();
  });
});

describe('refusals before authentication are logged within a rate limit', () => {
  const dir = tempDir('mz-refusal-log-');
  let global: ControlPlane;
  let ca: Buffer;
  const log = capturedLog();
  const sessions: ClientHttp2Session[] = [];

  beforeAll(async () => {
    global = await startGlobal(dir.path, {}, { logger: createLogger('info', log.stream) });
    ca = readFileSync(join(dir.path, 'tls', 'cert.pem'));
  });
  afterAll(async () => {
    for (const s of sessions) s.close();
    await global?.close();
    dir.cleanup();
  });

  it('twenty calls without a token from one address: one log line, every call refused', async () => {
    const session = await connectSync(global.ports.kds, ca);
    sessions.push(session);
    for (let i = 0; i < 20; i++) {
      const end = await rawSyncCall(session, { body: [] });
      expect(end.code).toBe(grpc.status.UNAUTHENTICATED);
    }
    const refused = log.lines.filter((l) => l.includes('zone connection refused'));
    expect(refused).toHaveLength(1);
  });
});
