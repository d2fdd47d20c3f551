import type { Registry } from '../resources/registry.js';
import type { MeshSummaries } from './mesh-summaries.js';
import { buildOverview, proxyState } from './overviews.js';
import type { Page, ResourceViews, ViewItem } from './resource-views.js';
import type { Insight, StatusReader } from './status-reader.js';

/** A derived object with the revision of the resource it was built from, if any. */
export interface DerivedItem {
  value: Record<string, unknown>;
  revision?: number;
  /** Wire bytes when they are kept ready (overviews); otherwise the value is serialised. */
  body?: Buffer;
}

/** Page request over a derived kind; `filter` sees the derived object and its source resource. */
export interface DerivedQuery {
  mesh?: string;
  offset: number;
  size: number;
  /** Tag filters, applied through the source kind's tag index (overviews only). */
  tags?: ReadonlyArray<readonly [string, string]>;
  filter?: (value: Record<string, unknown>, source?: ViewItem) => boolean;
}

/** Read access to one derived kind. */
export interface DerivedReader {
  get(mesh: string | undefined, name: string): DerivedItem | undefined;
  page(query: DerivedQuery): Page<DerivedItem>;
}

/** Pages a sorted in-memory list with an optional filter. */
function pageOf(all: DerivedItem[], q: DerivedQuery): Page<DerivedItem> {
  const matching = q.filter ? all.filter((d) => q.filter?.(d.value)) : all;
  return { total: matching.length, items: matching.slice(q.offset, q.offset + q.size) };
}

/** Readers for every derived kind, keyed by the registry's `derived.projection` name. */
export function createDerivedViews(deps: {
  registry: Registry;
  views: ResourceViews;
  status: StatusReader;
  summaries: MeshSummaries;
  now: () => Date;
}): Record<string, DerivedReader> {
  const { registry, views, status, summaries } = deps;

  /** An overview reader over a stored kind: pages the source view, builds each overview. */
  const overviewReader = (
    kind: string,
    type: string,
    specKey: string,
    insightKey: string,
    insightOf: (item: ViewItem) => Insight | undefined,
  ): DerivedReader => {
    // Overview bytes are kept per resource until the resource or its insight changes.
    const cache = new WeakMap<
      ViewItem,
      { resource: unknown; insight: unknown; value: Record<string, unknown>; body: Buffer }
    >();
    const build = (item: ViewItem): DerivedItem => {
      const insight = insightOf(item);
      let c = cache.get(item);
      if (!c || c.resource !== item.resource || c.insight !== insight) {
        const value = buildOverview(type, item, specKey, insightKey, insight);
        c = { resource: item.resource, insight, value, body: Buffer.from(JSON.stringify(value)) };
        cache.set(item, c);
      }
      return { value: c.value, body: c.body, revision: item.revision };
    };
    return {
      get(mesh, name) {
        const item = views.get(kind, mesh, name);
        return item ? build(item) : undefined;
      },
      page(q) {
        const filter = q.filter;
        const page = views.page(kind, {
          mesh: q.mesh,
          offset: q.offset,
          size: q.size,
          tags: q.tags,
          // Overview filters look at the source resource only, so no overview is built to filter.
          filter: filter ? (item) => filter(item.resource, item) : undefined,
        });
        return { total: page.total, items: page.items.map(build) };
      },
    };
  };

  const meshNames = (): string[] => {
    const names: string[] = [];
    views.each('Mesh', undefined, (item) => names.push(item.name));
    return names;
  };

  const meshInsight: DerivedReader = {
    get(_mesh, name) {
      const s = summaries.get(name);
      return s ? { value: s.insight } : undefined;
    },
    page(q) {
      const all = meshNames()
        .map((m) => summaries.get(m))
        .filter((s) => s !== undefined)
        .map((s) => ({ value: s.insight }));
      return pageOf(all, q);
    },
  };

  const serviceInsight: DerivedReader = {
    get(mesh, name) {
      const s = mesh === undefined ? undefined : summaries.get(mesh)?.serviceIndex.get(name);
      return s ? { value: s } : undefined;
    },
    page(q) {
      const meshes = q.mesh === undefined ? meshNames() : [q.mesh];
      const all: DerivedItem[] = [];
      for (const m of meshes) for (const s of summaries.get(m)?.services ?? []) all.push({ value: s });
      return pageOf(all, q);
    },
  };

  const globalInsights: DerivedReader = {
    get() {
      const resources: Record<string, { total: number }> = {};
      for (const d of registry.stored) {
        if (d.globalInsightsKey) resources[d.globalInsightsKey] = { total: views.count(d.kind) };
      }
      return { value: { type: 'GlobalInsights', creationTime: deps.now().toISOString(), resources } };
    },
    page() {
      throw new Error('GlobalInsights is a singleton');
    },
  };

  return {
    dataplaneOverview: overviewReader(
      'Dataplane',
      'DataplaneOverview',
      'dataplane',
      'dataplaneInsight',
      (i) => status.dataplaneInsight(i.mesh ?? '', i.name),
    ),
    zoneOverview: overviewReader('Zone', 'ZoneOverview', 'zone', 'zoneInsight', (i) =>
      status.zoneInsight(i.name),
    ),
    zoneIngressOverview: overviewReader(
      'ZoneIngress',
      'ZoneIngressOverview',
      'zoneIngress',
      'zoneIngressInsight',
      (i) => status.zoneIngressInsight(i.name),
    ),
    zoneEgressOverview: overviewReader(
      'ZoneEgress',
      'ZoneEgressOverview',
      'zoneEgress',
      'zoneEgressInsight',
      (i) => status.zoneEgressInsight(i.name),
    ),
    meshInsight,
    serviceInsight,
    globalInsights,
  };
}

/** Data plane overview filters of decisions §5, evaluated on the source data plane. */
export function dataplaneMatches(
  item: ViewItem,
  insight: Insight | undefined,
  f: { gateway?: string; status?: string },
): boolean {
  const networking = (item.resource.networking ?? {}) as { gateway?: { type?: string } };
  if (f.gateway !== undefined) {
    const gw = networking.gateway;
    // A gateway without `type` is DELEGATED, Kuma's enum default.
    const type = gw ? (gw.type === 'BUILTIN' ? 'builtin' : 'delegated') : undefined;
    if (f.gateway === 'true' && !gw) return false;
    if (f.gateway === 'false' && gw) return false;
    if ((f.gateway === 'builtin' || f.gateway === 'delegated') && type !== f.gateway) return false;
  }
  if (f.status !== undefined && proxyState(item.resource, insight) !== f.status) return false;
  return true;
}
