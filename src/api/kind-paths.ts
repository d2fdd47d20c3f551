import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import type { Registry } from '../resources/registry.js';
import { AppError } from '../util/errors.js';
import type { RouteInfo } from './resource-routes.js';

/** Where a resource URL's collection segment sits: under `/meshes/:mesh/` or at the root. */
export type PathScope = 'mesh' | 'root';

/** The URL prefix of each scope, before the `:seg` of a parametric route. */
export const SCOPE_PREFIX: Readonly<Record<PathScope, string>> = { mesh: '/meshes/:mesh/', root: '/' };

/** Params of the parametric resource routes. */
export interface KindParams {
  mesh?: string;
  seg: string;
  name?: string;
}

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

/** Builds the look-ups from the registry (style habit 1: routes are generated from it). */
export function createKindPaths(registry: Registry): KindPaths {
  type Table = Record<PathScope, Map<string, ResourceDescriptor>>;
  const table = (): Table => ({ mesh: new Map(), root: new Map() });
  const lists = table();
  const items = table();
  const itemReads = table();
  const stored = table();
  const add = (t: Table, scope: PathScope, seg: string, d: ResourceDescriptor): void => {
    const other = t[scope].get(seg);
    if (other && other !== d) throw new Error(`${scope} segment ${seg} is both ${other.kind} and ${d.kind}`);
    t[scope].set(seg, d);
  };
  for (const d of registry.all) {
    if (d.singleton) {
      add(lists, 'root', d.path, d);
      continue;
    }
    const scope: PathScope = d.scope === 'mesh' ? 'mesh' : 'root';
    for (const seg of [d.path, ...d.aliases]) {
      add(lists, scope, seg, d);
      add(items, scope, seg, d);
      add(itemReads, scope, seg, d);
      if (!d.derived) add(stored, scope, seg, d);
      if (scope === 'mesh' && d.crossMeshList) add(lists, 'root', seg, d);
    }
    for (const seg of d.itemAliases) add(itemReads, scope, seg, d);
  }
  return {
    list: (scope, seg) => lists[scope].get(seg),
    item: (scope, seg, write) => (write ? items : itemReads)[scope].get(seg),
    stored: (scope, seg) => stored[scope].get(seg),
  };
}

const misses = new WeakSet<AppError>();

/** The 404 of a path no route serves, the same for the router's misses and unknown segments. */
export function noSuchEndpoint(method: string, url: string): AppError {
  const error = new AppError('NOT_FOUND', 'Not found', `no such endpoint: ${method} ${url.split('?')[0]}`);
  misses.add(error);
  return error;
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
