import type { LogEntry, WireResource } from '../events/types.js';
import type { Registry } from '../resources/registry.js';
import { meshRange, viewKey } from './keys.js';
import { SortedKeys } from './sorted-keys.js';

/**
 * One stored resource as readers see it. Its wire JSON is made on the first read and kept, so a
 * replay at start-up does not serialise every resource and later reads send ready JSON.
 */
export class ViewItem {
  private cachedJson: string | undefined;

  constructor(
    readonly kind: string,
    readonly mesh: string | undefined,
    readonly name: string,
    readonly resource: WireResource,
    /** Revision of the last change to this resource (the ETag). */
    readonly revision: number,
    /** Origin of the last change: `local` or a zone name. */
    readonly origin: string,
  ) {}

  /** The resource as wire JSON. */
  get json(): string {
    return (this.cachedJson ??= JSON.stringify(this.resource));
  }
}

/** A page request over one kind: optionally one mesh, tag filters, a predicate, offset and size. */
export interface PageQuery {
  mesh?: string;
  offset: number;
  size: number;
  /** `tag=key:value` filters (decisions §5): all must match one tag set; `*` matches any value. */
  tags?: ReadonlyArray<readonly [string, string]>;
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
  /** For kinds with `tagSets`: `key\0value` → the view keys of resources that carry that tag. */
  tagIndex?: Map<string, SortedKeys>;
  tagSets?: (resource: Record<string, unknown>) => Array<Record<string, string>>;
}

const tagIndexKeys = (sets: Array<Record<string, string>>): Set<string> => {
  const out = new Set<string>();
  for (const tags of sets) for (const k in tags) out.add(`${k}\u0000${tags[k]}`);
  return out;
};

/** True when every filter matches one of the tag sets (`*` matches any value of the key). */
export function tagSetsMatch(
  sets: Array<Record<string, string>>,
  filters: ReadonlyArray<readonly [string, string]>,
): boolean {
  return sets.some((tags) =>
    filters.every(([k, v]) => tags[k] !== undefined && (v === '*' || tags[k] === v)),
  );
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
  for (const d of registry.stored) {
    views.set(d.kind, {
      byKey: new Map(),
      order: new SortedKeys(),
      perMesh: new Map(),
      tagSets: d.tagSets,
      tagIndex: d.tagSets ? new Map() : undefined,
    });
  }
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

  const index = (v: KindView, key: string, resource: WireResource | undefined, add: boolean): void => {
    if (!v.tagIndex || !v.tagSets || !resource) return;
    for (const t of tagIndexKeys(v.tagSets(resource))) {
      let keys = v.tagIndex.get(t);
      if (add) {
        if (!keys) v.tagIndex.set(t, (keys = new SortedKeys()));
        keys.insert(key);
      } else if (keys) {
        keys.remove(key);
        if (keys.size === 0) v.tagIndex.delete(t);
      }
    }
  };

  /** Scans keys [lo, hi) of one ordered key list, paging the items that pass `match`. */
  const scan = (
    v: KindView,
    keys: SortedKeys,
    lo: number,
    hi: number,
    q: PageQuery,
    match: (item: ViewItem) => boolean,
  ): Page<ViewItem> => {
    const items: ViewItem[] = [];
    let total = 0;
    for (let i = lo; i < hi; i++) {
      const item = v.byKey.get(keys.at(i)) as ViewItem;
      if (!match(item)) continue;
      if (total >= q.offset && items.length < q.size) items.push(item);
      total++;
    }
    return { total, items };
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
        index(v, key, before?.resource, false);
        if (e.operation === 'delete') {
          if (before) {
            v.byKey.delete(key);
            v.order.remove(key);
            bump(v, e.mesh, -1);
          }
        } else if (e.resource) {
          v.byKey.set(key, new ViewItem(e.kind, e.mesh, e.name, e.resource, e.revision, e.origin));
          index(v, key, e.resource, true);
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
      const tags = query.tags && query.tags.length > 0 ? query.tags : undefined;
      if (!query.filter && !tags) {
        const [lo, hi] = bounds(v, query.mesh);
        const from = Math.min(lo + query.offset, hi);
        const to = Math.min(from + query.size, hi);
        return { total: hi - lo, items: v.order.slice(from, to).map((k) => v.byKey.get(k) as ViewItem) };
      }
      const extra = query.filter;
      const sets = v.tagSets;
      const match =
        tags && sets
          ? (item: ViewItem) => tagSetsMatch(sets(item.resource), tags) && (!extra || extra(item))
          : (item: ViewItem) => !extra || extra(item);
      // With a concrete tag filter, walk only the resources carrying the rarest of its tags.
      const concrete = tags?.filter(([, val]) => val !== '*') ?? [];
      if (v.tagIndex && concrete.length > 0) {
        let best: { keys: SortedKeys; lo: number; hi: number } | undefined;
        for (const [k, val] of concrete) {
          const keys = v.tagIndex.get(`${k}\u0000${val}`);
          if (!keys) return { total: 0, items: [] };
          const [lo, hi] = bounds({ ...v, order: keys }, query.mesh);
          if (!best || hi - lo < best.hi - best.lo) best = { keys, lo, hi };
        }
        const b = best as { keys: SortedKeys; lo: number; hi: number };
        return scan(v, b.keys, b.lo, b.hi, query, match);
      }
      // Other filters scan the mesh range once, counting every match (decisions §5: total).
      const [lo, hi] = bounds(v, query.mesh);
      return scan(v, v.order, lo, hi, query, match);
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
