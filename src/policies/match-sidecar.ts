/**
 * The pure matching core of the policy engine for sidecar proxies (decisions §10, Kuma 2.0).
 *
 * A selector (`match` tag map) matches a tag set when every key is present with an equal value or
 * the value is `*`; it ranks by (number of tags, number of exact values). A proxy's tag sets are its
 * inbounds' tags and its gateway's tags: a source or `selectors` entry matches the proxy when it
 * matches any of them. Each kind attaches at one level:
 * - `inbound` (`<address>:<port>:<servicePort>`): destinations against the inbound's tags;
 *   TrafficPermission the single best, FaultInjection and RateLimit all that match, best first;
 * - `outbound` (`<address or 127.0.0.1>:<port>`) and `service` (the service name): sources against
 *   the proxy, destinations against `{mesh.io/service: <service>}` only, the pair ranked by the sum;
 *   Timeout, TrafficRoute, RateLimit per outbound; HealthCheck, CircuitBreaker, Retry per service
 *   that the outbounds' routes reach; TrafficLog per outbound service and for `pass_through`, the
 *   implicit service of traffic that leaves through no declared outbound;
 * - `dataplane` (name `""`): TrafficTrace and ProxyTemplate (the best), VirtualOutbound (all that
 *   match, best first), selectors against the proxy; and the `targetRef` kinds (MeshTrafficPermission,
 *   MeshAccessLog, MeshTrace): all whose top-level `targetRef` selects a listener of the proxy, in the
 *   order they apply (`compareByTargetRef`), as Kuma 2.0 lists a proxy's `DataplanePolicies`.
 * Ties go to the later `creationTime`, then to the name that sorts first.
 *
 * `matchSidecar` matches one proxy against candidates already grouped by kind, so that a view kept
 * up to date write by write calls it per proxy with only the candidates a change can reach. The
 * services a proxyless client dials (`dialled`) are outbounds too (`proxyInterfaces`).
 */
import {
  DATAPLANE_ALL_KINDS,
  DATAPLANE_BEST_KINDS,
  DIALLED_KINDS,
  INBOUND_ALL_KINDS,
  INBOUND_BEST_KINDS,
  LOGGED_KINDS,
  OUTBOUND_KINDS,
  ROUTE_KIND,
  SERVICE_KINDS,
  TARGET_REF_POLICY_KINDS,
} from './kind-sets.js';
import { selectsByTargetRef, type PolicyResource } from './policy-resource.js';
import { proxyInterfaces, type Networking } from './proxy-interfaces.js';
import { callDestinations, routeDestinations } from './route-destinations.js';
import {
  allForDialled,
  allForInbound,
  allForProxy,
  bestForInbound,
  bestForProxy,
  bestForService,
  bySource,
} from './select-policies.js';
import { compareByTargetRef, targetRefListeners } from './target-ref-match.js';

/** Where an item of the matched-policies view attaches (spec 2.20). */
export type AttachmentType = 'dataplane' | 'inbound' | 'outbound' | 'service';

/** One item of the `SidecarDataplane` view: an attachment and the policies that apply there, by kind. */
export interface SidecarItem<P extends PolicyResource = PolicyResource> {
  type: AttachmentType;
  name: string;
  /** The service of the inbound, outbound or service; `""` on the `dataplane` item, as the reference writes it. */
  service: string;
  matchedPolicies: Record<string, P[]>;
}

/** The candidate policies of one mesh, grouped by registry kind (`TrafficPermission`, ...). */
export type CandidatesByKind<P extends PolicyResource = PolicyResource> = Readonly<
  Record<string, readonly P[]>
>;

/** The service of traffic that leaves through no declared outbound (Kuma's `pass_through`). */
export const PASS_THROUGH_SERVICE = 'pass_through';

/** Kinds by attachment (from the kinds' units); `all` kinds keep every match. */
export const ATTACHMENT_KINDS = {
  inbound: { best: INBOUND_BEST_KINDS, all: INBOUND_ALL_KINDS },
  outbound: OUTBOUND_KINDS,
  service: SERVICE_KINDS,
  dataplane: { best: DATAPLANE_BEST_KINDS, all: DATAPLANE_ALL_KINDS },
} as const;

export { DIALLED_KINDS, TARGET_REF_POLICY_KINDS };

