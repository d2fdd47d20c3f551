import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { sealEntry, GENESIS_HASH } from '../../src/events/hash.js';
import type { EventInput, LogEntry } from '../../src/events/types.js';
import { createResourceViews } from '../../src/projections/resource-views.js';
import type { Snapshot, SnapshotItem } from '../../src/events/snapshot-store.js';
import type { SnapshotSource } from '../../src/projections/snapshot.js';
import {
  createSnapshotter,
  QUIET_MS,
  restoreSnapshot,
  trackSnapshotSource,
} from '../../src/projections/snapshot.js';
import { registry } from '../../src/resources/registry.js';

const actor = { name: 't', groups: [], address: 'local' };

/** A sealed log of creates, updates and deletes over two meshes, a second apart. */
function log(): LogEntry[] {
  const inputs: EventInput[] = [];
  const tp = (mesh: string, name: string, operation: 'create' | 'update' | 'delete', v = 'a'): EventInput => {
    const r = { type: 'TrafficPermission', mesh, name, creationTime: 'c', modificationTime: v, sources: [] };
    return {
      kind: 'TrafficPermission',
      mesh,
      name,
      operation,
      ...(operation === 'delete' ? { previous: r } : { resource: r }),
      actor,
      origin: 'local',
    };
  };
  const mesh = (name: string): EventInput => ({
    kind: 'Mesh',
    name,
    operation: 'create',
    resource: { type: 'Mesh', name, creationTime: 'c', modificationTime: 'c' },
    actor,
    origin: 'local',
  });
  inputs.push(
    mesh('a'),
    mesh('b'),
    tp('a', 'p1', 'create'),
    tp('b', 'p2', 'create'),
    tp('a', 'p1', 'update', 'v2'),
  );
  inputs.push(tp('a', 'p3', 'create'), tp('b', 'p2', 'delete'), tp('a', 'p3', 'update', 'v3'));
  let prev = GENESIS_HASH;
  return inputs.map((input, i) => {
    const { entry } = sealEntry(input, i + 1, new Date(Date.UTC(2026, 0, 1, 0, 0, i)).toISOString(), prev);
    prev = entry.hash;
    return entry;
  });
}

describe('snapshot capture and restore', () => {
  it('captures the same state whether entries were applied in order or newest first (last change only)', () => {
    const entries = log();
    const inOrder = createResourceViews(registry);
    const a = trackSnapshotSource(registry, inOrder);
    inOrder.apply(entries);

    const newestFirst = createResourceViews(registry);
    const b = trackSnapshotSource(registry, newestFirst);
    const seen = new Set<string>();
    for (const e of [...entries].reverse()) {
      const key = `${e.kind}/${e.mesh}/${e.name}`;
      if (seen.has(key)) continue;
      seen.add(key);
      newestFirst.apply([e]);
    }
    newestFirst.advance(entries.length);

    const snapshot = a.capture();
    expect(b.capture()).toEqual(snapshot);
    expect(snapshot.revision).toBe(8);
    expect(snapshot.hash).toBe(entries[7].hash);
    // Mesh b's last change is the delete at revision 7, though nothing of it changed since.
    expect(snapshot.meshTimes).toEqual({ a: entries[7].time, b: entries[6].time });
    expect(snapshot.items.map((i) => [i.name, i.revision])).toEqual([
      ['a', 1],
      ['b', 2],
      ['p1', 5],
      ['p3', 8],
    ]);

    const restored = createResourceViews(registry);
    const c = trackSnapshotSource(registry, restored);
    restoreSnapshot(restored, c, snapshot);
    expect(restored.revision()).toBe(8);
    expect(c.capture()).toEqual(snapshot);
  });
});

