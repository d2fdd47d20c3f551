/**
 * A proxy's served xDS resources as a change's impact compares them: the config it would be served
 * (as for a proxy that is not connected, `wouldBeServedConfig`) split into its Listeners, Clusters
 * and ClusterLoadAssignments by name, each as JSON. The xDS renderers load on first use.
 */
import { createImpact, type RenderResources } from '../app/impact.js';
import type { LoadImpact } from '../api/impact-query.js';
import type { MatchView } from '../policies/match-view.js';
import type { GatewayView } from '../policies/match-gateway.js';
import type { ResourceViews } from '../projections/resource-views.js';
import { xdsSources } from './xds-sources.js';

/**
 * Loads the renderer. `localZone`: the zone whose endpoints are local to the proxy; on Global (none
 * of its own) each proxy is rendered as its own zone would render it.
 */
export async function servedResources(localZone: string | undefined): Promise<RenderResources> {
  const { wouldBeServedConfig } = await import('../xds/dump.js');
  const { configReads } = await import('../xds/proxyless/config.js');
  const render: RenderResources['render'] = (views, matches, mesh, name) => {
    const item = views.get('Dataplane', mesh, name);
    const zone = localZone ?? (item && item.origin !== 'local' ? item.origin : undefined);
    const sources = xdsSources(views, matches, zone);
    if (!sources.meshExists(mesh) || !item) return undefined;
    const served = wouldBeServedConfig(sources, mesh, name);
    const out = new Map<string, string>();
    const put = (type: string, list: ReadonlyArray<Record<string, unknown>>, key: string): void => {
      for (const r of list) out.set(`${type}\u0000${String(r[key])}`, JSON.stringify(r));
    };
    put('Listener', served.listeners, 'name');
    put('Cluster', served.clusters, 'name');
    put('ClusterLoadAssignment', served.assignments, 'cluster_name');
    return out;
  };
  return { render, reads: configReads };
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
