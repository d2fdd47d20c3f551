import type { WireResource } from '../events/types.js';
import type { ResourceViews } from '../projections/resource-views.js';
import type { AvailableService, ServiceCounts } from '../projections/service-counts.js';
import { trackServiceCounts } from '../projections/service-counts.js';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import type { Registry } from '../resources/registry.js';

export type { AvailableService } from '../projections/service-counts.js';

/** One resource of a snapshot, ready for the wire. */
export interface SnapshotItem {
  kind: string;
  mesh?: string;
  name: string;
  /** Revision of the resource's last change. */
  revision: number;
  /** The wire resource as JSON bytes. */
  body: Buffer;
}

/** A stored resource as the sync code reads it. */
export interface SourceItem {
  kind: string;
  mesh?: string;
  name: string;
  resource: WireResource;
  revision: number;
  origin: string;
}

/** Read access the sync sender needs: consistent snapshots and single resources (no views leak out). */
export interface SyncSource {
  /**
   * Every stored resource `select` keeps, taken in one turn so that it is exactly the state at
   * `revision` (the entries after it reach listeners registered in the same turn).
   */
  snapshot(select: (desc: ResourceDescriptor, item: SourceItem) => boolean): {
    revision: number;
    items: SnapshotItem[];
  };
  get(kind: string, mesh: string | undefined, name: string): SourceItem | undefined;
  /** Every resource of a kind (all meshes), in (mesh, name) order. */
  each(kind: string, fn: (item: SourceItem) => void): void;
  /**
   * The services a zone's ingress offers, from that zone's data planes: one entry per mesh
   * and inbound tag set (with `mesh.io/zone`), counting the proxies; inbounds not ready are left out.
   */
  availableServices(zone: string): AvailableService[];
}

/** Creates the sync source over the resource views. */
export function createSyncSource(deps: { registry: Registry; views: ResourceViews }): SyncSource {
  const { registry, views } = deps;
  let counts: ServiceCounts | undefined;
  const asItem = (i: {
    kind: string;
    mesh: string | undefined;
    name: string;
    resource: WireResource;
    revision: number;
    origin: string;
  }): SourceItem => ({
    kind: i.kind,
    mesh: i.mesh,
    name: i.name,
    resource: i.resource,
    revision: i.revision,
    origin: i.origin,
  });
  return {
    snapshot(select) {
      const items: SnapshotItem[] = [];
      for (const desc of registry.stored) {
        views.each(desc.kind, undefined, (item) => {
          if (!select(desc, item)) return;
          items.push({
            kind: desc.kind,
            mesh: item.mesh,
            name: item.name,
            revision: item.revision,
            body: item.body,
          });
        });
      }
      return { revision: views.revision(), items };
    },
    get(kind, mesh, name) {
      const item = views.get(kind, mesh, name);
      return item ? asItem(item) : undefined;
    },
    each(kind, fn) {
      views.each(kind, undefined, (item) => fn(asItem(item)));
    },
    availableServices(zone) {
      // Built on first use (Global, once a zone sends data planes or ingresses), then kept current.
      counts ??= trackServiceCounts(views);
      return counts.of(zone);
    },
  };
}
