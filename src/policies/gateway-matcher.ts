/**
 * The gateway half of the match view: a built-in gateway proxy's whole `MeshGatewayDataplane` view
 * from the mesh's candidates (the best MeshGateway that selects it, the routes, the policies per
 * destination), and the policies and routes a view lists, for the view's reverse index.
 */
import type { CandidatesByKind } from './match-sidecar.js';
import {
  GATEWAY_DESTINATION_KINDS,
  GATEWAY_KIND,
  GATEWAY_ROUTE_KIND,
  WHOLE_GATEWAY_KINDS,
} from './kind-sets.js';
import { matchGateway, selectGateway, type GatewayResource, type GatewayView } from './match-gateway.js';
import type { GatewayMatcher } from './match-view.js';
import type { PolicyResource } from './policy-resource.js';
import type { GatewayRouteSpec } from './gateway-hosts.js';
import { policyKey } from '../resources/keys.js';

const VIEW_KINDS: readonly string[] = [...GATEWAY_DESTINATION_KINDS, ...WHOLE_GATEWAY_KINDS];

/** Matches built-in gateway proxies for the match view. */
export const gatewayMatcher: GatewayMatcher<GatewayView> = {
  view(networking, candidates) {
    const values = (kind: string): PolicyResource[] => [...(candidates.get(kind)?.values() ?? [])];
    const gateway = selectGateway(networking, values(GATEWAY_KIND) as GatewayResource[]);
    if (!gateway) return undefined;
    const byKind: Record<string, PolicyResource[]> = {};
    for (const kind of VIEW_KINDS) byKind[kind] = values(kind);
    const routes = values(GATEWAY_ROUTE_KIND) as unknown as GatewayRouteSpec[];
    return matchGateway(networking, gateway, routes, byKind as CandidatesByKind);
  },
  *policiesIn(view) {
    for (const [kind, policy] of Object.entries(view.policies ?? {})) yield policyKey(kind, policy.name);
    for (const listener of view.listeners) {
      for (const host of listener.hosts) {
        for (const route of host.routes) {
          yield policyKey(GATEWAY_ROUTE_KIND, route.route);
          for (const d of route.destinations) {
            for (const [kind, policy] of Object.entries(d.policies)) yield policyKey(kind, policy.name);
          }
        }
      }
    }
  },
};
