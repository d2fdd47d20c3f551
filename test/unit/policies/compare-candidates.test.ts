import { describe, expect, it } from 'vitest';
import { bestOf, compareCandidates } from '../../../src/policies/compare-candidates.js';
import { rankOf } from '../../../src/policies/tag-selector.js';
import { at, policy } from '../../helpers/policies.js';

const candidate = (name: string, seconds: number, match: Record<string, string>) => ({
  policy: policy('ProxyTemplate', name, { creationTime: at(seconds) }),
  rank: rankOf(match),
});

// kumahq/kuma 2.0.0 pkg/core/policy/dataplane_matcher_test.go: "two policies with the same rank
// (latest should be picked)" and DataplanePolicyByName (policies are sorted by name first, and only a
// strictly better rank or a later creation time replaces the best so far).
describe('compareCandidates', () => {
  it('on equal rank, the later creationTime wins', () => {
    const b = candidate('b', 1, { app: 'example' });
    const a = candidate('a', 0, { app: 'example' });
    expect(bestOf([a, b])?.policy.name).toBe('b');
    expect(bestOf([b, a])?.policy.name).toBe('b');
  });

  it('on equal rank and creationTime, the name that sorts first wins', () => {
    const last = candidate('last', 1, { app: 'example' });
    const first = candidate('first', 1, { app: 'example' });
    expect(bestOf([last, first])?.policy.name).toBe('first');
    expect([last, first].sort(compareCandidates).map((c) => c.policy.name)).toEqual(['first', 'last']);
  });

  it('a better rank wins over a later creationTime', () => {
    const older = candidate('older', 0, { app: 'example', version: '1.0' });
    const newer = candidate('newer', 5, { app: 'example' });
    expect(bestOf([newer, older])?.policy.name).toBe('older');
  });

  it('has no best among no candidates', () => {
    expect(bestOf([])).toBeUndefined();
  });
});
