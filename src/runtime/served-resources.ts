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
  const begin = (): Render => {
    // Both states build equal assignments where the endpoints stay: built once, the same objects.
    const assignment = assignmentMemo();
    /**
     * What each state's renders share: its mesh (endpoints and their faults, read once), and the
     * renders of its match classes (sidecars of one class in one zone are served the same resources
     * for the same services, as the xDS server shares them: rendered once, the same map each time).
     */
    const states = new Map<
      MatchReads<unknown>,
      { meshes: Map<string, MeshView>; classes: Map<string, Resources> }
    >();
    const stateOf = (matches: MatchReads<unknown>) => {
      let state = states.get(matches);
      if (!state) states.set(matches, (state = { meshes: new Map(), classes: new Map() }));
      return state;
    };
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
      const state = stateOf(matches);
      const seen = key === undefined ? undefined : state.classes.get(key);
      if (seen) return seen;
      let meshView = state.meshes.get(mesh);
      if (!meshView) state.meshes.set(mesh, (meshView = entryMesh(matches, mesh, assignment)));
      const served = wouldBeServedConfig(sources, mesh, name, only, meshView);
      const out = new Map<string, Record<string, unknown>>();
      const put = (type: string, list: ReadonlyArray<Record<string, unknown>>, key: string): void => {
        for (const r of list) out.set(servedKey(type, String(r[key])), r);
      };
      put('Listener', served.listeners, 'name');
      put('Cluster', served.clusters, 'name');
      put('ClusterLoadAssignment', served.assignments, 'cluster_name');
      if (key !== undefined) state.classes.set(key, out);
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
