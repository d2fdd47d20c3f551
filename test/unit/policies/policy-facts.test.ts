import { describe, expect, it } from 'vitest';
import {
  bestRank,
  NO_MATCH,
  policyFacts,
  rankFor,
  rankNumber,
  serviceRank,
} from '../../../src/policies/policy-facts.js';
import type { PolicyResource } from '../../../src/policies/policy-resource.js';
import { bestSelectorRank } from '../../../src/policies/select-policies.js';
import { SVC, sel } from '../../helpers/policies.js';
import { seededInts } from '../../helpers/seeded.js';

/** What the compiled matching must answer: `bestSelectorRank` as a number, or `NO_MATCH`. */
const reference = (
  selectors: ReturnType<typeof sel>,
  tagSets: ReadonlyArray<Record<string, string>>,
): number => {
  const r = bestSelectorRank(selectors, tagSets);
  return r === undefined ? NO_MATCH : rankNumber(r);
};

/** A seeded generator of selectors and tag sets over a few keys and values, so that they meet often. */
function world(seed: number) {
  const rand = seededInts(seed);
  const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)];
  const services = ['a', 'b', 'c'];
  const selector = (): Record<string, string> => {
    const m: Record<string, string> = {};
    if (rand(5) > 0) m[SVC] = pick([...services, '*']);
    if (rand(3) === 0) m.version = pick(['v1', 'v2', '*']);
    if (rand(4) === 0) m.zone = pick(['z1', '*']);
    // A key that every plain object has through its prototype: no tag set has it as a tag.
    const inherited: string = 'constructor';
    if (rand(30) === 0) m[inherited] = pick(['*', 'x']);
    return m;
  };
  const tags = (): Record<string, string> => {
    const t: Record<string, string> = { [SVC]: pick(services) };
    if (rand(2) === 0) t.version = pick(['v1', 'v2']);
    if (rand(3) === 0) t.zone = 'z1';
    return t;
  };
  // Up to 14 selectors: lists longer than 8 are indexed by service.
  const selectors = () => sel(...Array.from({ length: 1 + rand(14) }, selector));
  return { rand, selectors, tags };
}

describe('policy facts: compiled selectors answer as the selectors do', () => {
  it('bestRank, rankFor and serviceRank equal bestSelectorRank over random selectors and tag sets', () => {
    let matched = 0;
    let indexed = 0;
    for (let seed = 1; seed <= 300; seed++) {
      const w = world(seed);
      const sources = w.selectors();
      const destinations = w.selectors();
      const policy: PolicyResource = {
        type: 'Timeout',
        name: `p${seed}`,
        creationTime: 't',
        sources,
        destinations,
      };
      const facts = policyFacts(policy);
      if (facts.sources.byService) indexed++;
      for (let k = 0; k < 10; k++) {
        const tagSets = Array.from({ length: w.rand(3) }, w.tags);
        expect(bestRank(facts.sources, tagSets), `seed ${seed}`).toBe(reference(sources, tagSets));
        if (bestRank(facts.sources, tagSets) !== NO_MATCH) matched++;
        const one = w.tags();
        expect(rankFor(facts.destinations, one), `seed ${seed}`).toBe(reference(destinations, [one]));
        const service = one[SVC];
        expect(serviceRank(facts.destinations, service), `seed ${seed}`).toBe(
          reference(destinations, [{ [SVC]: service }]),
        );
      }
    }
    expect(matched).toBeGreaterThan(500);
    expect(indexed).toBeGreaterThan(50);
  });

  it('keeps one set of facts per policy version, and reads its creation time and best source', () => {
    const policy: PolicyResource = {
      type: 'RateLimit',
      name: 'r',
      creationTime: '2026-01-02T03:04:05.678Z',
      sources: sel({ [SVC]: 'a' }, { [SVC]: 'b', version: '*' }),
    };
    const facts = policyFacts(policy);
    expect(policyFacts(policy)).toBe(facts);
    expect(policyFacts({ ...policy })).not.toBe(facts);
    expect(facts.time).toBe(Date.parse('2026-01-02T03:04:05.678Z'));
    expect(facts.sourceOrder).toBe(rankNumber({ exact: 1, wildcard: 1 }));
    expect(facts.destinations.list).toEqual([]);
    expect(bestRank(facts.destinations, [{ [SVC]: 'a' }])).toBe(NO_MATCH);
  });
});
