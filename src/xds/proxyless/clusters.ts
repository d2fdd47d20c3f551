/**
 * Clusters and endpoints of a proxyless client: one cluster per destination tag set (a TrafficRoute
 * split by `version` gives one per version), endpoints from the ready inbounds whose tags the
 * destination matches, grouped by `mesh.io/zone` locality.
 *
 * What the gRPC client needs (as its source and tests show): every locality has a
 * `load_balancing_weight` (one without is dropped silently), endpoints are IP literals and unique
 * (EDS is NACKed for hostnames and duplicates), and optional blocks are always present with neutral
 * values (an update that only adds a block can be judged equal and dropped): outlier detection with
 * enforcement 0, `max_requests` 1024.
 */
import type { CircuitBreakerSetting, LoadBalancer } from '../../policies/proxyless-settings.js';
import { isIP } from 'node:net';
import { SERVICE_TAG } from '../../resources/fragments.js';
import { protoDuration } from './proto-values.js';

type Tags = Readonly<Record<string, string>>;

/** The zone tag of an inbound (Kuma's `kuma.io/zone`). */
export const ZONE_TAG = 'mesh.io/zone';

/** One ready inbound of the mesh, a candidate endpoint. */
export interface Endpoint {
  address: string;
  port: number;
  tags: Tags;
}

/** The cluster of a destination tag set: its service, then the other tags sorted (`web{version=v1}`). */
export function clusterName(destination: Tags): string {
  const service = destination[SERVICE_TAG] ?? '';
  const rest = Object.keys(destination)
    .filter((k) => k !== SERVICE_TAG)
    .sort()
    .map((k) => `${k}=${destination[k]}`);
  return rest.length > 0 ? `${service}{${rest.join(',')}}` : service;
}

/** True when an endpoint with `tags` is one of `destination`'s (every tag present, equal or `*`). */
export const destinationMatches = (destination: Tags, tags: Tags): boolean =>
  Object.entries(destination).every(([k, v]) => typeof tags[k] === 'string' && (v === '*' || tags[k] === v));

/** The parts of a CircuitBreaker's conf a gRPC client can apply (extra-policies.md). */
export type CircuitBreakerConf = CircuitBreakerSetting;

export type { LoadBalancer };

/** A cluster and the settings the client could not apply, in words for `/xds` and inspect. */
export interface ClusterResult {
  cluster: Record<string, unknown>;
  notes: string[];
}

/** The EDS cluster of `name` with the route's load balancer and the destination's circuit breaker. */
export function buildCluster(
  name: string,
  opts: { loadBalancer?: LoadBalancer; circuitBreaker?: CircuitBreakerConf } = {},
): ClusterResult {
  const notes: string[] = [];
  const lb = opts.loadBalancer ?? {};
  let lbPolicy = 'ROUND_ROBIN';
  const extra: Record<string, unknown> = {};
  if (lb.ringHash) {
    lbPolicy = 'RING_HASH';
    const rh = lb.ringHash as { minRingSize?: number; maxRingSize?: number };
    extra.ring_hash_lb_config = {
      ...(rh.minRingSize !== undefined ? { minimum_ring_size: { value: rh.minRingSize } } : {}),
      ...(rh.maxRingSize !== undefined ? { maximum_ring_size: { value: rh.maxRingSize } } : {}),
    };
  } else {
    for (const k of ['leastRequest', 'random', 'maglev'] as const) {
      if (lb[k]) notes.push(`loadBalancer.${k} cannot apply to a proxyless gRPC client: round robin is used`);
    }
  }
  const cb = opts.circuitBreaker ?? {};
  const d = cb.detectors ?? {};
  for (const k of ['totalErrors', 'gatewayErrors', 'localErrors'] as const) {
    if (d[k]) notes.push(`circuit breaker detectors.${k} cannot apply to a proxyless gRPC client`);
  }
  for (const k of ['maxConnections', 'maxPendingRequests', 'maxRetries'] as const) {
    if (cb.thresholds?.[k] !== undefined) {
      notes.push(`circuit breaker thresholds.${k} cannot apply to a proxyless gRPC client`);
    }
  }
  const sd = d.standardDeviation;
  const failure = d.failure;
  const outlier_detection: Record<string, unknown> = {
    interval: protoDuration(cb.interval ?? '10s'),
    base_ejection_time: protoDuration(cb.baseEjectionTime ?? '30s'),
    max_ejection_percent: { value: cb.maxEjectionPercent ?? 10 },
    // Enforcement 0 unless a detector the client supports is configured: present, but neutral.
    enforcing_success_rate: { value: sd ? 100 : 0 },
    enforcing_failure_percentage: { value: failure ? 100 : 0 },
    ...(sd?.requestVolume !== undefined ? { success_rate_request_volume: { value: sd.requestVolume } } : {}),
    ...(sd?.minimumHosts !== undefined ? { success_rate_minimum_hosts: { value: sd.minimumHosts } } : {}),
    ...(sd?.factor !== undefined
      ? { success_rate_stdev_factor: { value: Math.round(sd.factor * 1000) } }
      : {}),
    ...(failure?.requestVolume !== undefined
      ? { failure_percentage_request_volume: { value: failure.requestVolume } }
      : {}),
    ...(failure?.minimumHosts !== undefined
      ? { failure_percentage_minimum_hosts: { value: failure.minimumHosts } }
      : {}),
    ...(failure?.threshold !== undefined
      ? { failure_percentage_threshold: { value: failure.threshold } }
      : {}),
  };
  return {
    cluster: {
      name,
      type: 'EDS',
      eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' }, service_name: name },
      lb_policy: lbPolicy,
      ...extra,
      circuit_breakers: { thresholds: [{ max_requests: { value: cb.thresholds?.maxRequests ?? 1024 } }] },
      outlier_detection,
    },
    notes,
  };
}

