import type { LogEntry, WireResource } from '../events/types.js';
import type { Registry } from '../resources/registry.js';
import { meshRange, viewKey } from './keys.js';
import { SortedKeys } from './sorted-keys.js';

/** One stored resource as readers see it, with its JSON kept ready for the wire. */
export interface ViewItem {
  kind: string;
  mesh?: string;
  name: string;
  resource: WireResource;
  /** Revision of the last change to this resource (the ETag). */
  revision: number;
  /** Origin of the last change: `local` or a zone name. */
  origin: string;
  json: string;
}

/** A page request over one kind: optionally one mesh, a predicate, offset and size. */
export interface PageQuery {
  mesh?: string;
  offset: number;
  size: number;
  filter?: (item: ViewItem) => boolean;
}

/** A page: the total that passes the filter and the items of the page. */
export interface Page<T> {
  total: number;
  items: T[];
}

interface KindView {
  byKey: Map<string, ViewItem>;
  order: SortedKeys;
  perMesh: Map<string, number>;
}

/** Listener told about every applied change (used by insights to mark meshes dirty). */
export type ChangeListener = (entry: LogEntry, before: ViewItem | undefined) => void;

/** In-memory views of every stored kind, fed by committed log entries. */
export interface ResourceViews {
  apply(entries: readonly LogEntry[]): void;
  /** The last revision applied. */
  revision(): number;
  get(kind: string, mesh: string | undefined, name: string): ViewItem | undefined;
  page(kind: string, query: PageQuery): Page<ViewItem>;
  /** Iterates one kind (optionally one mesh) in (mesh, name) order. */
  each(kind: string, mesh: string | undefined, fn: (item: ViewItem) => void): void;
  count(kind: string, mesh?: string): number;
  /** Meshes that hold at least one resource of this kind. */
  onChange(listener: ChangeListener): void;
}

/** Builds empty views for every stored kind of the registry. */
export function createResourceViews(registry: Registry): ResourceViews {
  const views = new Map<string, KindView>();
  for (const d of registry.stored)
    views.set(d.kind, { byKey: new Map(), order: new SortedKeys(), perMesh: new Map() });
  const listeners: ChangeListener[] = [];
  let applied = 0;

  const viewOf = (kind: string): KindView => {
    const v = views.get(kind);
    if (!v) throw new Error(`no view for kind ${kind}`);
    return v;
  };

  const bounds = (v: KindView, mesh: string | undefined): [number, number] => {
    if (mesh === undefined) return [0, v.order.size];
    const r = meshRange(mesh);
    return [v.order.lowerBound(r.from), v.order.lowerBound(r.to)];
  };

  const bump = (v: KindView, mesh: string | undefined, delta: number): void => {
    const m = mesh ?? '';
    const n = (v.perMesh.get(m) ?? 0) + delta;
    if (n === 0) v.perMesh.delete(m);
    else v.perMesh.set(m, n);
  };

  return {
    apply(entries) {
      for (const e of entries) {
        const v = viewOf(e.kind);
        const key = viewKey(e.mesh, e.name);
        const before = v.byKey.get(key);
        if (e.operation === 'delete') {
          if (before) {
            v.byKey.delete(key);
            v.order.remove(key);
            bump(v, e.mesh, -1);
          }
        } else if (e.resource) {
          v.byKey.set(key, {
            kind: e.kind,
            mesh: e.mesh,
            name: e.name,
            resource: e.resource,
            revision: e.revision,
            origin: e.origin,
            json: JSON.stringify(e.resource),
          });
          if (!before) {
            v.order.insert(key);
            bump(v, e.mesh, 1);
          }
        }
        applied = e.revision;
        for (const l of listeners) l(e, before);
      }
    },
    revision: () => applied,
    get: (kind, mesh, name) => viewOf(kind).byKey.get(viewKey(mesh, name)),
    page(kind, query) {
      const v = viewOf(kind);
      const [lo, hi] = bounds(v, query.mesh);
      if (!query.filter) {
        const from = Math.min(lo + query.offset, hi);
        const to = Math.min(from + query.size, hi);
        return { total: hi - lo, items: v.order.slice(from, to).map((k) => v.byKey.get(k) as ViewItem) };
      }
      // Filtered lists scan the mesh range once, counting every match (decisions §5: total).
      const items: ViewItem[] = [];
      let total = 0;
      for (let i = lo; i < hi; i++) {
        const item = v.byKey.get(v.order.at(i)) as ViewItem;
        if (!query.filter(item)) continue;
        if (total >= query.offset && items.length < query.size) items.push(item);
        total++;
      }
      return { total, items };
    },
    each(kind, mesh, fn) {
      const v = viewOf(kind);
      const [lo, hi] = bounds(v, mesh);
      for (let i = lo; i < hi; i++) fn(v.byKey.get(v.order.at(i)) as ViewItem);
    },
    count(kind, mesh) {
      const v = viewOf(kind);
      return mesh === undefined ? v.byKey.size : (v.perMesh.get(mesh) ?? 0);
    },
    onChange(listener) {
      listeners.push(listener);
    },
  };
}
