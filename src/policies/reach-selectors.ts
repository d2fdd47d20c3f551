import { ATTACHMENT_KINDS, DIALLED_KINDS, TARGET_REF_POLICY_KINDS } from './match-sidecar.js';
import { targetRefTags } from './target-ref-match.js';
import type { PolicyResource, Selector } from './policy-resource.js';

const BY_DESTINATION: ReadonlySet<string> = new Set(ATTACHMENT_KINDS.inbound.best);
const BY_SOURCE: ReadonlySet<string> = new Set([...ATTACHMENT_KINDS.outbound, ...ATTACHMENT_KINDS.service]);
const BY_SELECTOR: ReadonlySet<string> = new Set([
  ...ATTACHMENT_KINDS.dataplane.best,
  ...ATTACHMENT_KINDS.dataplane.all,
]);
const BY_TARGET_REF: ReadonlySet<string> = new Set(TARGET_REF_POLICY_KINDS);
const INBOUND_ALL: ReadonlySet<string> = new Set(ATTACHMENT_KINDS.inbound.all);
const DIALLED: ReadonlySet<string> = new Set(DIALLED_KINDS);

/**
 * The selectors one of which must match a tag set of a proxy (an inbound's or the gateway's) for
 * `policy` to attach to that proxy at all: its destinations for inbound kinds, its sources for
 * outbound and service kinds, its `selectors` for dataplane kinds (RateLimit attaches both ways, so
 * both lists), its top-level `targetRef`'s tags for targetRef kinds (a built-in gateway's listeners
 * also carry the MeshGateway's tags, which no proxy index holds: a view re-matches those proxies
 * whatever this says). A view that indexes proxies by tag re-matches only the proxies these can reach;
 * undefined for a kind that attaches to no sidecar.
 */
export function reachSelectors(policy: PolicyResource): readonly Selector[] | undefined {
  const { type } = policy;
  const viaDestination = BY_DESTINATION.has(type) || INBOUND_ALL.has(type);
  // FaultInjection also reaches the proxyless clients that dial its destinations (by their tags).
  const viaSource = BY_SOURCE.has(type) || DIALLED.has(type);
  if (BY_SELECTOR.has(type)) return policy.selectors ?? [];
  if (BY_TARGET_REF.has(type)) {
    // A targetRef's tags as a selector; a ref kind that selects no listener reaches nothing.
    const ref = policy.spec?.targetRef;
    const tags = ref ? targetRefTags(ref) : undefined;
    return tags ? [{ match: { ...tags } }] : [];
  }
  if (viaDestination && viaSource) return [...(policy.destinations ?? []), ...(policy.sources ?? [])];
  if (viaDestination) return policy.destinations ?? [];
  if (viaSource) return policy.sources ?? [];
  return undefined;
}
