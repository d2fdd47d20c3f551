/**
 * The views as a list of decided changes would leave them, without changing them: each read looks at
 * the changes first, then at the views underneath. Resources the changes leave alone are the views'
 * own items (the same objects), so a reader that compares by identity (the policy engine does) sees
 * only what changed. Read-only: it never changes, and it cannot be applied to.
 */
import type { EventInput } from '../events/types.js';
import { meshNameKey } from '../resources/keys.js';
import { ViewItem, type Page, type ResourceViews } from './resource-views.js';

interface Change {
  mesh: string | undefined;
  name: string;
  item: ViewItem | undefined;
}

/** `base` with `changes` applied in order (the last change of a resource wins; a delete removes it). */
export function overlayViews(base: ResourceViews, changes: readonly EventInput[]): ResourceViews {
  /** Kind → view key → the resource and its item after the changes (undefined: deleted). */
  const changed = new Map<string, Map<string, Change>>();
  const revision = base.revision() + changes.length;
  for (const e of changes) {
    let byKey = changed.get(e.kind);
    if (!byKey) changed.set(e.kind, (byKey = new Map()));
    const key = meshNameKey(e.mesh, e.name);
    const item =
      e.operation === 'delete' || !e.resource
        ? undefined
        : new ViewItem(key, e.kind, e.mesh, e.name, e.resource, revision, e.origin);
    byKey.set(key, { mesh: e.mesh, name: e.name, item });
  }
  const inMesh = (item: ViewItem, mesh: string | undefined): boolean =>
    mesh === undefined || item.mesh === mesh;
  /** The kind's new resources (not in the base) of one mesh, in key order. */
  const added = (kind: string, mesh: string | undefined): ViewItem[] =>
    [...(changed.get(kind)?.values() ?? [])]
      .map((c) => c.item)
      .filter((item): item is ViewItem => item !== undefined && inMesh(item, mesh))
      .filter((item) => base.get(kind, item.mesh, item.name) === undefined)
      .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));

  const views: ResourceViews = {
    apply() {
      throw new Error('the views a change would leave are read-only');
    },
    advance() {
      throw new Error('the views a change would leave are read-only');
    },
    revision: () => revision,
    get(kind, mesh, name) {
      const byKey = changed.get(kind);
      const key = meshNameKey(mesh, name);
      const c = byKey?.get(key);
      if (c) return c.item;
      return base.get(kind, mesh, name);
    },
    each(kind, mesh, fn) {
      const byKey = changed.get(kind);
      if (!byKey) return base.each(kind, mesh, fn);
      const news = added(kind, mesh);
      let next = 0;
      base.each(kind, mesh, (item) => {
        while (next < news.length && news[next].key < item.key) fn(news[next++]);
        const c = byKey.get(item.key);
        if (!c) return fn(item);
        if (c.item) fn(c.item);
      });
      while (next < news.length) fn(news[next++]);
    },
    count(kind, mesh) {
      let n = base.count(kind, mesh);
      for (const c of changed.get(kind)?.values() ?? []) {
        if (mesh !== undefined && c.mesh !== mesh) continue;
        const was = base.get(kind, c.mesh, c.name) !== undefined;
        if (was && !c.item) n--;
        else if (!was && c.item) n++;
      }
      return n;
    },
    page(kind, query): Page<ViewItem> {
      const items: ViewItem[] = [];
      let total = 0;
      views.each(kind, query.mesh, (item) => {
        if (query.filter && !query.filter(item)) return;
        if (query.tags && query.tags.length > 0) {
          throw new Error('the views a change would leave are not filtered by tag');
        }
        if (total >= query.offset && items.length < query.size) items.push(item);
        total++;
      });
      return { total, items };
    },
    onChange() {
      // Nothing changes it.
    },
  };
  return views;
}
