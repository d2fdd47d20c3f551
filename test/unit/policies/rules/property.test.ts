/**
 * The definition of the rules, checked on random item lists: for a peer with a value for every
 * key the items mention, the rule `computeRule` finds has the merge, in order, of the confs of
 * the items whose `targetRef` the peer satisfies, and those items' policies as origins. (A peer
 * lacking a key the rules mention matches no rule with that key, negated or not, as in Kuma;
 * outbounds always carry the service tag, the only key a `to` item can name.)
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  buildRules,
  computeRule,
  mergeConfs,
  subsetFromTags,
  type PolicyItem,
} from '../../../../src/policies/rules/index.js';
import type { TargetRef } from '../../../../src/policies/target-ref-match.js';
import { SVC } from '../../../helpers/policies.js';

const value = fc.constantFrom('1', '2', '3');

const targetRef: fc.Arbitrary<TargetRef> = fc.oneof(
  fc.constant({ kind: 'Mesh' }),
  value.map((name) => ({ kind: 'MeshService', name })),
  fc.record({ env: value, zone: value }, { requiredKeys: [] }).map((tags) => ({ kind: 'MeshSubset', tags })),
  fc
    .tuple(value, fc.record({ env: value }, { requiredKeys: [] }))
    .map(([name, tags]) => ({ kind: 'MeshServiceSubset', name, tags })),
);

const item: fc.Arbitrary<PolicyItem> = fc.record({
  targetRef,
  conf: fc.record(
    {
      x: fc.integer(),
      y: fc.array(fc.integer(), { maxLength: 2 }),
      o: fc.record({ p: fc.integer(), q: fc.integer() }, { requiredKeys: [] }),
    },
    { requiredKeys: [] },
  ),
  origin: fc.constantFrom('p1', 'p2', 'p3').map((name) => ({ type: 'X', mesh: 'm', name })),
});

const peer = fc.record({ [SVC]: value, env: value, zone: value }) as fc.Arbitrary<Record<string, string>>;

/** The tags a targetRef asks of a peer. */
function wants(ref: TargetRef): Record<string, string> {
  if (ref.kind === 'Mesh') return {};
  if (ref.kind === 'MeshSubset') return { ...ref.tags };
  return { ...(ref.tags ?? {}), [SVC]: ref.name ?? '' };
}

describe('buildRules and computeRule, by definition', () => {
  it('the computed rule of a peer is the ordered merge of the items it satisfies', () => {
    fc.assert(
      fc.property(fc.array(item, { maxLength: 6 }), peer, (items, tags) => {
        const covering = items.filter((i) =>
          Object.entries(wants(i.targetRef)).every(([k, v]) => tags[k] === v),
        );
        const rule = computeRule(buildRules(items), subsetFromTags(tags));
        if (covering.length === 0) {
          expect(rule).toBeUndefined();
          return;
        }
        expect(rule?.conf).toEqual(
          mergeConfs(
            'X',
            covering.map((i) => i.conf),
          ),
        );
        expect(rule?.origins.map((o) => o.name)).toEqual(
          [...new Set(covering.map((i) => i.origin.name))].sort(),
        );
      }),
      { numRuns: 200 },
    );
  });
});
