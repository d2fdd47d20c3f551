/**
 * A proxy's served xDS resources as a change's impact compares them: the config it would be served
 * (as for a proxy that is not connected, `wouldBeServedConfig`) split into its Listeners, Clusters
 * and ClusterLoadAssignments by name. The xDS renderers load on first use.
 */
import { createImpact, type Render, type RenderResources } from '../app/impact.js';
import type { LoadImpact } from '../api/impact-query.js';
import type { MatchReads, MatchView } from '../policies/match-view.js';
import type { GatewayView } from '../policies/match-gateway.js';
import type { ResourceViews } from '../projections/resource-views.js';
import { servedKey } from '../resources/keys.js';
import { xdsSources } from './xds-sources.js';

/**
 * Loads the renderer. `localZone`: the zone whose endpoints are local to the proxy; on Global (none
 * of its own) each proxy is rendered as its own zone would render it.
 */
export async function servedResources(localZone: string | undefined): Promise<RenderResources> {
  const { wouldBeServedConfig } = await import('../xds/dump.js');
  const { configReads } = await import('../xds/proxyless/config.js');
  const { entryMesh } = await import('../xds/render-proxy.js');
  const { assignmentMemo } = await import('../xds/proxyless/clusters.js');
  type MeshView = ReturnType<typeof entryMesh>;
  type Resources = ReadonlyMap<string, Readonly<Record<string, unknown>>>;
  // The proxies rendered from one state share its mesh (endpoints and their faults, read once).
  const begin = (): Render => {
    const shared = new Map<MatchReads<unknown>, Map<string, MeshView>>();
    // Both states build equal assignments where the endpoints stay: built once, the same objects.
    const assignment = assignmentMemo();
    const meshViewOf = (matches: MatchReads<unknown>, mesh: string): MeshView => {
      let byMesh = shared.get(matches);
      if (!byMesh) shared.set(matches, (byMesh = new Map()));
      let view = byMesh.get(mesh);
      if (!view) byMesh.set(mesh, (view = entryMesh(matches, mesh, assignment)));
      return view;
    };
    // Sidecars of one match class in one zone are served the same resources for the same services
    // (as the xDS server shares them): rendered once per state and shared, the same map each time.
    const byClass = new Map<MatchReads<unknown>, Map<string, Resources>>();
    return (views, matches, mesh, name, only) => {
      const item = views.get('Dataplane', mesh, name);
      const zone = localZone ?? (item && item.origin !== 'local' ? item.origin : undefined);
      const sources = xdsSources(views, matches, zone);
      if (!sources.meshExists(mesh) || !item) return undefined;
      const entry = matches.proxy(mesh, name);
      const key =
        entry?.kind === 'SidecarDataplane'
          ? JSON.stringify([mesh, zone ?? '', entry.classKey, only ? [...only].sort() : null])
          : undefined;
      let classes = byClass.get(matches);
      if (!classes) byClass.set(matches, (classes = new Map()));
      const seen = key === undefined ? undefined : classes.get(key);
      if (seen) return seen;
      const served = wouldBeServedConfig(sources, mesh, name, only, meshViewOf(matches, mesh));
      const out = new Map<string, Record<string, unknown>>();
      const put = (type: string, list: ReadonlyArray<Record<string, unknown>>, key: string): void => {
        for (const r of list) out.set(servedKey(type, String(r[key])), r);
      };
      put('Listener', served.listeners, 'name');
      put('Cluster', served.clusters, 'name');
      put('ClusterLoadAssignment', served.assignments, 'cluster_name');
      if (key !== undefined) classes.set(key, out);
      return out;
    };
  };
  return { begin, reads: configReads };
}

/** The impact of writes over the live state, its renderer loaded on the first write that asks. */
export function loadImpact(deps: {
  views: ResourceViews;
  matches: MatchView<GatewayView>;
  localZone: string | undefined;
}): LoadImpact {
  let loaded: ReturnType<LoadImpact> | undefined;
  return () =>
    (loaded ??= servedResources(deps.localZone).then((render) =>
      createImpact({ views: deps.views, matches: deps.matches, render, localZone: deps.localZone }),
    ));
}
