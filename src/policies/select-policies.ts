import { bestOf, compareCandidates, type Ranked } from './compare-candidates.js';
import type { PolicyResource, Selector } from './policy-resource.js';
import { SERVICE_TAG } from '../resources/fragments.js';
import {
  combineRanks,
  compareRanks,
  NO_RANK,
  rankOf,
  tagSelectorMatches,
  type Rank,
} from './tag-selector.js';

type Tags = Readonly<Record<string, string>>;

/** The best rank among `selectors` that match any of `tagSets`, or undefined when none matches. */
export function bestSelectorRank(
  selectors: readonly Selector[] | undefined,
  tagSets: readonly Tags[],
): Rank | undefined {
  let best: Rank | undefined;
  for (const { match } of selectors ?? []) {
    if (!tagSets.some((tags) => tagSelectorMatches(match, tags))) continue;
    const rank = rankOf(match);
    if (best === undefined || compareRanks(rank, best) > 0) best = rank;
  }
  return best;
}

/** Inbound, single best: destinations against the inbound's tags (Kuma's SelectInboundConnectionPolicy). */
export function bestForInbound<P extends PolicyResource>(tags: Tags, policies: readonly P[]): P | undefined {
  return bestOf(ranked(policies, (p) => bestSelectorRank(p.destinations, [tags])))?.policy;
}

/**
 * Inbound, all that match, best first: destinations against the inbound's tags, ordered by the best
 * rank among the policy's sources (the clients it is about). Kuma orders RateLimits by each source
 * after splitting them one per source, FaultInjections by their first source; for whole resources the
 * best source gives RateLimit's order and FaultInjection's whenever it has one source.
 */
export function allForInbound<P extends PolicyResource>(tags: Tags, policies: readonly P[]): P[] {
  return bySourceOrder(policies.filter((p) => bestSelectorRank(p.destinations, [tags]) !== undefined));
}

/**
 * The inbound policies a proxyless client applies to a service it dials, best first as on an
 * inbound: sources against the client's tag sets, destinations against any of the service's
 * endpoints' inbound tags.
 */
export function allForDialled<P extends PolicyResource>(
  clientTags: readonly Tags[],
  endpointTags: readonly Tags[],
  policies: readonly P[],
): P[] {
  return bySourceOrder(
    policies.filter(
      (p) =>
        bestSelectorRank(p.sources, clientTags) !== undefined &&
        endpointTags.some((tags) => bestSelectorRank(p.destinations, [tags]) !== undefined),
    ),
  );
}

/** Policies ordered by the best rank among their sources, then as candidates are (time, name). */
function bySourceOrder<P extends PolicyResource>(policies: readonly P[]): P[] {
  const matched: Ranked<P>[] = [];
  for (const policy of policies) {
    let rank = NO_RANK;
    for (const { match } of policy.sources ?? []) {
      const r = rankOf(match);
      if (compareRanks(r, rank) > 0) rank = r;
    }
    matched.push({ policy, rank });
  }
  return matched.sort(compareCandidates).map((c) => c.policy);
}

/** The policies whose sources match the proxy, each with its best source rank. */
export function bySource<P extends PolicyResource>(
  proxyTags: readonly Tags[],
  policies: readonly P[],
): Ranked<P>[] {
  return ranked(policies, (p) => bestSelectorRank(p.sources, proxyTags));
}

/**
 * Outbound or service, single best: among policies whose sources match the proxy (see `bySource`),
 * destinations against `{mesh.io/service: service}` only; the pair ranks by the sum (Kuma's
 * SelectConnectionPolicies).
 */
export function bestForService<P extends PolicyResource>(
  service: string,
  fromSource: readonly Ranked<P>[],
): P | undefined {
  return bestForDestination({ [SERVICE_TAG]: service }, fromSource);
}

/**
 * A destination's whole tag map, single best: among policies whose sources matched (see
 * `bySource`), destinations against `tags`; the pair ranks by the sum. A built-in gateway matches
 * its route backends this way (Kuma's gateway matchConnectionPolicy), a sidecar its services.
 */
export function bestForDestination<P extends PolicyResource>(
  tags: Tags,
  fromSource: readonly Ranked<P>[],
): P | undefined {
  return bestOf(
    fromSource.flatMap(({ policy, rank }) => {
      const dest = bestSelectorRank(policy.destinations, [tags]);
      return dest === undefined ? [] : [{ policy, rank: combineRanks(rank, dest) }];
    }),
  )?.policy;
}

/** Whole proxy, single best: selectors against any inbound's tags or the gateway's (Kuma's SelectDataplanePolicy). */
export function bestForProxy<P extends PolicyResource>(
  proxyTags: readonly Tags[],
  policies: readonly P[],
): P | undefined {
  return bestOf(ranked(policies, (p) => bestSelectorRank(p.selectors, proxyTags)))?.policy;
}

/** Whole proxy, all that match, best first: selectors as in `bestForProxy` (VirtualOutbound: each applies). */
export function allForProxy<P extends PolicyResource>(
  proxyTags: readonly Tags[],
  policies: readonly P[],
): P[] {
  return ranked(policies, (p) => bestSelectorRank(p.selectors, proxyTags))
    .sort(compareCandidates)
    .map((c) => c.policy);
}

function ranked<P extends PolicyResource>(
  policies: readonly P[],
  rank: (p: P) => Rank | undefined,
): Ranked<P>[] {
  const out: Ranked<P>[] = [];
  for (const policy of policies) {
    const r = rank(policy);
    if (r !== undefined) out.push({ policy, rank: r });
  }
  return out;
}
