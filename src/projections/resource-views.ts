import type { LogEntry, WireResource } from '../events/types.js';
import type { Registry } from '../resources/registry.js';
import { deepEqual } from '../util/deep-equal.js';
import { meshNameKey, meshRange, tagIndexKey } from '../resources/keys.js';
import { SortedList } from './sorted-list.js';

/**
 * One stored resource as readers see it; one object for the resource's lifetime, updated in place
 * so the order and tag indexes hold it directly. Its wire body is made on the first read and kept
 * as bytes, so a replay at start-up serialises nothing and reads send ready bytes.
 */
export class ViewItem {
  private cached: Buffer | undefined;

  constructor(
    /** The view key (mesh, separator, name): the sort order of lists. */
    readonly key: string,
    readonly kind: string,
    readonly mesh: string | undefined,
    readonly name: string,
    public resource: WireResource,
    /** Revision of the last change to this resource (the ETag). */
    public revision: number,
    /** Origin of the last change: `local` or a zone name. */
    public origin: string,
  ) {}

  /** Replaces the state after an update. */
  update(resource: WireResource, revision: number, origin: string): void {
    this.resource = resource;
    this.revision = revision;
    this.origin = origin;
    this.cached = undefined;
  }

  /** The resource as wire JSON bytes (UTF-8). */
  get body(): Buffer {
    return (this.cached ??= Buffer.from(JSON.stringify(this.resource)));
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

type TagSets = (resource: Record<string, unknown>) => Array<Record<string, string>>;

interface KindView {
  byKey: Map<string, ViewItem>;
  order: SortedList<ViewItem>;
  perMesh: Map<string, number>;
  /** For kinds with `tagSets`: `tagIndexKey(key, value)` → the resources that carry that tag, in order. */
  tagIndex?: Map<string, SortedList<ViewItem>>;
  tagSets?: TagSets;
}

const tagIndexKeys = (sets: Array<Record<string, string>>): Set<string> => {
  const out = new Set<string>();
  for (const tags of sets) for (const k in tags) out.add(tagIndexKey(k, tags[k]));
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

/** Listener told about every applied change (insights use it to keep their counters). */
export type ChangeListener = (entry: LogEntry) => void;

/** In-memory views of every stored kind, fed by committed log entries. */
export interface ResourceViews {
  apply(entries: readonly LogEntry[]): void;
  /** The last revision applied. */
  revision(): number;
  /** Moves the applied revision up to `revision` without a change (a snapshot's revision may be past its last change). */
  advance(revision: number): void;
  get(kind: string, mesh: string | undefined, name: string): ViewItem | undefined;
  page(kind: string, query: PageQuery): Page<ViewItem>;
  /** Iterates one kind (optionally one mesh) in (mesh, name) order. */
  each(kind: string, mesh: string | undefined, fn: (item: ViewItem) => void): void;
  count(kind: string, mesh?: string): number;
  onChange(listener: ChangeListener): void;
}

/** Bounds [lo, hi) of one mesh (or everything) in a sorted list. */
function bounds(list: SortedList<ViewItem>, mesh: string | undefined): [number, number] {
  if (mesh === undefined) return [0, list.size];
  const r = meshRange(mesh);
  return [list.lowerBound(r.from), list.lowerBound(r.to)];
}

/** Pages positions [lo, hi) of a list, keeping the items that pass `match`, counting them all. */
function scan(
  list: SortedList<ViewItem>,
  lo: number,
  hi: number,
  q: PageQuery,
  match: (item: ViewItem) => boolean,
): Page<ViewItem> {
  const items: ViewItem[] = [];
  let total = 0;
  for (let i = lo; i < hi; i++) {
    const item = list.at(i);
    if (!match(item)) continue;
    if (total >= q.offset && items.length < q.size) items.push(item);
    total++;
  }
  return { total, items };
}

/** A page of positions [lo, hi) with no filter: O(log n + page). */
function slicePage(list: SortedList<ViewItem>, lo: number, hi: number, q: PageQuery): Page<ViewItem> {
  const from = Math.min(lo + q.offset, hi);
  return { total: hi - lo, items: list.slice(from, Math.min(from + q.size, hi)) };
}

/** Builds empty views for every stored kind of the registry. */
export function createResourceViews(registry: Registry): ResourceViews {
  const views = new Map<string, KindView>();
  for (const d of registry.stored) {
    views.set(d.kind, {
      byKey: new Map(),
      order: new SortedList(),
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

  /** Moves an item between tag lists: out of the tags it no longer has, into the new ones. */
  const reindex = (v: KindView, item: ViewItem, before: Set<string>, after: Set<string>): void => {
    const index = v.tagIndex as Map<string, SortedList<ViewItem>>;
    for (const t of before) {
      if (after.has(t)) continue;
      const list = index.get(t);
      list?.remove(item.key);
      if (list?.size === 0) index.delete(t);
    }
    for (const t of after) {
      if (before.has(t)) continue;
      let list = index.get(t);
      if (!list) index.set(t, (list = new SortedList()));
      list.insert(item);
    }
  };
  const tagsOf = (v: KindView, r: WireResource | undefined): Set<string> =>
    v.tagSets && r ? tagIndexKeys(v.tagSets(r)) : new Set();

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
        const key = meshNameKey(e.mesh, e.name);
        const item = v.byKey.get(key);
        if (e.operation === 'delete') {
          if (item) {
            if (v.tagIndex) reindex(v, item, tagsOf(v, item.resource), new Set());
            v.byKey.delete(key);
            v.order.remove(key);
            bump(v, e.mesh, -1);
          }
        } else if (e.resource) {
          if (item) {
            // Most updates keep the tags: compare the tag maps before building any index keys.
            const sets = v.tagSets;
            const retag = sets !== undefined && !deepEqual(sets(item.resource), sets(e.resource));
            const before = retag ? tagsOf(v, item.resource) : undefined;
            item.update(e.resource, e.revision, e.origin);
            if (before) reindex(v, item, before, tagsOf(v, e.resource));
          } else {
            const fresh = new ViewItem(key, e.kind, e.mesh, e.name, e.resource, e.revision, e.origin);
            v.byKey.set(key, fresh);
            v.order.insert(fresh);
            if (v.tagIndex) reindex(v, fresh, new Set(), tagsOf(v, e.resource));
            bump(v, e.mesh, 1);
          }
        }
        applied = e.revision;
        for (const l of listeners) l(e);
      }
    },
    revision: () => applied,
    advance(revision) {
      if (revision > applied) applied = revision;
    },
    get: (kind, mesh, name) => viewOf(kind).byKey.get(meshNameKey(mesh, name)),
    page(kind, query) {
      const v = viewOf(kind);
      const tags = query.tags && query.tags.length > 0 ? query.tags : undefined;
      if (!query.filter && !tags) return slicePage(v.order, ...bounds(v.order, query.mesh), query);
      const extra = query.filter;
      const sets = v.tagSets;
      const concrete = tags?.filter(([, val]) => val !== '*') ?? [];
      if (v.tagIndex && concrete.length > 0) {
        // Walk only the resources that carry the rarest of the filter's concrete tags.
        let best: { list: SortedList<ViewItem>; lo: number; hi: number } | undefined;
        for (const [k, val] of concrete) {
          const list = v.tagIndex.get(tagIndexKey(k, val));
          if (!list) return { total: 0, items: [] };
          const [lo, hi] = bounds(list, query.mesh);
          if (!best || hi - lo < best.hi - best.lo) best = { list, lo, hi };
        }
        const b = best as { list: SortedList<ViewItem>; lo: number; hi: number };
        // One tag and nothing else: the index list is exactly the answer.
        if (tags?.length === 1 && !extra) return slicePage(b.list, b.lo, b.hi, query);
        return scan(
          b.list,
          b.lo,
          b.hi,
          query,
          (item) => tagSetsMatch((sets as TagSets)(item.resource), tags ?? []) && (!extra || extra(item)),
        );
      }
      const match =
        tags && sets
          ? (item: ViewItem) => tagSetsMatch(sets(item.resource), tags) && (!extra || extra(item))
          : (item: ViewItem) => !extra || extra(item);
      // Other filters scan the mesh range once, counting every match (decisions §5: total).
      return scan(v.order, ...bounds(v.order, query.mesh), query, match);
    },
    each(kind, mesh, fn) {
      const v = viewOf(kind);
      const [lo, hi] = bounds(v.order, mesh);
      for (let i = lo; i < hi; i++) fn(v.order.at(i));
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
