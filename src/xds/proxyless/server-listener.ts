/**
 * The Listener of a proxyless gRPC *server* (`XdsServer` of `@grpc/grpc-js-xds`): the server asks
 * for `grpc/server?xds.resource.listening_address=<ip:port>` (the bootstrap's
 * `server_listener_resource_name_template`) and serves only once it has it. What 1.14.1 accepts
 * (server.js, listener-resource-type.js): `address.socket_address` equal to the bound ip and port
 * (else it stays UNAVAILABLE), filter chains of exactly one HttpConnectionManager filter, routes with
 * `non_forwarding_action` (any other action fails calls with UNAVAILABLE), the router filter last.
 * The RBAC filter is not optional: a server without `GRPC_XDS_EXPERIMENTAL_RBAC=true` has no RBAC
 * filter, NACKs the Listener and never serves, rather than serving everyone.
 *
 * The inbound served is the server proxy's Dataplane inbound with that port (and that address,
 * unless the server listens on 0.0.0.0 or ::). No such inbound still gets a Listener (a subscribed
 * Listener is never deleted) whose RBAC denies every call, with a note saying why.
 */
import { isIP } from 'node:net';
import type { PolicyResource } from '../../policies/policy-resource.js';
import type { Networking } from '../../policies/proxy-interfaces.js';
import type { TargetRefPolicy } from '../../policies/target-ref-match.js';
import type { SidecarItem } from '../../policies/match-sidecar.js';
import { SERVER_PERMISSION_KINDS, SERVER_TARGET_REF_KINDS } from '../../policies/kind-sets.js';
import * as TYPE from '../type-urls.js';
import type { ProxylessConfig } from './config.js';
import { inboundPermissions } from './inbound-permissions.js';
import { fingerprint } from './proto-values.js';

/** The bootstrap's `server_listener_resource_name_template` (gRPC's usual one). */
export const SERVER_LISTENER_TEMPLATE = 'grpc/server?xds.resource.listening_address=%s';

const PREFIX = SERVER_LISTENER_TEMPLATE.replace('%s', '');
const ANY_ADDRESS = new Set(['0.0.0.0', '::']);
const POLICY_NAME = 'allowed-callers';

/** True for the Listener name an `XdsServer` asks for. */
export const isServerListenerName = (name: string): boolean => name.startsWith(PREFIX);

/** The host and port of a server Listener name (`[v6]:port` unbracketed); undefined when malformed. */
export function listeningAddress(name: string): { host: string; port: number } | undefined {
  const m = /^(?:\[([^\]]+)\]|([^:]+)):(\d+)$/.exec(name.slice(PREFIX.length));
  if (!m) return undefined;
  const host = m[1] ?? (m[2] as string);
  const port = Number(m[3]);
  return isIP(host) !== 0 && port > 0 && port < 65536 ? { host, port } : undefined;
}

/** What a server Listener is computed from. */
export interface ServerListenerInput {
  /** The server proxy's Dataplane networking. */
  server: Networking;
  /** The mesh's Dataplanes: the possible callers. */
  callers: Iterable<Networking>;
  trafficPermissions: readonly PolicyResource[];
  meshTrafficPermissions: readonly TargetRefPolicy[];
}

