import { describe, expect, it } from 'vitest';

import {
  SNAPSHOT_PREFIX,
  entryKey,
  historyKey,
  historyPrefix,
  isSnapshotMetaKey,
  prefixRange,
  revisionRange,
  snapshotChunkKey,
  snapshotMetaKey,
  snapshotRevisionOf,
} from '../../../src/events/keys.js';

describe('event log keys', () => {
  it('sorts entry keys in revision order', () => {
    const revisions = [1, 9, 10, 100, 12345, 2 ** 40];
    const keys = revisions.map(entryKey);
    expect([...keys].sort()).toEqual(keys);
    expect(entryKey(42)).toBe('e!0000000000000042');
  });

  it("keeps one resource's history range apart from its neighbours", () => {
    const { gte, lt } = prefixRange(historyPrefix('TrafficPermission', 'a', 'b'));
    const inRange = (key: string) => key >= gte && key < lt;
    expect(inRange(historyKey('TrafficPermission', 'a', 'b', 1))).toBe(true);
    expect(inRange(historyKey('TrafficPermission', 'a', 'b', 2 ** 40))).toBe(true);
    expect(inRange(historyKey('TrafficPermission', 'a', 'bc', 1))).toBe(false);
    expect(inRange(historyKey('TrafficPermission', 'a', 'b.c', 1))).toBe(false);
    expect(inRange(historyKey('TrafficPermission', 'a', 'b-c', 1))).toBe(false);
    expect(inRange(historyKey('TrafficPermission', 'ab', 'b', 1))).toBe(false);
    expect(inRange(historyKey('TrafficPermission', undefined, 'b', 1))).toBe(false);
  });

  it('sorts history keys by (mesh, name, revision)', () => {
    const keys = [
      historyKey('K', 'a', 'b', 2),
      historyKey('K', 'a', 'b', 10),
      historyKey('K', 'a', 'b-c', 1),
      historyKey('K', 'a', 'b.c', 1),
      historyKey('K', 'a', 'b0', 1),
      historyKey('K', 'a-b', 'a', 1),
    ];
    expect([...keys].sort()).toEqual(keys);
  });

  it('spells snapshot keys as stored, reads their revision back, and sorts chunks before the meta', () => {
    expect(snapshotMetaKey(42)).toBe('s!0000000000000042!meta');
    expect(snapshotChunkKey(42, 3)).toBe('s!0000000000000042!c0000003');
    for (const revision of [1, 42, 2 ** 40]) {
      expect(snapshotRevisionOf(snapshotMetaKey(revision))).toBe(revision);
      expect(snapshotRevisionOf(snapshotChunkKey(revision, 12))).toBe(revision);
    }
    expect(isSnapshotMetaKey(snapshotMetaKey(7))).toBe(true);
    expect(isSnapshotMetaKey(snapshotChunkKey(7, 0))).toBe(false);
    const keys = [
      snapshotChunkKey(7, 0),
      snapshotChunkKey(7, 9),
      snapshotChunkKey(7, 10),
      snapshotMetaKey(7),
    ];
    expect([...keys].sort()).toEqual(keys);
    const { gte, lt } = prefixRange(SNAPSHOT_PREFIX);
    expect(keys.every((key) => key >= gte && key < lt)).toBe(true);
  });

  it('normalizes read ranges', () => {
    expect(revisionRange(0)).toEqual({ from: 1, to: Infinity });
    expect(revisionRange(2.5, 7.5)).toEqual({ from: 3, to: 7 });
    expect(revisionRange(Number.NaN, Infinity)).toEqual({ from: 1, to: Infinity });
  });
});
