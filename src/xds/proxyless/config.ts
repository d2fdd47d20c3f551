/**
 * The whole config of a proxyless gRPC client for the services it dials (pure: objects before
 * encoding). For each service the client asks a Listener for, the policies are chosen as for an
 * outbound of a sidecar (sources against the client's tags, destinations against the service,
 * decisions §10): TrafficRoute, Timeout, Retry and FaultInjection for the route (the fault filter
 * runs in the client here, where a sidecar would inject it on the server's inbound), CircuitBreaker
 * per destination cluster. Settings the client cannot apply are said in `notes` (for `/xds` and
 * inspect), never silently dropped.
 */
import type { PolicyResource } from '../../policies/policy-resource.js';
import { proxyInterfaces, type Networking } from '../../policies/proxy-interfaces.js';
import { bestForDestination, bestForService, bySource } from '../../policies/select-policies.js';
import { PROTOCOL_TAG, SERVICE_TAG } from '../../resources/fragments.js';
import {
  buildAssignment,
  buildCluster,
  clusterName,
  type CircuitBreakerConf,
  type Endpoint,
  type LoadBalancer,
} from './clusters.js';
import { allDestinationsOf, buildListener, type RouteInputs } from './listener.js';

/** The policy kinds a proxyless client's config reads. */
export const CONFIG_KINDS = [
  'TrafficRoute',
  'Timeout',
  'Retry',
  'FaultInjection',
  'CircuitBreaker',
  'HealthCheck',
] as const;

/** The mesh's policies of {@link CONFIG_KINDS}, as `candidates` takes them. */
export function configCandidates(
  read: (kind: string) => readonly PolicyResource[],
): Record<string, readonly PolicyResource[]> {
  const candidates: Record<string, readonly PolicyResource[]> = {};
  for (const kind of CONFIG_KINDS) candidates[kind] = read(kind);
  return candidates;
}

/** What a client's config is computed from. */
export interface ProxylessInput {
  /** The client proxy's Dataplane networking (its tags choose the policies). */
  networking: Networking;
  /** The services the client asked Listeners for. */
  services: readonly string[];
  /** The mesh's policies by kind. */
  candidates: Readonly<Record<string, readonly PolicyResource[]>>;
  /** The ready inbounds of the mesh's proxies; absent: the policies' part only (no load assignments). */
  endpoints?: readonly Endpoint[];
  /** The client's zone: endpoints of other zones are left out (no zone ingress yet). */
  localZone?: string;
}

/** The resources to serve, by type, each list sorted by name, and the notes. */
export interface ProxylessConfig {
  listeners: Array<Record<string, unknown>>;
  clusters: Array<Record<string, unknown>>;
  assignments: Array<Record<string, unknown>>;
  /** Per service, what could not apply. */
  notes: Record<string, string[]>;
  /** The services dialled and those the routes send to, sorted (what the endpoints are read for). */
  reach: string[];
}

const confOf = <T>(p: PolicyResource | undefined): T | undefined => (p as { conf?: T } | undefined)?.conf;

export function proxylessConfig(input: ProxylessInput): ProxylessConfig {
  const { tagSets } = proxyInterfaces(input.networking);
  const fromSource = (kind: string) => bySource(tagSets, input.candidates[kind] ?? []);
  const ranked = {
    route: fromSource('TrafficRoute'),
    timeout: fromSource('Timeout'),
    retry: fromSource('Retry'),
    fault: fromSource('FaultInjection'),
    breaker: fromSource('CircuitBreaker'),
    health: fromSource('HealthCheck'),
  };
  const endpoints = input.endpoints;
  const known = endpoints && new Set(endpoints.map((e) => e.tags[SERVICE_TAG]));
  const isKnown = (service: string) => known?.has(service) ?? true;
  const listeners: ProxylessConfig['listeners'] = [];
  const clusters = new Map<string, Record<string, unknown>>();
  const assignments = new Map<string, Record<string, unknown>>();
  const notes: ProxylessConfig['notes'] = {};
  const reach = new Set<string>(input.services);

  for (const service of [...new Set(input.services)].sort()) {
    const route = bestForService(service, ranked.route);
    const inputs: RouteInputs = {
      route: confOf(route),
      timeout: confOf(bestForService(service, ranked.timeout)),
      retry: confOf(bestForService(service, ranked.retry)),
      // A FaultInjection names the protocol of the traffic it applies to; a proxyless client's is gRPC.
      fault: confOf(bestForDestination({ [SERVICE_TAG]: service, [PROTOCOL_TAG]: 'grpc' }, ranked.fault)),
    };
    const said: string[] = [];
    const { listener, notes: listenerNotes } = buildListener(service, inputs, { known: isKnown(service) });
    listeners.push(listener);
    said.push(...listenerNotes);
    {
      for (const destination of allDestinationsOf(service, inputs.route)) {
        reach.add(destination[SERVICE_TAG] as string);
        const name = clusterName(destination);
        if (clusters.has(name)) continue;
        const built = buildCluster(name, {
          loadBalancer: confOf<{ loadBalancer?: LoadBalancer }>(route)?.loadBalancer,
          circuitBreaker: confOf<CircuitBreakerConf>(bestForDestination(destination, ranked.breaker)),
        });
        clusters.set(name, built.cluster);
        said.push(...built.notes);
        if (!endpoints) continue;
        const assigned = buildAssignment(destination, endpoints, input.localZone);
        assignments.set(name, assigned.assignment);
        said.push(...assigned.notes);
      }
      if (isKnown(service) && bestForService(service, ranked.health)) {
        said.push('HealthCheck cannot apply to a proxyless gRPC client: it has no active health checking');
      }
    }
    if (said.length > 0) notes[service] = said;
  }
  const sorted = (m: Map<string, Record<string, unknown>>) =>
    [...m.keys()].sort().map((k) => m.get(k) as Record<string, unknown>);
  return {
    listeners,
    clusters: sorted(clusters),
    assignments: sorted(assignments),
    notes,
    reach: [...reach].sort(),
  };
}