/** The Listener for server Listener name `name`, and what a user should know about it. */
export function buildServerListener(
  name: string,
  input: ServerListenerInput,
): { listener: Record<string, unknown>; notes: string[]; shapedBy: string[] } {
  const at = listeningAddress(name);
  const notes: string[] = [];
  let allowed: string[] = [];
  let shapedBy: string[] = [];
  const inbound = at ? matchingInbound(input.server, at) : undefined;
  if (!at) notes.push('the listening address is not <ip>:<port>: every call is denied');
  else if (!inbound)
    notes.push(`no inbound of this Dataplane listens on ${at.host}:${at.port}: every call is denied`);
  else {
    const permissions = inboundPermissions({ ...input, inbound });
    allowed = permissions.allowed;
    shapedBy = permissions.policies;
    notes.push(...permissions.notes);
  }
  const routeConfig = {
    name: 'inbound',
    virtual_hosts: [
      {
        name: 'inbound',
        domains: ['*'],
        routes: [{ match: { prefix: '' }, non_forwarding_action: {} }],
      },
    ],
  };
  const rbac = {
    '@type': TYPE.RBAC,
    rules: {
      action: 'ALLOW',
      policies:
        allowed.length === 0
          ? {}
          : { [POLICY_NAME]: { permissions: [{ any: true }], principals: allowed.map(principal) } },
    },
  };
  const hcm = {
    '@type': TYPE.HTTP_CONNECTION_MANAGER,
    stat_prefix: `inbound.${fingerprint([routeConfig, rbac])}`,
    route_config: routeConfig,
    http_filters: [
      { name: 'envoy.filters.http.rbac', typed_config: rbac },
      { name: 'envoy.filters.http.router', typed_config: { '@type': TYPE.ROUTER } },
    ],
  };
  const listener = {
    name,
    address: { socket_address: { address: at?.host ?? '0.0.0.0', port_value: at?.port ?? 0 } },
    filter_chains: [
      {
        name: 'inbound',
        filters: [{ name: 'envoy.filters.network.http_connection_manager', typed_config: hcm }],
      },
    ],
  };
  return { listener, notes, shapedBy };
}

/** True when `name` is a server Listener name with the address and port of one of the proxy's inbounds. */
export function namesOwnInbound(networking: Networking | undefined, name: string): boolean {
  const at = listeningAddress(name);
  return networking !== undefined && at !== undefined && matchingInbound(networking, at) !== undefined;
}

function matchingInbound(
  server: Networking,
  at: { host: string; port: number },
): { port: number; address: string; tags: Readonly<Record<string, string>> } | undefined {
  for (const ib of server.inbound ?? []) {
    const address = ib.address ?? server.address;
    if (ib.port === at.port && (ANY_ADDRESS.has(at.host) || address === at.host))
      return { port: ib.port, address, tags: ib.tags };
  }
  return undefined;
}

const principal = (address: string) => ({
  direct_remote_ip: { address_prefix: address, prefix_len: { value: isIP(address) === 6 ? 128 : 32 } },
});

/**
 * A proxy's config when it may also be an `XdsServer`: the Listener names it asked for that are
 * server Listener names get server Listeners, from the permissions its entry lists (the best
 * TrafficPermission of each inbound, the MeshTrafficPermissions that select it) and the mesh's
 * Dataplanes as callers; the others go to `client` (the proxyless client config); listeners come
 * out sorted by name.
 */
export function withServerListeners(
  names: readonly string[],
  server: { networking: Networking; items: readonly SidecarItem[]; callers: () => Iterable<Networking> },
  client: (services: string[]) => ProxylessConfig,
): ProxylessConfig {
  const serverNames = names.filter(isServerListenerName);
  const config = client(names.filter((n) => !isServerListenerName(n)));
  if (serverNames.length === 0) return config;
  const listed = (kinds: readonly string[], type: SidecarItem['type']): PolicyResource[] => [
    ...new Set(
      server.items
        .filter((i) => i.type === type)
        .flatMap((i) => kinds.flatMap((kind) => i.matchedPolicies[kind] ?? [])),
    ),
  ];
  const input: ServerListenerInput = {
    server: server.networking,
    callers: [...server.callers()],
    trafficPermissions: listed(SERVER_PERMISSION_KINDS, 'inbound'),
    meshTrafficPermissions: listed(SERVER_TARGET_REF_KINDS, 'dataplane') as unknown as TargetRefPolicy[],
  };
  const listeners = [...config.listeners];
  const notes = { ...config.notes };
  const shapedBy = new Set(config.shapedBy);
  for (const name of serverNames) {
    const built = buildServerListener(name, input);
    listeners.push(built.listener);
    for (const p of built.shapedBy) shapedBy.add(p);
    if (built.notes.length > 0) notes[name] = built.notes;
  }
  listeners.sort((a, b) => (String(a.name) < String(b.name) ? -1 : String(a.name) > String(b.name) ? 1 : 0));
  return { ...config, listeners, notes, shapedBy: [...shapedBy].sort() };
}
