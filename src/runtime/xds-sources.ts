import type { PolicyResource } from '../policies/policy-resource.js';
import type { Networking } from '../policies/proxy-interfaces.js';
import type { ResourceViews } from '../projections/resource-views.js';
import type { XdsSources } from '../xds/mesh-config-source.js';
import type { MeshWrite } from '../xds/proxy-footprint.js';

/** What the xDS config reads of the mesh, from the resource views (issue 17). */
export function xdsSources(views: ResourceViews, localZone?: string): XdsSources {
  return {
    namedDataplanes: (m) => {
      const out: Array<{ name: string; networking: Networking }> = [];
      views.each('Dataplane', m, (item) =>
        out.push({ name: item.name, networking: item.resource.networking as Networking }),
      );
      return out;
    },
    meshExists: (m) => views.get('Mesh', undefined, m) !== undefined,
    dataplane: (m, n) => views.get('Dataplane', m, n)?.resource.networking as Networking | undefined,
    dataplanes: (m) => {
      const out: Networking[] = [];
      views.each('Dataplane', m, (item) => out.push(item.resource.networking as Networking));
      return out;
    },
    candidates: (m, kind) => {
      const out: PolicyResource[] = [];
      views.each(kind, m, (item) => out.push(item.resource as unknown as PolicyResource));
      return out;
    },
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
    const write: MeshWrite = { kind: e.kind, name: e.name, resource: e.resource, previous: e.previous };
    for (const l of listeners) l(mesh, write);
  });
  return (listener) => {
    listeners.add(listener);
    return () => listeners.delete(listener);
  };
}
