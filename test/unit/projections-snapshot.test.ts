import { describe, expect, it } from 'vitest';
import { sealEntry, GENESIS_HASH } from '../../src/events/hash.js';
import type { EventInput, LogEntry } from '../../src/events/types.js';
import { createResourceViews } from '../../src/projections/resource-views.js';
import { restoreSnapshot, trackSnapshotSource } from '../../src/projections/snapshot.js';
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
