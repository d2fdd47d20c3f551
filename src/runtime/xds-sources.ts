import type { MatchReads } from '../policies/match-view.js';
import type { Networking } from '../policies/proxy-interfaces.js';
import type { ResourceViews } from '../projections/resource-views.js';
import type { DumpSources } from '../xds/dump.js';
import type { MeshWrite } from '../xds/mesh-config-source.js';

/** What the xDS config and dumps read of the mesh: the resource views and the policy engine. */
export function xdsSources(
  views: ResourceViews,
  matches: MatchReads<unknown>,
  localZone?: string,
): DumpSources {
  return {
    meshExists: (m) => views.get('Mesh', undefined, m) !== undefined,
    dataplane: (m, n) => views.get('Dataplane', m, n)?.resource.networking as Networking | undefined,
    dataplanes: (m) => {
      const out: Networking[] = [];
      views.each('Dataplane', m, (item) => out.push(item.resource.networking as Networking));
      return out;
    },
    matches,
    revision: () => views.revision(),
    localZone,
  };
}
/** Calls `listener(mesh, write)` after each applied change in a mesh (a Mesh is in itself). */
export function onMeshChange(
  views: ResourceViews,
): (listener: (mesh: string, write: MeshWrite) => void) => () => void {
  const listeners = new Set<(mesh: string, write: MeshWrite) => void>();
  views.onChange((e) => {
    const mesh = e.kind === 'Mesh' ? e.name : e.mesh;
    if (mesh === undefined) return;
    const write: MeshWrite = { kind: e.kind, name: e.name };
    for (const l of listeners) l(mesh, write);
  });
  return (listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
}
