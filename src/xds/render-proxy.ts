/**
 * A proxy's proxyless config rendered from its entry in the match view: the one policy engine
 * decides, this only renders (`renderProxyless` for the services it dials, `withServerListeners` for
 * the inbounds it serves as an `XdsServer`).
 */
import type { EndpointRef, MatchReads, ProxyMatches } from '../policies/match-view.js';
import { proxyInterfaces, type Networking } from '../policies/proxy-interfaces.js';
import { SETTING_KINDS } from '../policies/kind-sets.js';
import type { PolicyResource } from '../policies/policy-resource.js';
import { renderProxyless, type EntryMesh, type ProxylessConfig } from './proxyless/config.js';
import { withServerListeners } from './proxyless/server-listener.js';
import { assignmentMemo } from './proxyless/clusters.js';

/** The kind whose policies on an endpoint's inbound a caller applies itself (faults). */
const FAULT_KIND = SETTING_KINDS.fault;

/** What rendering reads besides the match view. */
export interface RenderSources {
  /** The mesh's Dataplanes' networking: the callers a server's permissions name. */
  dataplanes(mesh: string): Iterable<Networking>;
  /** This control plane's zone (zone mode), whose endpoints are the local ones. */
  localZone?: string;
}

/**
 * The rest of the mesh as rendering reads it: endpoints and their inbounds' faults, from the match
 * view. Both are kept as first read: one is made per state (per revision for the xDS server), and
 * shared by the proxies rendered from it.
 */
export function entryMesh(
  matches: MatchReads<unknown>,
  mesh: string,
  /** Shared with other states' views to share their equal assignments (one per view by default). */
  assignment: EntryMesh['assignment'] = assignmentMemo(),
): EntryMesh<EndpointRef> {
  const endpoints = new Map<string, EndpointRef[]>();
  const faults = new Map<EndpointRef, readonly PolicyResource[]>();
  return {
    endpoints(service) {
      let list = endpoints.get(service);
      if (!list) endpoints.set(service, (list = matches.endpoints(mesh, service)));
      return list;
    },
    faults(e) {
      if (FAULT_KIND === undefined) return [];
      let list = faults.get(e);
      if (!list) faults.set(e, (list = matches.inboundPolicies(mesh, e.proxy, e.index, FAULT_KIND)));
      return list;
    },
    assignment,
  };
}

/**
 * The config of a proxy whose matches are `entry`, for the Listener names it asked for. `endpoints`:
 * with load assignments (what a stream is served) or without (the policies' part, for notes).
 */
export function renderProxy(input: {
  entry: ProxyMatches<unknown>;
  names: readonly string[];
  mesh: string;
  meshView: EntryMesh<EndpointRef>;
  sources: RenderSources;
  withEndpoints: boolean;
}): ProxylessConfig {
  const { entry, mesh, sources } = input;
  const sidecar = entry.kind === 'SidecarDataplane' ? entry : undefined;
  const items = sidecar ? sidecar.cells.items(sidecar.interfaces) : [];
  const interfaces = sidecar?.interfaces ?? proxyInterfaces(entry.networking);
  return withServerListeners(
    input.names,
    { networking: entry.networking, items, callers: () => sources.dataplanes(mesh) },
    (services) =>
      renderProxyless({
        entry: { interfaces, items },
        services,
        mesh: input.meshView,
        withEndpoints: input.withEndpoints,
        localZone: sources.localZone,
      }),
  );
}
