import { Writable } from 'node:stream';
import { Level } from 'level';
import { afterAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { createLogger } from '../../src/runtime/logger.js';
import { startPlane, tempDir, testConfig } from '../helpers/control-plane.js';
import { observe, randomWrites } from '../helpers/history.js';
import { eventually } from '../helpers/eventually.js';

/** Starts on a LevelDB data dir, capturing the JSON log lines. */
async function start(
  path: string,
  every: string,
): Promise<{ cp: ControlPlane; lines: Array<Record<string, unknown>> }> {
  const lines: Array<Record<string, unknown>> = [];
  const sink = new Writable({
    write(chunk: Buffer, _enc, done) {
      for (const l of chunk.toString().split('\n'))
        if (l) lines.push(JSON.parse(l) as Record<string, unknown>);
      done();
    },
  });
  const cp = await startPlane(
    testConfig({ MESH_STORE_TYPE: 'level', MESH_STORE_LEVEL_PATH: path, MESH_STORE_SNAPSHOT_EVERY: every }),
    { listen: false, logger: createLogger('info', sink) },
  );
  await cp.defaultsReady;
  return { cp, lines };
}

/** Raw access to the store of a stopped control plane. */
async function withDb<T>(path: string, fn: (db: Level<string, string>) => Promise<T>): Promise<T> {
  const db = new Level<string, string>(path, { valueEncoding: 'utf8' });
  await db.open();
  try {
    return await fn(db);
  } finally {
    await db.close();
  }
}

const snapshotMetas = (db: Level<string, string>) =>
  db
    .keys({ gte: 's!', lt: 's"' })
    .all()
    .then((keys) => keys.filter((k) => k.endsWith('!meta')));

const until = (check: () => Promise<boolean>, ms = 5000): Promise<true> => eventually(check, ms);

describe('snapshots: start-up from a snapshot plus the tail equals a full replay', () => {
  const dirs: Array<{ cleanup: () => void }> = [];
  afterAll(() => dirs.forEach((d) => d.cleanup()));

  for (const seed of [11, 12]) {
    it(`random writes, seed ${seed}: same views, same revisions, from a snapshot as from the whole log`, async () => {
      const dir = tempDir();
      dirs.push(dir);
      const first = await start(dir.path, '7');
      await randomWrites(first.cp.app, seed, 70);
      const head = first.cp.log.head();
      // Snapshots are written after commits, off the write path, once the entries since the last one
      // reach max(every, the resources it held): wait until no further one is due.
      let newest = 0;
      await until(async () => {
        const [s] = (await first.cp.log.snapshots?.list()) ?? [];
        newest = s?.revision ?? 0;
        return s !== undefined && head - s.revision < Math.max(7, s.info?.resources ?? 0);
      });
      expect(first.lines.some((l) => l.msg === 'snapshot written')).toBe(true);
      const live = await observe(first.cp.app);
      await first.cp.close();

      const metas = await withDb(dir.path, snapshotMetas);
      expect(metas.length).toBe(2);

      const fromSnapshot = await start(dir.path, '7');
      expect(fromSnapshot.cp.startup.snapshot).toBe(newest);
      expect(fromSnapshot.cp.startup.replayed).toBe(head - (fromSnapshot.cp.startup.snapshot as number));
      expect(fromSnapshot.cp.views.revision()).toBe(head);
      const a = await observe(fromSnapshot.cp.app);
      await fromSnapshot.cp.close();

      const full = await start(dir.path, '0');
      expect(full.cp.startup.snapshot).toBeUndefined();
      expect(full.cp.startup.replayed).toBe(head);
      const b = await observe(full.cp.app);
      await full.cp.close();

      expect(a).toEqual(b);
      expect(a).toEqual(live);
    }, 30_000);
  }

  it('a damaged snapshot is logged and skipped; deleting every snapshot loses nothing', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const first = await start(dir.path, '5');
    await randomWrites(first.cp.app, 21, 40);
    const head = first.cp.log.head();
    await until(async () => (await first.cp.log.snapshots?.list())?.length === 2);
    await first.cp.close();

    const reference = await start(dir.path, '0');
    const expected = await observe(reference.cp.app);
    await reference.cp.close();

    // Damage the newest snapshot: one character of its first chunk.
    const [older, newest] = (await withDb(dir.path, snapshotMetas)).map((k) => Number(k.slice(2, 18)));
    await withDb(dir.path, async (db) => {
      const key = `s!${String(newest).padStart(16, '0')}!c0000000`;
      const value = (await db.get(key)) as string;
      await db.put(key, value.replace('"name":"', '"name":"x'));
    });
    const damaged = await start(dir.path, '5');
    const warning = damaged.lines.find((l) => l.level === 40);
    expect(warning?.msg).toContain('snapshot is damaged');
    expect(warning?.reason).toContain('checksum does not match');
    expect(damaged.cp.startup.snapshot).toBe(older);
    expect(await observe(damaged.cp.app)).toEqual(expected);
    expect(damaged.cp.views.revision()).toBe(head);
    await damaged.cp.close();

    // Every snapshot gone: a full replay, logged, and the same state.
    await withDb(dir.path, async (db) => {
      const keys = await db.keys({ gte: 's!', lt: 's"' }).all();
      await db.batch(keys.map((key) => ({ type: 'del' as const, key })));
    });
    const none = await start(dir.path, '5');
    expect(none.cp.startup.snapshot).toBeUndefined();
    expect(none.cp.startup.replayed).toBe(head);
    expect(none.lines.some((l) => l.level === 40 && String(l.msg).includes('no usable snapshot'))).toBe(true);
    expect(await observe(none.cp.app)).toEqual(expected);
    // ... and the start writes a new one, since the log is longer than the interval.
    await until(async () => ((await none.cp.log.snapshots?.list())?.length ?? 0) === 1);
    await none.cp.close();
  }, 30_000);

  it('a start whose tail created more resources than its snapshot held writes one at once', async () => {
    const dir = tempDir();
    dirs.push(dir);
    const creates = async (cp: ControlPlane, from: number, n: number): Promise<void> => {
      for (let i = from; i < from + n; i++) {
        const res = await cp.app.inject({
          method: 'PUT',
          url: `/meshes/default/traffic-permissions/tp-${i}`,
          payload: {
            type: 'TrafficPermission',
            mesh: 'default',
            name: `tp-${i}`,
            sources: [{ match: { 'mesh.io/service': '*' } }],
            destinations: [{ match: { 'mesh.io/service': '*' } }],
          },
        });
        expect(res.statusCode).toBe(201);
      }
    };
    const first = await start(dir.path, '20');
    await creates(first.cp, 0, 30);
    const head1 = first.cp.log.head();
    await until(async () => {
      const [s] = (await first.cp.log.snapshots?.list()) ?? [];
      return s !== undefined && head1 - s.revision < Math.max(20, s.info?.resources ?? 0);
    });
    const [snapshot] = (await first.cp.log.snapshots?.list()) ?? [];
    await first.cp.close();

    // A tail of creates the snapshotter did not see (snapshots off), as after a crash before each quiet moment.
    const middle = await start(dir.path, '0');
    await creates(middle.cp, 30, 150);
    const head = middle.cp.log.head();
    await middle.cp.close();

    const last = await start(dir.path, '20');
    expect(last.cp.startup.snapshot).toBe(snapshot?.revision);
    const interval = Math.max(20, snapshot?.info?.resources ?? 0);
    expect(last.cp.startup.replayed).toBeGreaterThanOrEqual(2 * interval);
    // Past twice the interval: due at start-up, with no commit to prompt it.
    await until(async () => (await last.cp.log.snapshots?.list())?.[0]?.revision === head, 3000);
    expect(last.cp.log.head()).toBe(head);
    expect(last.cp.startup.snapshotResources).toBe(snapshot?.info?.resources);
    await last.cp.close();
  }, 30_000);
});
