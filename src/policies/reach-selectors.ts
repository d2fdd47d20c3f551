import { ATTACHMENT_KINDS } from './match-sidecar.js';
import type { PolicyResource, Selector } from './policy-resource.js';

const BY_DESTINATION: ReadonlySet<string> = new Set(ATTACHMENT_KINDS.inbound.best);
const BY_SOURCE: ReadonlySet<string> = new Set([...ATTACHMENT_KINDS.outbound, ...ATTACHMENT_KINDS.service]);
const BY_SELECTOR: ReadonlySet<string> = new Set(ATTACHMENT_KINDS.dataplane);
const INBOUND_ALL: ReadonlySet<string> = new Set(ATTACHMENT_KINDS.inbound.all);

/**
 * The selectors one of which must match a tag set of a proxy (an inbound's or the gateway's) for
 * `policy` to attach to that proxy at all: its destinations for inbound kinds, its sources for
 * outbound and service kinds, its `selectors` for dataplane kinds (RateLimit attaches both ways, so
 * both lists). A view that indexes proxies by tag re-matches only the proxies these can reach;
 * undefined for a kind that attaches to no sidecar.
 */
export function reachSelectors(policy: PolicyResource): readonly Selector[] | undefined {
  const { type } = policy;
  const viaDestination = BY_DESTINATION.has(type) || INBOUND_ALL.has(type);
  const viaSource = BY_SOURCE.has(type);
  if (BY_SELECTOR.has(type)) return policy.selectors ?? [];
  if (viaDestination && viaSource) return [...(policy.destinations ?? []), ...(policy.sources ?? [])];
  if (viaDestination) return policy.destinations ?? [];
  if (viaSource) return policy.sources ?? [];
  return undefined;
}
