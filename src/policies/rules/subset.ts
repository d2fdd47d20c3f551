/**
 * Subsets: sets of proxies described by tags (Kuma 2.0 `pkg/core/xds/rules.go`).
 *
 * A subset is a list of tags, each `key = value` or, negated, `key != value`; a proxy belongs to
 * it when it satisfies every tag. The empty subset is the whole mesh.
 */
import { SERVICE_TAG } from '../../resources/fragments.js';
import type { TargetRef } from '../target-ref-match.js';

/** One tag of a subset; `not` makes it `key != value`. */
export interface Tag {
  key: string;
  value: string;
  not: boolean;
}

/** A group of proxies: those satisfying every tag; empty means every proxy. */
export type Subset = readonly Tag[];

/**
 * True when every proxy of `sub` satisfies `tag` (Kuma 2.3 `isSubset`; both tags on the same key).
 * Kuma 2.0 refused `{k: a}` for `{k: !b}`: an outbound to `web` then matched no rule built
 * with `!backend`; 2.3 fixed it, and so do we.
 */
function tagContains(tag: Tag, sub: Tag): boolean {
  if (tag.not === sub.not) return tag.value === sub.value;
  if (tag.not) return tag.value !== sub.value; // {k: a} lies inside {k: !b} when a != b
  return false; // {k: !a} holds values other than b: never inside {k: b}
}

/** True when `other` is a subset of `ss`: each tag of `ss` holds for every proxy of `other`. */
export function isSubset(ss: Subset, other: Subset): boolean {
  for (const tag of ss) {
    const same = other.filter((t) => t.key === tag.key);
    if (same.length === 0) return false;
    if (!same.every((t) => tagContains(tag, t))) return false;
  }
  return true;
}

/** How many tags are not negated: the specificity rules are ordered by. */
export const numPositive = (ss: Subset): number => ss.filter((t) => !t.not).length;

/** The positive subset of a tag map, in the map's key order. */
export const subsetFromTags = (tags: Readonly<Record<string, string>>): Tag[] =>
  Object.entries(tags).map(([key, value]) => ({ key, value, not: false }));

/** The subset a `targetRef` of `from`/`to` names (Kuma 2.0 `asSubset`); undefined for other kinds. */
export function subsetOfTargetRef(ref: TargetRef): Tag[] | undefined {
  switch (ref.kind) {
    case 'Mesh':
      return [];
    case 'MeshSubset':
      return subsetFromTags(ref.tags ?? {});
    case 'MeshService':
      return [{ key: SERVICE_TAG, value: ref.name ?? '', not: false }];
    case 'MeshServiceSubset':
      return [{ key: SERVICE_TAG, value: ref.name ?? '', not: false }, ...subsetFromTags(ref.tags ?? {})];
    default:
      return undefined;
  }
}
