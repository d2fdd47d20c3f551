/**
 * Rules: what a list of `targetRef` items (`from`, `to` or single items) configures for every
 * group of peers (Kuma 2.0 `BuildRules` and `Rules.Compute`, MADR 007).
 *
 * Each item names a group of peers with its `targetRef` — a subset: `Mesh` is every peer,
 * `MeshService` the peers with `mesh.io/service: name`, `MeshSubset` those with its tags — and a
 * `default` conf. Items apply in order, later ones overriding earlier ones, so the conf of one
 * peer is the merge of the confs of the items whose subsets contain it (merge-confs.ts).
 *
 * The rules answer that question ahead of time, for every peer at once. Peers differ only in how
 * they stand towards the tags the items mention: for each tag `k: v`, a peer has it or has not
 * (`k: !v`, a negated tag). So the peers fall into the combinations of those tags, each taken
 * positive or negated (combinations.ts), minus the impossible ones (`k: a` and `k: b`). Every
 * peer lies in exactly one combination, and every item's subset either contains a combination
 * wholly or not at all; so one conf — the merge of the items that contain it — holds for the whole
 * combination. Each combination that some item covers becomes a rule: its subset, the merged conf,
 * and the policies the items came from (origins). Combinations no item covers have no rule.
 *
 * `computeRule(rules, subset)` finds the conf of a subset of peers (an outbound's tags): the first
 * rule whose subset contains it. Rules are ordered by their positive tags, most first (stable
 * otherwise), so a peer described only by positive tags meets the most specific rule first.
 */
import { combinations } from './combinations.js';
import { mergeConfs } from './merge-confs.js';
import { isSubset, numPositive, subsetOfTargetRef, type Subset, type Tag } from './subset.js';
import type { TargetRef } from '../target-ref-match.js';

/** The policy an item came from. */
export interface Origin {
  type: string;
  mesh: string;
  name: string;
}

/** One `from`/`to` entry, or a single-item policy: what it targets, its conf and its policy. */
export interface PolicyItem {
  targetRef: TargetRef;
  conf: unknown;
  origin: Origin;
}

/** The conf of every peer in `subset`, and the policies it was built from (by name, no repeats). */
export interface Rule {
  subset: Subset;
  conf: unknown;
  origins: Origin[];
}

export type Rules = readonly Rule[];

const byName = (a: Origin, b: Origin): number =>
  a.name !== b.name ? (a.name < b.name ? -1 : 1) : a.mesh !== b.mesh ? (a.mesh < b.mesh ? -1 : 1) : 0;

/**
 * The rules of `items`, applied in their order; items of one policy type (their confs merge as
 * that type's struct). An item whose `targetRef` names no subset (`MeshGatewayRoute`) is an
 * error, as in the reference.
 */
export function buildRules(items: readonly PolicyItem[]): Rule[] {
  const subsets = items.map((item) => {
    const ss = subsetOfTargetRef(item.targetRef);
    if (!ss) throw new Error(`can't represent ${item.targetRef.kind} as tags`);
    return ss;
  });
  // 1. The distinct tags of all items, sorted by key then value.
  const seen = new Map<string, Tag>();
  for (const ss of subsets) for (const t of ss) seen.set(JSON.stringify([t.key, t.value]), t);
  const tags = [...seen.values()].sort((a, b) =>
    a.key !== b.key ? (a.key < b.key ? -1 : 1) : a.value < b.value ? -1 : a.value > b.value ? 1 : 0,
  );
  // 2. Every combination, 3. with the merge of the items that contain it.
  const rules: Rule[] = [];
  for (const ss of combinations(tags)) {
    const covering = items.filter((_, i) => isSubset(subsets[i], ss));
    if (covering.length === 0) continue;
    const origins = new Map<string, Origin>();
    for (const { origin } of covering)
      origins.set(JSON.stringify([origin.type, origin.mesh, origin.name]), origin);
    rules.push({
      subset: ss,
      conf: mergeConfs(
        covering[0].origin.type,
        covering.map((i) => i.conf),
      ),
      origins: [...origins.values()].sort(byName),
    });
  }
  // Most positive tags first; Array.prototype.sort is stable, like Go's SliceStable.
  return rules.sort((a, b) => numPositive(b.subset) - numPositive(a.subset));
}

/** The rule for the peers of `subset` (Kuma's `Rules.Compute`): the first that contains them, if any. */
export function computeRule(rules: Rules, subset: Subset): Rule | undefined {
  return rules.find((rule) => isSubset(rule.subset, subset));
}
