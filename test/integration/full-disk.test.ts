import { Writable } from 'node:stream';
import { createServer } from 'node:net';
import { Level } from 'level';
import { pino } from 'pino';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { openLevelStore, verifyLevelStore } from '../../src/events/level-tools.js';
import { AppError } from '../../src/util/errors.js';
import type { LogEntry } from '../../src/events/types.js';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startPlane, tempDir, testConfig } from '../helpers/control-plane.js';

// A full disk. The fault is injected at the LevelDB adapter's write boundary
// (mounting a small tmpfs needs privileges CI does not have); the README describes what is seen.

/** An error as LevelDB or the file system raise it on a full disk. */
const enospc = (): Error =>
  Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });

/** A pino logger whose lines are kept (parsed) for the test. */
function capturingLogger(): { logger: pino.Logger; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString().split('\n').filter(Boolean)) {
        lines.push(JSON.parse(line) as Record<string, unknown>);
      }
      done();
    },
  });
  return { logger: pino({ level: 'info' }, stream), lines };
}

/** A key generator held until `release()`; `asked` resolves when the first key is asked for. */
function heldKeygen(): { keygen: () => Promise<string>; asked: Promise<void>; release: () => void } {
  let keyAsked!: () => void;
  const asked = new Promise<void>((resolve) => (keyAsked = resolve));
  let release!: () => void;
  const released = new Promise<void>((resolve) => (release = resolve));
  const keygen = async (): Promise<string> => {
    keyAsked();
    await released;
    // Base64, as a key's `data` must be: start-up validates its keys as any Secret write.
    return Buffer.from('key-material').toString('base64');
  };
  return { keygen, asked, release };
}

const levelEnv = (path: string, extra: Record<string, string> = {}) =>
  testConfig({
    MESH_STORE_TYPE: 'level',
    MESH_STORE_LEVEL_PATH: path,
    MESH_API_SERVER_PORT: '0',
    MESH_API_SERVER_HTTPS_ENABLED: 'false',
    MESH_DIAGNOSTICS_PORT: '0',
    MESH_XDS_SERVER_GRPC_PORT: '0',
    ...extra,
  });

