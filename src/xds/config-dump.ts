/**
 * The `/xds` answer (spec 2.20, decisions §11): an `envoy.admin.v3.ConfigDump`-shaped JSON of what a
 * proxy is served (or, not connected, would be served): the bootstrap node first, then listeners,
 * routes (inline in the listeners for a proxyless client: none on their own), clusters and
 * endpoints, each with the version it was served at, and the last NACK of its type as Envoy's
 * `error_state`. What the client cannot apply is said under `notes` (outside Envoy's shape).
 */
import * as TYPE from './type-urls.js';

const ADMIN = 'type.googleapis.com/envoy.admin.v3.';

/** The last rejection of a type: the client's error text and when. */
export interface Nack {
  message: string;
  time: string;
  version: number;
  /** True when the rejected response is the last one sent: its resources are the failed configuration. */
  lastSent?: boolean;
}

type Short = 'lds' | 'rds' | 'cds' | 'eds';

/** What the dump is made of. */
export interface DumpInput {
  node: { id: string; cluster: string; adminPort?: number };
  /** The version (log revision) each type was computed at; undefined: never sent. */
  versions: Partial<Record<Short, number>>;
  /** When each type was last sent (ISO time). */
  updated?: Partial<Record<Short, string>>;
  listeners: ReadonlyArray<Record<string, unknown>>;
  /** RouteConfigurations served on their own (none for a proxyless client, whose routes are inline). */
  routes?: ReadonlyArray<Record<string, unknown>>;
  clusters: ReadonlyArray<Record<string, unknown>>;
  assignments: ReadonlyArray<Record<string, unknown>>;
  nacks?: Partial<Record<Short, Nack>>;
  notes?: Record<string, string[]>;
}

const errorState = (nack: Nack | undefined, failed: Record<string, unknown>) =>
  nack
    ? {
        error_state: {
          ...(nack.lastSent ? { failed_configuration: failed } : {}),
          last_update_attempt: nack.time,
          details: nack.message,
          version_info: String(nack.version),
        },
      }
    : {};

/** The ConfigDump of one proxy. */
export function configDump(input: DumpInput): {
  configs: Array<Record<string, unknown>>;
  notes?: Record<string, string[]>;
} {
  const v = (k: Short): string => (input.versions[k] === undefined ? '' : String(input.versions[k]));
  const when = (k: Short) => (input.updated?.[k] ? { last_updated: input.updated[k] } : {});
  const configs: Array<Record<string, unknown>> = [
    {
      '@type': `${ADMIN}BootstrapConfigDump`,
      bootstrap: {
        node: {
          id: input.node.id,
          cluster: input.node.cluster,
          metadata: { 'dataplane.admin.port': String(input.node.adminPort ?? 0) },
        },
      },
    },
    {
      '@type': `${ADMIN}ListenersConfigDump`,
      version_info: v('lds'),
      dynamic_listeners: input.listeners.map((listener) => {
        const typed = { '@type': TYPE.LISTENER, ...listener };
        return {
          name: listener.name,
          active_state: { version_info: v('lds'), listener: typed, ...when('lds') },
          ...errorState(input.nacks?.lds, typed),
        };
      }),
    },
    {
      '@type': `${ADMIN}RoutesConfigDump`,
      dynamic_route_configs: (input.routes ?? []).map((route) => {
        const typed = { '@type': TYPE.ROUTE_CONFIGURATION, ...route };
        return {
          version_info: v('rds'),
          route_config: typed,
          ...when('rds'),
          ...errorState(input.nacks?.rds, typed),
        };
      }),
    },
    {
      '@type': `${ADMIN}ClustersConfigDump`,
      version_info: v('cds'),
      dynamic_active_clusters: input.clusters.map((cluster) => {
        const typed = { '@type': TYPE.CLUSTER, ...cluster };
        return {
          version_info: v('cds'),
          cluster: typed,
          ...when('cds'),
          ...errorState(input.nacks?.cds, typed),
        };
      }),
    },
    {
      '@type': `${ADMIN}EndpointsConfigDump`,
      dynamic_endpoint_configs: input.assignments.map((assignment) => {
        const typed = { '@type': TYPE.CLUSTER_LOAD_ASSIGNMENT, ...assignment };
        return {
          version_info: v('eds'),
          endpoint_config: typed,
          ...when('eds'),
          ...errorState(input.nacks?.eds, typed),
        };
      }),
    },
  ];
  const notes = input.notes && Object.keys(input.notes).length > 0 ? input.notes : undefined;
  return notes ? { configs, notes } : { configs };
}
