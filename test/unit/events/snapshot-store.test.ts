import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { createLevelLog, type LevelLog } from '../../../src/events/level-log.js';
import type { Snapshot, SnapshotStore } from '../../../src/events/snapshot-store.js';
import { SnapshotDamaged } from '../../../src/events/snapshot-store.js';
import type { WireResource } from '../../../src/events/types.js';
import { tempDir } from '../../helpers/control-plane.js';

const T = '2026-01-01T00:00:00.000Z';
const actor = { name: 't', groups: [], address: 'local' };
const zone = (name: string): WireResource => ({ type: 'Zone', name, creationTime: T, modificationTime: T });

describe('LevelDB snapshot store', () => {
  let dir: ReturnType<typeof tempDir>;
  let log: LevelLog;
  let store: SnapshotStore;
  let snapshot: Snapshot;

  beforeEach(async () => {
    dir = tempDir();
    log = createLevelLog({ path: dir.path });
    await log.open();
    const { entries, durable } = log.append(
      Array.from({ length: 2500 }, (_, i) => ({
        kind: 'Zone',
        name: `z-${i}`,
        operation: 'create' as const,
        resource: zone(`z-${i}`),
        actor,
        origin: 'local',
      })),
    );
    await durable;
    const last = entries[entries.length - 1];
    store = log.snapshots as SnapshotStore;
    snapshot = {
      revision: last.revision,
      hash: last.hash,
      time: last.time,
      meshTimes: {},
      resources: entries.length,
      chunks: 0,
      items: entries.map((e) => ({
        kind: 'Zone',
        name: e.name,
        revision: e.revision,
        origin: 'local',
        resource: zone(e.name),
      })),
    };
  });
  afterEach(async () => {
    await log.close();
    dir.cleanup();
  });

  it('writes in chunks and reads back what it wrote', async () => {
    expect(await store.write(snapshot)).toBe(true);
    const listed = await store.list();
    expect(listed.map((s) => [s.revision, s.info?.resources, s.info?.chunks])).toEqual([[2500, 2500, 3]]);
    const read = await store.read(2500);
    expect(read.items).toEqual(snapshot.items);
    expect(read.hash).toBe(snapshot.hash);
  });

  it("ends a chunk at 16 MiB however few resources it holds (1,000 of 1 MB pass V8's longest string)", async () => {
    const big = 'x'.repeat(1_000_000);
    const items = snapshot.items.map((item, i) =>
      i < 40 ? { ...item, resource: { ...item.resource, data: big } as WireResource } : item,
    );
    expect(await store.write({ ...snapshot, items })).toBe(true);
    // 17 large ones fill a chunk twice, then 6 large and 994 small ones, 1000 and 460 small ones.
    expect((await store.list()).map((s) => s.info?.chunks)).toEqual([5]);
    expect((await store.read(2500)).items).toEqual(items);
  });

  it('a write cut short has no meta: never listed, and its chunks go at the next retain', async () => {
    let chunks = 0;
    expect(await store.write(snapshot, () => ++chunks > 2)).toBe(false);
    expect(await store.list()).toEqual([]);
    await expect(store.read(2500)).rejects.toBeInstanceOf(SnapshotDamaged);
    expect(await store.retain([])).toBe(1);
  });

  it('refuses a snapshot whose hash is not the log entry at its revision', async () => {
    await store.write({ ...snapshot, hash: 'f'.repeat(64) });
    await expect(store.read(2500)).rejects.toThrow(
      'its hash is not the hash of the log entry at its revision',
    );
  });

  it('retain keeps only the given snapshots', async () => {
    await store.write(snapshot);
    await store.write({
      ...snapshot,
      revision: 2000,
      hash: (await firstHash(log, 2000)) as string,
      items: snapshot.items.slice(0, 2000),
    });
    expect((await store.list()).map((s) => s.revision)).toEqual([2500, 2000]);
    expect(await store.retain([2500])).toBe(1);
    expect((await store.list()).map((s) => s.revision)).toEqual([2500]);
    expect((await store.read(2500)).items.length).toBe(2500);
  });
});

async function firstHash(log: LevelLog, revision: number): Promise<string | undefined> {
  for await (const e of log.read(revision, revision)) return e.hash;
  return undefined;
}