/** A load assignment and what was left out of it, in words. */
export interface AssignmentResult {
  assignment: Record<string, unknown>;
  notes: string[];
}

/**
 * The ClusterLoadAssignment of cluster `name` with `endpoints` (those its destination selects): the
 * endpoints of `localZone` (all when it is undefined), unique by address and port, IP literals only,
 * one locality per zone with a weight equal to its endpoint count; zones sorted, endpoints sorted,
 * so equal inputs give equal bytes.
 */
export function buildAssignment(
  name: string,
  endpoints: readonly Endpoint[],
  localZone?: string,
): AssignmentResult {
  const notes: string[] = [];
  const byZone = new Map<string, Map<string, Endpoint>>();
  const elsewhere = new Set<string>();
  for (const e of endpoints) {
    const zone = e.tags[ZONE_TAG] ?? '';
    if (localZone !== undefined && zone !== '' && zone !== localZone) {
      elsewhere.add(zone);
      continue;
    }
    if (isIP(e.address) === 0) {
      notes.push(`endpoint ${e.address}:${e.port} is not an IP address: left out`);
      continue;
    }
    const key = `${e.address}:${e.port}`;
    const zoneEndpoints = byZone.get(zone) ?? byZone.set(zone, new Map()).get(zone);
    zoneEndpoints?.set(key, e);
  }
  if (byZone.size === 0 && elsewhere.size > 0) {
    notes.push(
      `${name} has instances only in other zones (${[...elsewhere].sort().join(', ')}): ` +
        'reaching them needs a zone ingress, which mesh-cp does not serve yet',
    );
  }
  const localities = [...byZone.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([zone, eps]) => ({
      locality: zone === '' ? {} : { zone },
      load_balancing_weight: { value: eps.size },
      priority: 0,
      lb_endpoints: [...eps.keys()].sort().map((key) => {
        const e = eps.get(key) as Endpoint;
        return {
          endpoint: { address: { socket_address: { address: e.address, port_value: e.port } } },
          health_status: 'HEALTHY',
          load_balancing_weight: { value: 1 },
        };
      }),
    }));
  return { assignment: { cluster_name: name, endpoints: localities }, notes };
}

/**
 * `buildAssignment` that hands back the assignment it built before for the same cluster and zone
 * when the endpoints are the same (same address, port and zone each, in the same order): proxies
 * of several classes that call one service share its assignments, as objects (compared and encoded
 * once). One is made per state of a mesh; the endpoints it keeps are that state's.
 */
export function assignmentMemo(): typeof buildAssignment {
  /** By zone (`''`: every zone), then cluster name. */
  const built = new Map<string, Map<string, { endpoints: readonly Endpoint[]; result: AssignmentResult }>>();
  return (name, endpoints, localZone) => {
    let inZone = built.get(localZone ?? '');
    if (!inZone) built.set(localZone ?? '', (inZone = new Map()));
    const hit = inZone.get(name);
    if (hit && sameEndpoints(hit.endpoints, endpoints)) return hit.result;
    const result = buildAssignment(name, endpoints, localZone);
    inZone.set(name, { endpoints, result });
    return result;
  };
}

/** Whether two endpoint lists give the same assignment: what `buildAssignment` reads of each is equal. */
function sameEndpoints(a: readonly Endpoint[], b: readonly Endpoint[]): boolean {
  if (a === b) return true;
  if (a.length !== b.length) return false;
  for (let i = 0; i < a.length; i++) {
    const x = a[i];
    const y = b[i];
    if (x === y) continue;
    if (x.address !== y.address || x.port !== y.port || x.tags[ZONE_TAG] !== y.tags[ZONE_TAG]) return false;
  }
  return true;
}
