import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import type { Registry } from '../resources/registry.js';
import { registry } from '../resources/registry.js';
import { closest } from '../util/closest.js';
import { AppError } from '../util/errors.js';
import type { KindParams, RouteInfo } from './route-info.js';

/** Where a resource URL's collection segment sits: under `/meshes/:mesh/` or at the root. */
export type PathScope = 'mesh' | 'root';

/** The URL prefix of each scope, before the `:seg` of a parametric route. */
export const SCOPE_PREFIX: Readonly<Record<PathScope, string>> = { mesh: '/meshes/:mesh/', root: '/' };

/**
 * The registry's URL segments, looked up by the few parametric routes that serve every kind
 * (`/meshes/:mesh/:seg/:name`, `/:seg/:name`, …). One route per kind and alias was ~210 routes,
 * and registering them was ~80 ms of every start; a Map look-up per request costs nothing.
 */
export interface KindPaths {
  /** The kind listed at `<scope>/<seg>`: collections, cross-mesh lists and singletons (root). */
  list(scope: PathScope, seg: string): ResourceDescriptor | undefined;
  /** The kind of the item at `<scope>/<seg>/:name`; item-only aliases are readable, not writable. */
  item(scope: PathScope, seg: string, write: boolean): ResourceDescriptor | undefined;
  /** The stored kind whose history and revert live under `<scope>/<seg>/:name/`. */
  stored(scope: PathScope, seg: string): ResourceDescriptor | undefined;
}

/** Which look-up of {@link KindPaths} a segment serves: lists, writable items, readable items, stored kinds. */
export type SegmentUse = 'list' | 'item' | 'itemRead' | 'stored';

/** One URL segment of a kind: where it sits and what it serves. */
export interface KindSegment {
  use: SegmentUse;
  scope: PathScope;
  seg: string;
  desc: ResourceDescriptor;
}

/**
 * Every collection segment the resource routes serve, derived from the registry: the one table
 * behind both the look-ups ({@link createKindPaths}) and the API document (openapi-document.ts).
 */
export function kindSegments(registry: Registry): KindSegment[] {
  const out: KindSegment[] = [];
  const add = (use: SegmentUse, scope: PathScope, seg: string, desc: ResourceDescriptor): void => {
    out.push({ use, scope, seg, desc });
  };
  for (const d of registry.all) {
    if (d.singleton) {
      add('list', 'root', d.path, d);
      continue;
    }
    const scope: PathScope = d.scope === 'mesh' ? 'mesh' : 'root';
    for (const seg of [d.path, ...d.aliases]) {
      add('list', scope, seg, d);
      add('item', scope, seg, d);
      add('itemRead', scope, seg, d);
      if (!d.derived) add('stored', scope, seg, d);
      if (scope === 'mesh' && d.crossMeshList) add('list', 'root', seg, d);
    }
    for (const seg of d.itemAliases) add('itemRead', scope, seg, d);
  }
  return out;
}

/** Builds the look-ups from the registry (style habit 1: routes are generated from it). */
export function createKindPaths(registry: Registry): KindPaths {
  const table = (): Record<PathScope, Map<string, ResourceDescriptor>> => ({
    mesh: new Map(),
    root: new Map(),
  });
  const tables: Record<SegmentUse, ReturnType<typeof table>> = {
    list: table(),
    item: table(),
    itemRead: table(),
    stored: table(),
  };
  for (const { use, scope, seg, desc } of kindSegments(registry)) {
    const t = tables[use][scope];
    const other = t.get(seg);
    if (other && other !== desc)
      throw new Error(`${scope} segment ${seg} is both ${other.kind} and ${desc.kind}`);
    t.set(seg, desc);
  }
  return {
    list: (scope, seg) => tables.list[scope].get(seg),
    item: (scope, seg, write) => tables[write ? 'item' : 'itemRead'][scope].get(seg),
    stored: (scope, seg) => tables.stored[scope].get(seg),
  };
}

const misses = new WeakSet<AppError>();

/**
 * The 404 of a path no route serves, the same for the router's misses and unknown segments; a
 * path one typo or a missing plural away from a collection says which one was meant.
 */
export function noSuchEndpoint(method: string, url: string): AppError {
  const path = url.split('?')[0] ?? '';
  const meant = meantPath(path);
  const error = new AppError(
    'NOT_FOUND',
    'Not found',
    `no such endpoint: ${method} ${path}` + (meant === undefined ? '' : `; did you mean ${meant}?`),
  );
  misses.add(error);
  return error;
}

/** Top-level paths that are not the registry's (fixed routes). */
const FIXED_ROOT_SEGMENTS = ['config', 'versions', 'policies', 'status', 'openapi.json', 'tokens', '_events'];

let segmentNames: Record<PathScope, string[]> | undefined;

/** The collection segments users type, per scope, from the registry (built at the first miss). */
function knownSegments(): Record<PathScope, string[]> {
  if (segmentNames) return segmentNames;
  const names: Record<PathScope, Set<string>> = { mesh: new Set(), root: new Set(FIXED_ROOT_SEGMENTS) };
  for (const { scope, seg } of kindSegments(registry)) names[scope].add(seg);
  segmentNames = { mesh: [...names.mesh], root: [...names.root] };
  return segmentNames;
}

/**
 * `path` with its collection segment replaced by the one nearest to it (`/mesh` → `/meshes`,
 * `/meshes/default/dataplane/web-1` → `/meshes/default/dataplanes/web-1`), when that segment is
 * unknown and a known one is near; else undefined.
 */
function meantPath(path: string): string | undefined {
  const parts = path.split('/');
  // parts[0] is '' (the path starts with '/'); under /meshes/{mesh}/ the collection is parts[3].
  const at = parts[1] === 'meshes' && parts.length >= 4 ? 3 : 1;
  const scope: PathScope = at === 3 ? 'mesh' : 'root';
  const seg = parts[at] ?? '';
  const known = knownSegments()[scope];
  if (seg === '' || known.includes(seg)) return undefined;
  const near = known.find((k) => k === `${seg}s` || k === `${seg}es`) ?? closest(seg, known);
  if (near === undefined) return undefined;
  parts[at] = near;
  return parts.join('/');
}

/** Whether an error is {@link noSuchEndpoint}'s (which becomes a 405 when other methods serve the path). */
export function isEndpointMiss(err: unknown): boolean {
  return err instanceof AppError && misses.has(err);
}

/** A handler of a parametric resource route, called with the kind its path names. */
export type KindHandler = (
  desc: ResourceDescriptor,
  req: FastifyRequest<{ Params: KindParams }>,
  reply: FastifyReply,
) => Promise<FastifyReply>;

/**
 * Adds a parametric resource route. Its config tells the auth hooks the kind the path names (and
 * answers 404 for a segment that names none, before the body is read); the handler gets the kind.
 */
export function addKindRoute(
  app: FastifyInstance,
  method: 'GET' | 'PUT' | 'DELETE' | 'POST',
  url: string,
  kindOf: (p: KindParams) => ResourceDescriptor | undefined,
  handler: KindHandler,
): void {
  app.route<{ Params: KindParams }>({
    method,
    url,
    config: { action: method === 'GET' ? 'read' : 'write', kindOf } satisfies RouteInfo,
    handler: async (req, reply) => {
      const desc = kindOf(req.params);
      if (!desc) throw noSuchEndpoint(req.method, req.url);
      return handler(desc, req, reply);
    },
  });
}
