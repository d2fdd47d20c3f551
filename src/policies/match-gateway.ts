/**
 * The matched-policies view of a built-in gateway proxy (spec 2.20 `MeshGatewayDataplane`, Kuma 2.0
 * `GatewayListenerInfoFromProxy` and the inspect endpoints' gateway branch).
 *
 * The proxy takes the best MeshGateway whose `selectors` match its tags; its listeners, hosts and
 * routes come from `gatewayListeners`. Every backend of a route is a destination, mirror backends
 * included, once per distinct tag map in route order (rules in order, each rule's backends then its
 * mirrors). Per destination, the best policy of each connection kind: sources against the host's
 * listener tags, destinations against the destination's whole tag map, the pair ranked by the sum,
 * ties by `compareCandidates` (a policy ranks by its best matching selector, as the sidecar matcher
 * does; Kuma's gateway code takes the first matching one). TrafficLog (for `pass_through`) and TrafficTrace configure the whole
 * gateway, as the reference answers them: in `policies` beside `listeners`.
 *
 * Order: listeners by port, hosts by name (plain string order, as the reference's inspect answer
 * sorts them: `*` and `*.` names first), routes by name. A route whose rules only redirect stays
 * with `destinations: []`, so that "where is this route used" sees it (the reference drops it from
 * this view but counts it there).
 */
import { gatewayListeners, type GatewayRouteSpec, type GatewaySpec } from './gateway-hosts.js';
import {
  GATEWAY_DESTINATION_KINDS,
  GATEWAY_KIND,
  GATEWAY_ROUTE_KIND,
  SERVICE_KINDS,
  WHOLE_GATEWAY_KINDS,
} from './kind-sets.js';
import { PASS_THROUGH_SERVICE, type CandidatesByKind } from './match-sidecar.js';
import type { PolicyResource, Selector } from './policy-resource.js';
import { isBuiltinGateway, proxyInterfaces, type Networking } from './proxy-interfaces.js';
import { bestForDestination, bestForProxy, bestForService, bySource } from './select-policies.js';

type Tags = Readonly<Record<string, string>>;

/** The view's `kind`. */
export const GATEWAY_VIEW_KIND = 'MeshGatewayDataplane';

/** Kinds matched per route destination (Kuma's ConnectionPolicyTypes), in the order listed. */
export const DESTINATION_KINDS = GATEWAY_DESTINATION_KINDS;

export { WHOLE_GATEWAY_KINDS };

/** A MeshGateway as the matcher reads it: a policy with a mesh, tags and listeners. */
export interface GatewayResource extends PolicyResource, GatewaySpec {
  mesh: string;
}

export interface GatewayDestination<P extends PolicyResource = PolicyResource> {
  tags: Tags;
  /** Policy type to the one best policy of that kind for this destination (caller's objects). */
  policies: Record<string, P>;
}

export interface GatewayRouteEntry<P extends PolicyResource = PolicyResource> {
  route: string;
  destinations: GatewayDestination<P>[];
}

export interface GatewayHostEntry<P extends PolicyResource = PolicyResource> {
  hostName: string;
  routes: GatewayRouteEntry<P>[];
}

export interface GatewayListenerEntry<P extends PolicyResource = PolicyResource> {
  port: number;
  protocol: string;
  hosts: GatewayHostEntry<P>[];
}

/** The `MeshGatewayDataplane` form of the matched-policies view. */
export interface GatewayView<P extends PolicyResource = PolicyResource> {
  kind: typeof GATEWAY_VIEW_KIND;
  gateway: { mesh: string; name: string };
  listeners: GatewayListenerEntry<P>[];
  /** Whole-gateway policies by type; absent when there is none (the reference's `omitempty`). */
  policies?: Record<string, P>;
}

/** The "proxies affected" form of a gateway proxy: destinations as bare tag maps. */
export interface AttachmentListener {
  port: number;
  protocol: string;
  hosts: Array<{ hostName: string; routes: Array<{ route: string; destinations: Tags[] }> }>;
}