const LOGGED: ReadonlySet<string> = new Set(LOGGED_KINDS);

/**
 * The matched-policies items of one sidecar proxy: one per attachment with at least one policy,
 * sorted by type then name; `matchedPolicies` holds the caller's own resource objects.
 */
export function matchSidecar<P extends PolicyResource>(
  networking: Networking,
  candidates: CandidatesByKind<P>,
  dialled?: readonly string[],
  endpointTags: (service: string) => ReadonlyArray<Readonly<Record<string, string>>> = () => [],
): SidecarItem<P>[] {
  const proxy = proxyInterfaces(networking, dialled);
  const items: SidecarItem<P>[] = [];
  const of = (kind: string): readonly P[] => candidates[kind] ?? [];
  const push = (type: AttachmentType, name: string, service: string, matched: Record<string, P[]>) => {
    if (Object.keys(matched).length === 0) return;
    items.push({ type, name, service, matchedPolicies: matched });
  };

  for (const inbound of proxy.inbounds) {
    const matched: Record<string, P[]> = {};
    for (const kind of ATTACHMENT_KINDS.inbound.best) {
      const best = bestForInbound(inbound.tags, of(kind));
      if (best) matched[kind] = [best];
    }
    for (const kind of ATTACHMENT_KINDS.inbound.all) {
      const all = allForInbound(inbound.tags, of(kind));
      if (all.length > 0) matched[kind] = all;
    }
    push('inbound', inbound.name, inbound.service, matched);
  }

  const outboundSources = ATTACHMENT_KINDS.outbound.map(
    (kind) => [kind, bySource(proxy.tagSets, of(kind))] as const,
  );
  const reached = new Set<string>();
  for (const outbound of proxy.outbounds) {
    const matched: Record<string, P[]> = {};
    for (const [kind, fromSource] of outboundSources) {
      const best = bestForService(outbound.service, fromSource);
      if (best) matched[kind] = [best];
    }
    if (outbound.dialled) {
      const reached = callDestinations(outbound.service, matched[ROUTE_KIND]?.[0]).flatMap(endpointTags);
      for (const kind of DIALLED_KINDS) {
        const all = allForDialled(proxy.tagSets, reached, of(kind));
        if (all.length > 0) matched[kind] = all;
      }
    }
    for (const service of routeDestinations(outbound.service, matched[ROUTE_KIND]?.[0])) reached.add(service);
    push('outbound', outbound.name, outbound.service, matched);
  }

  // TrafficLog attaches to the outbounds' services and pass_through, the other service kinds to the
  // services the routes reach (Kuma's SelectOutboundConnectionPolicies vs BuildDestinationMap).
  const logged = new Set([...proxy.outbounds.map((o) => o.service), PASS_THROUGH_SERVICE]);
  const byService = new Map<string, Record<string, P[]>>();
  for (const kind of ATTACHMENT_KINDS.service) {
    const fromSource = bySource(proxy.tagSets, of(kind));
    if (fromSource.length === 0) continue;
    for (const service of LOGGED.has(kind) ? logged : reached) {
      const best = bestForService(service, fromSource);
      if (!best) continue;
      const matched = byService.get(service) ?? {};
      matched[kind] = [best];
      byService.set(service, matched);
    }
  }
  for (const [service, matched] of byService) push('service', service, service, matched);

  const matched: Record<string, P[]> = {};
  for (const kind of ATTACHMENT_KINDS.dataplane.best) {
    const best = bestForProxy(proxy.tagSets, of(kind));
    if (best) matched[kind] = [best];
  }
  for (const kind of ATTACHMENT_KINDS.dataplane.all) {
    const all = allForProxy(proxy.tagSets, of(kind));
    if (all.length > 0) matched[kind] = all;
  }
  for (const kind of TARGET_REF_POLICY_KINDS) {
    const selecting = of(kind)
      .filter(selectsByTargetRef)
      .filter((p) => targetRefListeners(p.spec.targetRef, networking).length > 0);
    if (selecting.length > 0) matched[kind] = [...selecting].sort(compareByTargetRef);
  }
  push('dataplane', '', '', matched);

  return items.sort((a, b) => compareStrings(a.type, b.type) || compareStrings(a.name, b.name));
}

const compareStrings = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