describe('snapshot cadence', () => {
  // The clock alone is faked (a due snapshot waits for a quiet moment); promises run for real.
  beforeEach(() => {
    vi.useFakeTimers({ toFake: ['Date', 'setTimeout', 'clearTimeout'] });
  });
  afterEach(() => {
    vi.useRealTimers();
  });
  const turns = async () => {
    for (let i = 0; i < 3; i++) await new Promise((r) => setImmediate(r));
  };

  /** A snapshotter over a fake store and source, its views at `head` (default `last`, or 0). */
  function rig(opts: { every: number; last?: number; resources?: number; head?: number }) {
    const written: Array<{ revision: number; resources: number }> = [];
    const state = { head: opts.head ?? opts.last ?? 0, resources: opts.resources ?? 0, busy: 0 };
    const store = {
      list: async () => [],
      read: async () => {
        throw new Error('unused');
      },
      write: async (s: Snapshot) => {
        written.push({ revision: s.revision, resources: s.items.length });
        return true;
      },
      retain: async () => 0,
    };
    const source: SnapshotSource = {
      head: () => ({ revision: state.head, hash: 'h', time: 't' }),
      capture: () =>
        ({
          revision: state.head,
          hash: 'h',
          time: 't',
          meshTimes: {},
          resources: state.resources,
          chunks: 0,
          items: Array.from({ length: state.resources }, () => ({}) as SnapshotItem),
        }) as Snapshot,
      reset: () => undefined,
    };
    const { head: _head, ...options } = opts;
    const snapshotter = createSnapshotter({ store, source, ...options, loopBusy: () => state.busy });
    /**
     * Commits up to `head` one entry at a time with `resources` stored, `gapMs` apart on the clock
     * (by default long enough for the log to be quiet after each), letting due snapshots finish.
     */
    const commitTo = async (head: number, resources: (rev: number) => number, gapMs = QUIET_MS) => {
      while (state.head < head) {
        state.head += 1;
        state.resources = resources(state.head);
        snapshotter.committed();
        await turns();
        vi.advanceTimersByTime(gapMs);
        await turns();
      }
    };
    return { written, commitTo, snapshotter, state };
  }

  it('with fewer resources than `every`, writes one every `every` entries', async () => {
    const { written, commitTo } = rig({ every: 10 });
    await commitTo(35, () => 4);
    expect(written.map((w) => w.revision)).toEqual([10, 20, 30]);
  });

  it('with more resources than `every`, waits for as many entries as the last snapshot held', async () => {
    const { written, commitTo } = rig({ every: 10 });
    // Every entry creates a resource: a fixed interval would snapshot at 10, 20, 30, ... 120.
    await commitTo(120, (rev) => rev);
    expect(written).toEqual([
      { revision: 10, resources: 10 },
      { revision: 20, resources: 20 },
      { revision: 40, resources: 40 },
      { revision: 80, resources: 80 },
    ]);
  });

  it('counts the resources the loaded snapshot held toward the first interval', async () => {
    const { written, commitTo } = rig({ every: 10, last: 100, resources: 50 });
    await commitTo(160, () => 50);
    expect(written.map((w) => w.revision)).toEqual([150]);
  });

  it('counts from the loaded snapshot: a start whose tail is past twice the interval writes one at once', async () => {
    // The tail created 70 resources: the interval stays the 30 the snapshot held, not the 100 now.
    const { written, snapshotter, state } = rig({ every: 10, last: 100, resources: 30, head: 170 });
    state.resources = 100;
    snapshotter.committed();
    await turns();
    expect(written).toEqual([{ revision: 170, resources: 100 }]);
  });

  it('a start whose tail is past the interval writes one at the first quiet moment', async () => {
    const { written, snapshotter } = rig({ every: 10, last: 100, resources: 30, head: 140 });
    snapshotter.committed();
    await turns();
    vi.advanceTimersByTime(QUIET_MS - 1);
    await turns();
    expect(written).toEqual([]);
    vi.advanceTimersByTime(1);
    await turns();
    expect(written.map((w) => w.revision)).toEqual([140]);
  });

  it('a start whose tail is past the interval under commits that never pause writes one at twice it', async () => {
    const { written, commitTo, snapshotter } = rig({ every: 10, last: 100, resources: 30, head: 140 });
    snapshotter.committed();
    await commitTo(175, () => 30, 10);
    expect(written.map((w) => w.revision)).toEqual([160]);
  });

  it('writes none when `every` is 0', async () => {
    const { written, commitTo } = rig({ every: 0 });
    await commitTo(30, () => 1);
    expect(written).toEqual([]);
  });

  it('a due snapshot waits until no commit came for the quiet time', async () => {
    const { written, commitTo } = rig({ every: 10 });
    // A burst: a commit every 10 ms from revision 1 to 15; the snapshot due at 10 waits.
    await commitTo(15, () => 4, 10);
    expect(written).toEqual([]);
    vi.advanceTimersByTime(QUIET_MS - 20);
    await turns();
    expect(written).toEqual([]);
    vi.advanceTimersByTime(20);
    await turns();
    // Written once the log was quiet, with the state at that moment.
    expect(written.map((w) => w.revision)).toEqual([15]);
  });

  it('nor while the event loop is busy (a burst being streamed), until it is not', async () => {
    const { written, commitTo, state } = rig({ every: 10 });
    state.busy = 0.9;
    await commitTo(12, () => 4, 10);
    vi.advanceTimersByTime(4 * QUIET_MS);
    await turns();
    expect(written).toEqual([]);
    state.busy = 0.1;
    vi.advanceTimersByTime(QUIET_MS);
    await turns();
    expect(written.map((w) => w.revision)).toEqual([12]);
  });

  it('under commits that never pause, writes one anyway at twice the interval', async () => {
    const { written, commitTo } = rig({ every: 10 });
    await commitTo(45, () => 4, 10);
    expect(written.map((w) => w.revision)).toEqual([20, 40]);
  });

  it('snapshotNow does not wait for quiet, and a closed snapshotter writes nothing', async () => {
    const { written, commitTo, snapshotter } = rig({ every: 10 });
    await commitTo(12, () => 4, 10);
    expect(await snapshotter.snapshotNow()).toBe(12);
    await commitTo(25, () => 4, 10);
    await snapshotter.close();
    vi.advanceTimersByTime(10 * QUIET_MS);
    await turns();
    expect(written.map((w) => w.revision)).toEqual([12]);
  });
});