/**
 * The best MeshGateway selecting a built-in gateway proxy (Kuma's SelectGateway): a selector matches
 * the proxy's gateway tags; the highest rank wins, ties by `compareCandidates`. Undefined for a
 * sidecar or delegated gateway, or when no gateway selects the proxy.
 */
export function selectGateway<G extends PolicyResource>(
  networking: Networking,
  gateways: readonly G[],
): G | undefined {
  if (!isBuiltinGateway(networking)) return undefined;
  return bestForProxy(proxyInterfaces(networking).tagSets, gateways);
}

/**
 * What the matched-policies route answers for a built-in gateway proxy that no MeshGateway selects:
 * the reference's answer (an empty gateway key, no listeners), so that clients reading
 * `gateway.name` or iterating `listeners` keep working.
 */
export function unselectedGatewayView(): GatewayView<never> {
  return { kind: GATEWAY_VIEW_KIND, gateway: { mesh: '', name: '' }, listeners: [] };
}

/** The view of a built-in gateway proxy served by `gateway` (see `selectGateway`). */
export function matchGateway<P extends PolicyResource, R extends GatewayRouteSpec>(
  networking: Networking,
  gateway: GatewayResource,
  routes: readonly R[],
  candidates: CandidatesByKind<P>,
): GatewayView<P> {
  const of = (kind: string): readonly P[] => candidates[kind] ?? [];
  const listeners = gatewayListeners(networking.gateway?.tags ?? {}, gateway, routes).map((l) => ({
    port: l.port,
    protocol: l.protocol,
    hosts: l.hosts.map((host) => {
      const fromSource = DESTINATION_KINDS.map((kind) => [kind, bySource([host.tags], of(kind))] as const);
      return {
        hostName: host.hostName,
        routes: host.routes.map((route) => ({
          route: route.name,
          destinations: routeBackends(route).map((tags) => {
            const policies: Record<string, P> = {};
            for (const [kind, ranked] of fromSource) {
              const best = bestForDestination(tags, ranked);
              if (best) policies[kind] = best;
            }
            return { tags, policies };
          }),
        })),
      };
    }),
  }));
  const view: GatewayView<P> = {
    kind: GATEWAY_VIEW_KIND,
    gateway: { mesh: gateway.mesh, name: gateway.name },
    listeners,
  };
  const whole = wholeGatewayPolicies(networking, candidates);
  if (Object.keys(whole).length > 0) view.policies = whole;
  return view;
}

/**
 * The whole-gateway kinds matched as on a sidecar: a `service` kind as for `pass_through` (sources
 * against the proxy, destinations against that service), a `dataplane` kind by its selectors
 * against the proxy: the reference's whole-gateway policies (TrafficLog, TrafficTrace).
 */
function wholeGatewayPolicies<P extends PolicyResource>(
  networking: Networking,
  candidates: CandidatesByKind<P>,
): Record<string, P> {
  const { tagSets } = proxyInterfaces(networking);
  const out: Record<string, P> = {};
  for (const kind of WHOLE_GATEWAY_KINDS) {
    const of = candidates[kind] ?? [];
    const best = BY_SOURCE.has(kind)
      ? bestForService(PASS_THROUGH_SERVICE, bySource(tagSets, of))
      : bestForProxy(tagSets, of);
    if (best) out[kind] = best;
  }
  return out;
}

/**
 * Every backend of a route once, in route order: per rule its backends, then its mirror filters'
 * backends (all of them: the reference keeps only the last forward and one mirror). A tag map seen
 * before (another rule, a mirror of a backend) is not repeated.
 */
export function routeBackends(route: GatewayRouteSpec): Tags[] {
  const out: Tags[] = [];
  const seen = new Set<string>();
  const add = (tags: Tags) => {
    const key = JSON.stringify(
      Object.keys(tags)
        .sort()
        .map((k) => [k, tags[k]]),
    );
    if (seen.has(key)) return;
    seen.add(key);
    out.push(tags);
  };
  for (const rule of route.conf.tcp?.rules ?? []) for (const b of rule.backends) add(b.destination);
  for (const rule of route.conf.http?.rules ?? []) {
    for (const b of rule.backends ?? []) add(b.destination);
    for (const f of rule.filters ?? []) if (f.mirror) add(f.mirror.backend.destination);
  }
  return out;
}

