import { describe, expect, it } from 'vitest';
import { DialledServices, sharedList } from '../../../src/policies/dialled-services.js';
import { seededInts } from '../../helpers/seeded.js';

describe('the dialled services of proxyless clients, per proxy and stream', () => {
  it('a proxy dials the union of its open streams, sorted, each once; an ended stream leaves it', () => {
    const d = new DialledServices();
    expect(d.of('m', 'dp')).toBeUndefined();
    expect(d.set('m', 'dp', 's1', ['b', 'a'])).toEqual({ before: undefined, after: ['a', 'b'] });
    expect(d.of('m', 'dp')).toEqual(['a', 'b']);
    // The same services again (in another order) change nothing.
    expect(d.set('m', 'dp', 's1', ['a', 'b', 'a'])).toBeUndefined();
    expect(d.set('m', 'dp', 's2', ['c', 'a'])).toEqual({ before: ['a', 'b'], after: ['a', 'b', 'c'] });
    expect(d.set('m', 'dp', 's3', ['b'])).toBeUndefined();
    expect(d.of('m', 'dp')).toEqual(['a', 'b', 'c']);
    expect(d.set('m', 'dp', 's2', undefined)).toEqual({ before: ['a', 'b', 'c'], after: ['a', 'b'] });
    // s1's a goes; s3 still dials b.
    expect(d.set('m', 'dp', 's1', undefined)).toEqual({ before: ['a', 'b'], after: ['b'] });
    expect(d.of('m', 'dp')).toEqual(['b']);
    // A stream that never told any services ends: nothing changes.
    expect(d.set('m', 'dp', 's9', undefined)).toBeUndefined();
    expect(d.set('m', 'dp', 's3', undefined)).toEqual({ before: ['b'], after: undefined });
    expect(d.of('m', 'dp')).toBeUndefined();
    expect(d.set('m', 'dp', 's3', undefined)).toBeUndefined();
  });

  it('keeps proxies and meshes apart, and a stream that dials nothing is no change', () => {
    const d = new DialledServices();
    d.set('m', 'dp', 's1', ['a']);
    d.set('n', 'dp', 's2', ['b']);
    d.set('m', 'other', 's3', ['c']);
    expect([d.of('m', 'dp'), d.of('n', 'dp'), d.of('m', 'other')]).toEqual([['a'], ['b'], ['c']]);
    expect(d.set('m', 'empty', 's4', [])).toBeUndefined();
    expect(d.of('m', 'empty')).toEqual([]);
    // Another proxy's stream key ends nothing here.
    expect(d.set('m', 'dp', 's3', undefined)).toBeUndefined();
    expect(d.of('m', 'dp')).toEqual(['a']);
  });

  it('matches a plain recomputation over random stream changes', () => {
    const d = new DialledServices();
    const want = new Map<string, Map<string, string[]>>();
    const rand = seededInts(7);
    const union = (p: string) => {
      const streams = want.get(p);
      if (!streams || streams.size === 0) return undefined;
      return [...new Set([...streams.values()].flat())].sort();
    };
    for (let step = 0; step < 3000; step++) {
      const p = `dp${rand(3)}`;
      const s = `s${rand(4)}`;
      const before = union(p);
      let told;
      if (rand(3) === 0) {
        want.get(p)?.delete(s);
        told = d.set('m', p, s, undefined);
      } else {
        const services = Array.from({ length: rand(4) }, () => 'abcde'[rand(5)] as string);
        if (!want.has(p)) want.set(p, new Map());
        want.get(p)?.set(s, services);
        told = d.set('m', p, s, services);
      }
      const after = union(p);
      const changed = JSON.stringify(before ?? []) !== JSON.stringify(after ?? []);
      expect(told, `the change told at ${step}`).toEqual(changed ? { before, after } : undefined);
      for (const q of ['dp0', 'dp1', 'dp2']) expect(d.of('m', q), `${q} at ${step}`).toEqual(union(q));
    }
  });

  it('hands out one shared, frozen list per set of services', () => {
    const a = sharedList(['y', 'x']);
    expect(a).toEqual(['x', 'y']);
    expect(Object.isFrozen(a)).toBe(true);
    expect(sharedList(['x', 'y'])).toBe(a);
    expect(sharedList(['x', 'y', 'x'])).toBe(a);
    // Names that hold the separator are not confused with a list of two.
    const joined = sharedList(['x\u0000y']);
    expect(joined).toEqual(['x\u0000y']);
    expect(sharedList(['x', 'y'])).toBe(a);
  });
});