describe('a full disk', () => {
  const cleanups: (() => Promise<void> | void)[] = [];
  afterEach(async () => {
    for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  });

  it('refuses writes with 503 and /ready 503 while the log cannot write, then resumes by itself with the chain intact', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    let fault: Error | undefined;
    let faulted = 0;
    const { logger, lines } = capturingLogger();
    let cp: ControlPlane | undefined = await startPlane(levelEnv(dir.path), {
      logger,
      levelLog: {
        fault: () => {
          if (fault) faulted += 1;
          return fault;
        },
        retry: { firstMs: 10, maxMs: 40 },
      },
    });
    cleanups.push(() => cp?.close());
    await cp.defaultsReady;
    const api = `http://127.0.0.1:${cp.ports.api}`;
    const diag = `http://127.0.0.1:${cp.ports.diagnostics}`;
    const put = (name: string) =>
      fetch(`${api}/meshes/${name}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'Mesh', name }),
      });
    const acknowledged: string[] = [];

    for (const name of ['before-1', 'before-2']) {
      expect((await put(name)).status).toBe(201);
      acknowledged.push(name);
    }
    expect((await fetch(`${diag}/ready`)).status).toBe(200);

    fault = enospc();
    const first = await put('full-1');
    expect(first.status).toBe(503);
    expect(await first.json()).toEqual({
      title: 'Event log unavailable',
      details:
        'event log cannot write: ENOSPC: no space left on device, write; writes are refused until it recovers (retrying)',
    });
    // Writes meanwhile are refused at once, not queued behind the failing disk.
    const during = await Promise.all(['full-2', 'full-3', 'full-4'].map(put));
    expect(during.map((r) => r.status)).toEqual([503, 503, 503]);
    const ready = await fetch(`${diag}/ready`);
    expect(ready.status).toBe(503);
    expect(await ready.json()).toMatchObject({
      status: 'unavailable',
      reason: 'event log cannot write: ENOSPC: no space left on device, write',
    });
    // Liveness: the process is alive and recovers by itself; a restart would not free the disk.
    expect((await fetch(`${diag}/healthy`)).status).toBe(200);
    // Reads go on.
    expect((await fetch(`${api}/meshes/before-2`)).status).toBe(200);
    await vi.waitFor(() => expect(faulted).toBeGreaterThan(4), { timeout: 5000, interval: 10 });

    fault = undefined;
    await vi.waitFor(async () => expect((await fetch(`${diag}/ready`)).status).toBe(200), {
      timeout: 5000,
      interval: 20,
    });
    for (const name of ['after-1', 'after-2', 'after-3']) {
      expect((await put(name)).status).toBe(201);
      acknowledged.push(name);
    }
    expect((await fetch(`${api}/meshes/full-1`)).status).toBe(404);

    // One line when writes start failing, one when they work again: not one per retry.
    const failedLines = lines.filter((l) => String(l.msg).startsWith('event log cannot write'));
    const recoveredLines = lines.filter((l) => l.msg === 'event log writes again; accepting writes');
    expect(failedLines).toHaveLength(1);
    expect(failedLines[0]).toMatchObject({
      level: 50,
      msg: 'event log cannot write: ENOSPC: no space left on device, write; refusing writes (503) and retrying',
    });
    expect(recoveredLines).toHaveLength(1);
    expect(recoveredLines[0].attempts).toBeGreaterThan(1);

    // Revisions run without a gap over the fault and the chain holds (what `log verify` checks).
    const entries: LogEntry[] = [];
    for await (const entry of cp.log.read(1)) entries.push(entry);
    expect(entries.map((e) => e.revision)).toEqual(entries.map((_, i) => i + 1));
    expect(entries.every((e, i) => i === 0 || e.prevHash === entries[i - 1].hash)).toBe(true);
    await cp.close();
    cp = undefined;

    const store = await openLevelStore(dir.path, { existing: true });
    const check = await verifyLevelStore(store);
    await store.close();
    expect(check).toMatchObject({ ok: true, head: entries.length });

    // Every acknowledged write is there after a restart; none of the refused ones is.
    cp = await startPlane(levelEnv(dir.path), {});
    await cp.defaultsReady;
    for (const name of acknowledged) expect(cp.views.get('Mesh', undefined, name)).toBeDefined();
    for (const name of ['full-1', 'full-2', 'full-3', 'full-4']) {
      expect(cp.views.get('Mesh', undefined, name)).toBeUndefined();
    }
  });

  it('a start that fails after opening the store writes no snapshot into it', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    // A store whose next start finds a snapshot overdue: many updates, none snapshotted.
    const first = await startPlane(levelEnv(dir.path, { MESH_STORE_SNAPSHOT_EVERY: '0' }), {
      listen: false,
    });
    await first.defaultsReady;
    for (let i = 0; i < 60; i += 1) {
      const res = await first.app.inject({
        method: 'PUT',
        url: '/global-secrets/s',
        payload: { type: 'GlobalSecret', name: 's', data: Buffer.from(`v${i}`).toString('base64') },
      });
      expect(res.statusCode).toBeLessThan(300);
    }
    await first.close();

    const busy = createServer();
    await new Promise<void>((resolve) => busy.listen(0, '127.0.0.1', resolve));
    cleanups.push(() => new Promise<void>((resolve) => busy.close(() => resolve())));
    const port = (busy.address() as { port: number }).port;
    await expect(
      startPlane(
        levelEnv(dir.path, { MESH_STORE_SNAPSHOT_EVERY: '1', MESH_API_SERVER_PORT: String(port) }),
        {},
      ),
    ).rejects.toMatchObject({
      details: expect.stringMatching(/apiServer.port\) is in use by another process/) as unknown,
    });

    const db = new Level<string, string>(dir.path, { valueEncoding: 'utf8' });
    const snapshotKeys = await db.keys({ gte: 's!', lt: 's"' }).all();
    await db.close();
    expect(snapshotKeys).toEqual([]);
  });

  it('writes the other signing keys and keeps a key written first elsewhere, even when catching up would fail', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    const { logger, lines } = capturingLogger();
    const { keygen, asked, release } = heldKeygen();
    const cp = await startPlane(levelEnv(dir.path), { logger, keygen });
    cleanups.push(() => cp.close());
    await asked;
    // Written meanwhile (by a user, or another instance of a shared log): start-up looks again
    // before it writes, sees a key of the type and writes none, so it needs no catch-up with the
    // log (which would fail once here, as a read of PostgreSQL does while it restarts).
    const written = await cp.app.inject({
      method: 'PUT',
      url: '/global-secrets/user-token-signing-key-1',
      payload: { type: 'GlobalSecret', name: 'user-token-signing-key-1', data: 'd3JpdHRlbiBmaXJzdA==' },
    });
    expect(written.statusCode).toBe(201);
    const catchUp = cp.log.catchUp.bind(cp.log);
    let failures = 0;
    cp.log.catchUp = async () => {
      if (failures === 0) {
        failures += 1;
        throw new AppError('UNAVAILABLE', 'Event log unavailable', 'event log cannot read: read ECONNRESET');
      }
      return catchUp();
    };
    release();
    await cp.defaultsReady;
    expect(failures).toBe(0);
    expect(lines.filter((line) => Number(line.level) >= 50)).toEqual([]);
    // The key written first is kept; the others are written.
    expect(cp.views.get('GlobalSecret', undefined, 'user-token-signing-key-1')?.resource).toMatchObject({
      data: 'd3JpdHRlbiBmaXJzdA==',
    });
    expect(cp.views.get('Secret', 'default', 'dataplane-token-signing-key-default-1')).toBeDefined();
  }, 30_000);

  it('writes the signing keys once the log writes again, when it could not at start-up', async () => {
    const dir = tempDir();
    cleanups.push(dir.cleanup);
    let fault: Error | undefined;
    const { keygen, asked, release } = heldKeygen();
    const cp = await startPlane(levelEnv(dir.path), {
      levelLog: { fault: () => fault, retry: { firstMs: 10, maxMs: 50 } },
      // The keys are made after start-up: the disk fills up while they are generated.
      keygen,
    });
    cleanups.push(() => cp.close());
    await asked;
    fault = enospc();
    release();
    // Their writes fail and are tried again while the log cannot write.
    await vi.waitFor(() => expect(cp.log.writeFailure()).toContain('no space left on device'), {
      timeout: 10_000,
    });
    expect(cp.views.get('GlobalSecret', undefined, 'user-token-signing-key-1')).toBeUndefined();
    fault = undefined;
    await cp.defaultsReady;
    expect(cp.views.get('GlobalSecret', undefined, 'user-token-signing-key-1')).toBeDefined();
    expect(cp.views.get('Secret', 'default', 'dataplane-token-signing-key-default-1')).toBeDefined();
  }, 30_000);
});
