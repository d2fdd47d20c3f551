/**
 * Every consistent combination of a set of tags, each taken as is or negated (Kuma 2.0
 * `SubsetIter`): `2^n` candidates, minus those asking one key for two different values, with
 * `k: !a` dropped beside `k: b` (it says nothing more). The order is Kuma's: a binary counter over
 * the tags (the first tag flips fastest, negated = 1), starting one step past all-positive, which
 * comes last. Tags of one key stay together, keys in their order of first appearance.
 */
import type { Subset, Tag } from './subset.js';

/** The simplified subset of one assignment, or undefined when it is contradictory. */
function simplified(current: readonly Tag[]): Tag[] | undefined {
  const byKey = new Map<string, Tag[]>();
  for (const t of current) {
    const list = byKey.get(t.key) ?? [];
    list.push({ ...t });
    byKey.set(t.key, list);
  }
  const out: Tag[] = [];
  for (const tags of byKey.values()) {
    const positive = tags.filter((t) => !t.not);
    if (positive.length >= 2) return undefined;
    out.push(...(positive.length === 1 ? positive : tags));
  }
  return out;
}

/** The combinations of `tags`, in Kuma's order; one empty subset for no tags. */
export function* combinations(tags: readonly Tag[]): Generator<Subset> {
  const current = tags.map((t) => ({ ...t, not: false }));
  // Advance the counter; false once it wraps back to all-positive.
  const next = (): boolean => {
    for (const t of current) {
      if (t.not) t.not = false;
      else {
        t.not = true;
        return true;
      }
    }
    return false;
  };
  for (;;) {
    const more = next();
    const ss = simplified(current);
    if (!more) {
      if (ss) yield ss;
      return;
    }
    if (ss) yield ss;
  }
}
