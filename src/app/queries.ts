import type { DerivedItem, DerivedReader } from '../projections/derived-views.js';
import { dataplaneMatches } from '../projections/derived-views.js';
import type { ResourceViews, ViewItem } from '../projections/resource-views.js';
import type { StatusReader } from '../projections/status-reader.js';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import { AppError } from '../util/errors.js';

/** One resource ready for the wire: its JSON bytes and, for stored kinds, its revision (ETag). */
export interface ReadItem {
  body: Buffer;
  revision?: number;
}

/** Filters of decisions §5; each is already validated by the API. */
export interface ListFilters {
  name?: string;
  tags?: Array<[string, string]>;
  gateway?: string;
  status?: string;
}

/** A list request. */
export interface ListRequest extends ListFilters {
  mesh?: string;
  offset: number;
  size: number;
}

/** A page of items as JSON bytes with the total that passes the filters. */
export interface ListResult {
  total: number;
  items: Buffer[];
}

/** Read side used by the API: stored kinds from the views, derived kinds from their readers. */
export interface Queries {
  /** The revision every answer reflects (x-mesh-revision). */
  revision(): number;
  get(desc: ResourceDescriptor, mesh: string | undefined, name: string): ReadItem;
  list(desc: ResourceDescriptor, req: ListRequest): ListResult;
  /** A singleton derived object (GlobalInsights). */
  singleton(desc: ResourceDescriptor): Buffer;
}

const bodyOf = (d: DerivedItem): Buffer => d.body ?? Buffer.from(JSON.stringify(d.value));

/** Creates the read side over the views and the derived readers. */
export function createQueries(deps: {
  views: ResourceViews;
  derived: Record<string, DerivedReader>;
  status: StatusReader;
}): Queries {
  const { views, derived, status } = deps;

  const notFound = (desc: ResourceDescriptor, mesh: string | undefined, name: string): AppError =>
    new AppError(
      'NOT_FOUND',
      'Not found',
      desc.scope === 'mesh'
        ? `${desc.wireType} "${name}" not found in mesh "${mesh}"`
        : `${desc.wireType} "${name}" not found`,
    );

  const readerOf = (desc: ResourceDescriptor): DerivedReader => {
    const r = desc.derived ? derived[desc.derived.projection] : undefined;
    if (!r) throw new Error(`no reader for derived kind ${desc.kind}`);
    return r;
  };

  /** A predicate over the source resource, or undefined when no filter applies. */
  const sourceFilter = (req: ListFilters): ((item: ViewItem) => boolean) | undefined => {
    const checks: Array<(item: ViewItem) => boolean> = [];
    if (req.name) {
      const needle = req.name;
      checks.push((item) => item.name.includes(needle));
    }
    if (req.gateway !== undefined || req.status !== undefined) {
      checks.push((item) =>
        dataplaneMatches(item, status.dataplaneInsight(item.mesh ?? '', item.name), {
          gateway: req.gateway,
          status: req.status,
        }),
      );
    }
    if (checks.length === 0) return undefined;
    return (item) => checks.every((c) => c(item));
  };

  return {
    revision: () => views.revision(),
    get(desc, mesh, name) {
      if (desc.derived) {
        const d = readerOf(desc).get(mesh, name);
        if (!d) throw notFound(desc, mesh, name);
        return { body: bodyOf(d), revision: d.revision };
      }
      const item = views.get(desc.kind, mesh, name);
      if (!item) throw notFound(desc, mesh, name);
      return { body: item.body, revision: item.revision };
    },
    list(desc, req) {
      if (desc.derived) {
        const f = sourceFilter(req);
        const byName = req.name;
        const page = readerOf(desc).page({
          mesh: req.mesh,
          offset: req.offset,
          size: req.size,
          tags: req.tags,
          // Overviews filter on their source resource; insights only by name.
          filter: f
            ? (value, source) => (source ? f(source) : byName ? String(value.name).includes(byName) : true)
            : undefined,
        });
        return { total: page.total, items: page.items.map(bodyOf) };
      }
      const page = views.page(desc.kind, {
        mesh: req.mesh,
        offset: req.offset,
        size: req.size,
        tags: req.tags,
        filter: sourceFilter(req),
      });
      return { total: page.total, items: page.items.map((i) => i.body) };
    },
    singleton(desc) {
      const d = readerOf(desc).get(undefined, '');
      return Buffer.from(JSON.stringify(d?.value ?? {}));
    },
  };
}