/**
 * Where a policy applies in a gateway view (spec 2.20, "proxies affected by a policy"): the
 * listeners, hosts and routes keeping only the destinations whose `policies[policyType]` is that
 * policy; `[]` for a whole-gateway policy (the reference's entry without listeners); undefined when
 * it applies nowhere.
 */
export function gatewayAttachments(
  view: GatewayView,
  policyType: string,
  policyName: string,
): AttachmentListener[] | undefined {
  if (view.policies?.[policyType]?.name === policyName) return [];
  return prune(view, (route) => {
    const where = route.destinations.filter((d) => d.policies[policyType]?.name === policyName);
    return where.length > 0 ? where.map((d) => d.tags) : undefined;
  });
}

/** Where a MeshGatewayRoute is used in a gateway view: its entries with all their destinations; undefined when nowhere. */
export function routeAttachments(view: GatewayView, routeName: string): AttachmentListener[] | undefined {
  return prune(view, (route) =>
    route.route === routeName ? route.destinations.map((d) => d.tags) : undefined,
  );
}

/**
 * The view cut down to the routes for which `keep` gives destinations (undefined drops the route;
 * `[]` keeps it, for a redirect-only route), then to the hosts and listeners with a route left.
 */
function prune(
  view: GatewayView,
  keep: (route: GatewayRouteEntry) => Tags[] | undefined,
): AttachmentListener[] | undefined {
  const listeners: AttachmentListener[] = [];
  for (const l of view.listeners) {
    const hosts: AttachmentListener['hosts'] = [];
    for (const h of l.hosts) {
      const routes: Array<{ route: string; destinations: Tags[] }> = [];
      for (const r of h.routes) {
        const destinations = keep(r);
        if (destinations !== undefined) routes.push({ route: r.route, destinations });
      }
      if (routes.length > 0) hosts.push({ hostName: h.hostName, routes });
    }
    if (hosts.length > 0) listeners.push({ port: l.port, protocol: l.protocol, hosts });
  }
  return listeners.length > 0 ? listeners : undefined;
}

/** Whole-gateway kinds matched by their sources (a sidecar `service` kind); the others by `selectors`. */
const BY_SOURCE: ReadonlySet<string> = new Set(WHOLE_GATEWAY_KINDS.filter((k) => SERVICE_KINDS.includes(k)));
const BY_SELECTORS: ReadonlySet<string> = new Set([
  GATEWAY_KIND,
  ...WHOLE_GATEWAY_KINDS.filter((k) => !BY_SOURCE.has(k)),
]);
const BY_LISTENER_TAGS: ReadonlySet<string> = new Set([...DESTINATION_KINDS, GATEWAY_ROUTE_KIND]);

/** A selector that matches every tag set. */
const ANY_PROXY: readonly Selector[] = [{ match: {} }];

/**
 * The selectors one of which must match a built-in gateway proxy's tags for `policy` to appear in
 * its view: `selectors` for MeshGateway and TrafficTrace, `sources` for TrafficLog (all matched
 * against the proxy's own tags); undefined for kinds that never appear there.
 *
 * Connection kinds and MeshGatewayRoute match the listener's merged tags, in which the MeshGateway's
 * and the listener's tags override the proxy's (any tag but the ones a proxy sets itself), so
 * no selector of the policy alone bounds the proxies it reaches: they reach every gateway proxy
 * (`{match: {}}`). Gateway proxies are few beside sidecars; a bound through the gateways' listener
 * tags would change with every MeshGateway write. `{match: {}}` matches sidecars too: apply these
 * to built-in gateway proxies only (`reachSelectors` answers for sidecars). A MeshGateway write
 * re-matches the proxies its old and its new selectors reach (it may win or lose them).
 */
export function gatewayReach(policy: PolicyResource): readonly Selector[] | undefined {
  if (BY_SELECTORS.has(policy.type)) return policy.selectors ?? [];
  if (BY_SOURCE.has(policy.type)) return policy.sources ?? [];
  if (BY_LISTENER_TAGS.has(policy.type)) return ANY_PROXY;
  return undefined;
}
