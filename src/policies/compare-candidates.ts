import type { PolicyResource } from './policy-resource.js';
import { compareRanks, type Rank } from './tag-selector.js';

/** A policy that matched, with the rank it matched at. */
export interface Ranked<P extends PolicyResource> {
  policy: P;
  rank: Rank;
}

/**
 * Negative when `a` comes first (applies before `b`): the higher rank; on a tie the later
 * `creationTime`, then the name that sorts first (decisions §10).
 */
export function compareCandidates<P extends PolicyResource>(a: Ranked<P>, b: Ranked<P>): number {
  const byRank = compareRanks(b.rank, a.rank);
  if (byRank !== 0) return byRank;
  const byTime = Date.parse(b.policy.creationTime) - Date.parse(a.policy.creationTime);
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime;
  return a.policy.name < b.policy.name ? -1 : a.policy.name > b.policy.name ? 1 : 0;
}

/** The first of `candidates` in `compareCandidates` order, or undefined when there is none. */
export function bestOf<P extends PolicyResource>(candidates: Iterable<Ranked<P>>): Ranked<P> | undefined {
  let best: Ranked<P> | undefined;
  for (const c of candidates) if (best === undefined || compareCandidates(c, best) < 0) best = c;
  return best;
}
