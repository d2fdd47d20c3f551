/**
 * The text tabs of a proxy (GUI, outside the spec): `/stats` in Envoy's `name: value` line format
 * and `/clusters` in the format of Envoy's admin `/clusters`.
 */
import type { StreamInfo } from './stream-info.js';
import { SHORT_TYPE } from './type-urls.js';

/** Envoy's stat prefix of each type's subscription. */
const PREFIX: Readonly<Record<string, string>> = {
  lds: 'listener_manager.lds',
  rds: 'http.rds',
  cds: 'cluster_manager.cds',
  eds: 'cluster_manager.eds',
};

/**
 * The counters of a stream, one `name: value` line each, sorted by name as Envoy prints them.
 * Without a stream (not connected): `control_plane.connected_state: 0` and zero counters.
 */
export function statsText(info: StreamInfo | undefined): string {
  const stats = new Map<string, number>([['control_plane.connected_state', info ? 1 : 0]]);
  for (const short of ['lds', 'rds', 'cds', 'eds']) {
    const prefix = PREFIX[short];
    for (const stat of ['update_attempt', 'update_success', 'update_rejected', 'version'])
      stats.set(`${prefix}.${stat}`, 0);
  }
  for (const [url, status] of info?.types ?? []) {
    const short = SHORT_TYPE[url];
    if (!short) continue;
    const prefix = PREFIX[short];
    stats.set(`${prefix}.update_attempt`, status.responsesSent);
    stats.set(`${prefix}.update_success`, status.responsesAcknowledged);
    stats.set(`${prefix}.update_rejected`, status.responsesRejected);
    stats.set(`${prefix}.version`, status.version ?? 0);
  }
  return [...stats.entries()]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([name, value]) => `${name}: ${value}\n`)
    .join('');
}

type Obj = Record<string, unknown>;

const obj = (v: unknown): Obj => (v && typeof v === 'object' ? (v as Obj) : {});
const list = (v: unknown): Obj[] => (Array.isArray(v) ? (v as Obj[]) : []);
const str = (v: unknown): string => (typeof v === 'string' ? v : '');
/** A `UInt32Value` decodes as `{value}`; a plain number is taken as it is. */
const uint = (v: unknown, fallback: number): number =>
  typeof v === 'number' ? v : typeof obj(v).value === 'number' ? (obj(v).value as number) : fallback;

/** Envoy's health flags of an endpoint's EDS health status. */
const HEALTH: Readonly<Record<string, string>> = {
  UNHEALTHY: '/failed_eds_health',
  DRAINING: '/failed_eds_health',
  TIMEOUT: '/failed_eds_health',
  DEGRADED: '/degraded_eds_health',
};

/**
 * The clusters and their endpoints in Envoy admin `/clusters` format: per cluster
 * `name::observability_name::name` and `name::added_via_api::true`, then per host
 * `name::ip:port::health_flags::healthy`, `::weight::`, `::region::`, `::zone::`, `::sub_zone::`
 * and `::priority::` lines. Clusters as CDS objects, assignments as EDS objects.
 */
export function clustersText(clusters: readonly Obj[], assignments: readonly Obj[]): string {
  const byCluster = new Map(assignments.map((a) => [str(a.cluster_name), a]));
  const lines: string[] = [];
  for (const cluster of clusters) {
    const name = str(cluster.name);
    lines.push(`${name}::observability_name::${name}`, `${name}::added_via_api::true`);
    for (const locality of list(byCluster.get(name)?.endpoints)) {
      const where = obj(locality.locality);
      for (const lb of list(locality.lb_endpoints)) {
        const socket = obj(obj(obj(lb.endpoint).address).socket_address);
        const host = `${name}::${str(socket.address)}:${uint(socket.port_value, 0)}`;
        lines.push(
          `${host}::health_flags::${HEALTH[str(lb.health_status)] ?? 'healthy'}`,
          `${host}::weight::${uint(lb.load_balancing_weight, 1)}`,
          `${host}::region::${str(where.region)}`,
          `${host}::zone::${str(where.zone)}`,
          `${host}::sub_zone::${str(where.sub_zone)}`,
          `${host}::priority::${uint(locality.priority, 0)}`,
        );
      }
    }
  }
  return lines.map((l) => `${l}\n`).join('');
}
