import { describe, expect, it } from 'vitest';

import { createMergedStatus, mergeInsights } from '../../src/status/merged-status.js';
import { createStatusStore } from '../../src/status/status-store.js';

const sub = (id: string, connectTime: string, disconnectTime?: string) =>
  disconnectTime === undefined ? { id, connectTime } : { id, connectTime, disconnectTime };

describe('runtime status merged over several instances', () => {
  it('merges subscriptions oldest first, keeps the last ones, and prefers the open copy of one', () => {
    const a = {
      subscriptions: [
        sub('s1', '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z'),
        sub('s3', '2026-01-01T00:03:00Z'),
      ],
    };
    const b = {
      mTLS: 'b',
      subscriptions: [
        sub('s2', '2026-01-01T00:02:00Z'),
        sub('s3', '2026-01-01T00:03:00Z', '2026-01-01T00:04:00Z'),
      ],
    };
    expect(mergeInsights([a, b], 10)).toEqual({
      subscriptions: [
        sub('s1', '2026-01-01T00:00:00Z', '2026-01-01T00:01:00Z'),
        sub('s2', '2026-01-01T00:02:00Z'),
        sub('s3', '2026-01-01T00:03:00Z'),
      ],
    });
    expect(mergeInsights([a, b], 2)?.subscriptions?.map((s) => s.id)).toEqual(['s2', 's3']);
    // The other fields come from the part whose newest subscription connected last.
    const c = { mTLS: 'c', subscriptions: [sub('s4', '2026-01-01T00:05:00Z')] };
    expect(mergeInsights([b, c], 10)).toMatchObject({ mTLS: 'c' });
  });

  it("reads this instance's insights merged with the others', and publishes only its own", () => {
    const merged = createMergedStatus(createStatusStore(), 'me');
    const changes: string[] = [];
    merged.store.onChange((mesh, name) => changes.push(`${mesh}/${name ?? ''}`));
    merged.store.setZoneInsight('east', { subscriptions: [sub('mine', '2026-01-01T00:02:00Z')] });
    expect(merged.takeChanged()).toEqual([
      {
        kind: 'zone',
        key: 'east',
        instance: 'me',
        value: JSON.stringify({ subscriptions: [sub('mine', '2026-01-01T00:02:00Z')] }),
      },
    ]);
    expect(merged.takeChanged()).toEqual([]);
    const theirs = { subscriptions: [sub('theirs', '2026-01-01T00:01:00Z', '2026-01-01T00:02:00Z')] };
    merged.applyRemote([
      { kind: 'zone', key: 'east', instance: 'other', value: JSON.stringify(theirs) },
      { kind: 'zone', key: 'east', instance: 'me', value: null },
    ]);
    expect(merged.store.zoneInsight('east')?.subscriptions?.map((s) => s.id)).toEqual(['theirs', 'mine']);
    expect(merged.zoneOpenElsewhere('east')).toBeUndefined();
    merged.applyRemote([
      {
        kind: 'dataplane',
        key: 'default/web-1',
        instance: 'other',
        value: JSON.stringify({ subscriptions: [sub('p', '2026-01-01T00:00:00Z')] }),
      },
    ]);
    expect(merged.store.dataplaneInsight('default', 'web-1')?.subscriptions).toEqual([
      sub('p', '2026-01-01T00:00:00Z'),
    ]);
    merged.applyRemote([
      {
        kind: 'zone',
        key: 'west',
        instance: 'other',
        value: JSON.stringify({ subscriptions: [sub('w', '2026-01-01T00:00:00Z')] }),
      },
    ]);
    expect(merged.zoneOpenElsewhere('west')).toEqual(sub('w', '2026-01-01T00:00:00Z'));
    // The same row again changes nothing; a dropped row removes that instance's part.
    const before = changes.length;
    merged.applyRemote([
      {
        kind: 'zone',
        key: 'west',
        instance: 'other',
        value: JSON.stringify({ subscriptions: [sub('w', '2026-01-01T00:00:00Z')] }),
      },
    ]);
    expect(changes.length).toBe(before);
    merged.applyRemote([{ kind: 'zone', key: 'west', instance: 'other', value: null }]);
    expect(merged.store.zoneInsight('west')).toBeUndefined();
    expect(changes).toContain('default/web-1');
  });
});
