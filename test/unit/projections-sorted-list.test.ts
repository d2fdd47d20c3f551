import { describe, expect, it } from 'vitest';
import { SortedList } from '../../src/projections/sorted-list.js';

const item = (key: string) => ({ key });

/** A seeded pseudo-random generator so failures reproduce. */
function rng(seed: number): () => number {
  let s = seed;
  return () => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return s / 0x7fffffff;
  };
}

describe('SortedList', () => {
  it('matches a sorted Set under random inserts, removes and reads (bulk and one by one)', () => {
    const rand = rng(42);
    const keys = new SortedList<{ key: string }>();
    const model = new Set<string>();
    for (let round = 0; round < 200; round++) {
      const burst = rand() < 0.3 ? 500 : 5;
      for (let i = 0; i < burst; i++) {
        const k = `k${Math.floor(rand() * 3000)}`;
        if (rand() < 0.7) {
          if (!model.has(k)) keys.insert(item(k));
          model.add(k);
        } else {
          keys.remove(k);
          model.delete(k);
        }
      }
      const expected = [...model].sort();
      expect(keys.size).toBe(expected.length);
      expect(keys.slice(0, keys.size).map((x) => x.key)).toEqual(expected);
      const probe = `k${Math.floor(rand() * 3000)}`;
      expect(keys.lowerBound(probe)).toBe(expected.filter((k) => k < probe).length);
    }
  });

  it('slices pages at any offset', () => {
    const keys = new SortedList<{ key: string }>();
    for (let i = 999; i >= 0; i--) keys.insert(item(String(i).padStart(4, '0')));
    expect(keys.slice(990, 1000).map((x) => x.key)).toEqual(
      Array.from({ length: 10 }, (_, i) => String(990 + i).padStart(4, '0')),
    );
    expect(keys.at(0).key).toBe('0000');
  });
});
