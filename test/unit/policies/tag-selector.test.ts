import { describe, expect, it } from 'vitest';
import {
  combineRanks,
  compareRanks,
  rankOf,
  tagSelectorMatches,
} from '../../../src/policies/tag-selector.js';
import { SVC } from '../../helpers/policies.js';

// Cases from kumahq/kuma 2.0.0 api/mesh/v1alpha1/dataplane_helpers.go (TagSelector.Matches, Rank,
// CompareTo) as the tests of pkg/core/policy/dataplane_matcher_test.go use them.
describe('tag selector', () => {
  const inbound = { [SVC]: 'example', app: 'example', version: '1.0', env: 'prod' };

  it('matches when every key is present with an equal value, or the value is `*` (wildcard)', () => {
    expect(tagSelectorMatches({ app: 'example', version: '1.0' }, inbound)).toBe(true);
    expect(tagSelectorMatches({ app: '*', version: '*' }, inbound)).toBe(true);
    expect(tagSelectorMatches({ [SVC]: '*' }, inbound)).toBe(true);
    expect(tagSelectorMatches({ app: 'example', version: '2.0' }, inbound)).toBe(false);
    // `*` still needs the key to be there.
    expect(tagSelectorMatches({ app: 'example', region: '*' }, inbound)).toBe(false);
    // A value is never a pattern on the tag side.
    expect(tagSelectorMatches({ app: 'example' }, { app: '*' })).toBe(false);
  });

  it('takes only a tag set’s own tags: a key every object inherits (constructor, toString) is absent', () => {
    expect(tagSelectorMatches({ constructor: '*' }, inbound)).toBe(false);
    expect(tagSelectorMatches({ [SVC]: 'example', toString: '*' }, inbound)).toBe(false);
    expect(tagSelectorMatches({ constructor: '*' }, { constructor: 'x' })).toBe(true);
  });

  it('ranks by number of tags first, then by number of exact values', () => {
    const twoWildcards = rankOf({ app: '*', version: '*' });
    const oneExact = rankOf({ app: 'example' });
    const twoExact = rankOf({ app: 'example', version: '1.0' });
    const oneExactOneWildcard = rankOf({ app: 'example', version: '*' });
    expect(twoWildcards).toEqual({ exact: 0, wildcard: 2 });
    expect(compareRanks(twoWildcards, oneExact)).toBeGreaterThan(0);
    expect(compareRanks(twoExact, oneExactOneWildcard)).toBeGreaterThan(0);
    expect(compareRanks(oneExactOneWildcard, twoWildcards)).toBeGreaterThan(0);
    expect(compareRanks(oneExact, rankOf({ version: '2.0' }))).toBe(0);
  });

  it('ranks a source+destination pair by the sum of both', () => {
    const pair = combineRanks(rankOf({ [SVC]: 'web', version: '*' }), rankOf({ [SVC]: 'redis' }));
    expect(pair).toEqual({ exact: 2, wildcard: 1 });
    expect(compareRanks(pair, rankOf({ [SVC]: 'web', version: 'v1' }))).toBeGreaterThan(0);
  });
});
