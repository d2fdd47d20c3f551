import type { FastifyInstance } from 'fastify';
import FindMyWay from 'find-my-way';
import type { KindParams, RouteInfo } from './route-info.js';
import { AppError } from '../util/errors.js';

/** The methods a path may be asked with, in the order an `Allow` header lists them. */
const METHODS = ['GET', 'HEAD', 'PUT', 'POST', 'DELETE'] as const;

/** A route as it was added: its method and URL pattern (`/meshes/:mesh/:seg`). */
export interface RegisteredRoute {
  method: string;
  url: string;
}

const REGISTERED = new WeakMap<FastifyInstance, RegisteredRoute[]>();

/** Every route added to a server built by `buildServer` (HEAD twins and CORS's `OPTIONS *` included). */
export function registeredRoutes(app: FastifyInstance): readonly RegisteredRoute[] {
  return REGISTERED.get(app) ?? [];
}

/** Which methods a concrete path answers: consulted only when a request found no route for its method. */
export type AllowedMethods = (url: string) => string[];

/**
 * Collects the routes as they are added (an array push each: start-up stays as fast) and, on the
 * first miss, builds a router of its own to tell a path that exists with other methods (405 with
 * `Allow`) from one that does not (404). Parametric resource routes count for a method only when
 * their `kindOf` accepts the path, and writes only for stored kinds (a derived kind has GET, not PUT).
 */
export function collectAllowedMethods(app: FastifyInstance, maxParamLength: number): AllowedMethods {
  const routes: Array<{ method: string; url: string; kindOf?: RouteInfo['kindOf'] }> = [];
  const table: RegisteredRoute[] = [];
  REGISTERED.set(app, table);
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) {
      table.push({ method, url: route.url });
      if (!(METHODS as readonly string[]).includes(method) || route.url.includes('*')) continue;
      routes.push({
        method,
        url: route.url,
        kindOf: (route.config as Partial<RouteInfo> | undefined)?.kindOf,
      });
    }
  });
  let router: FindMyWay.Instance<FindMyWay.HTTPVersion.V1> | undefined;
  const build = () => {
    // As the API's router does: `/meshes/` is `/meshes` (GET), not `/meshes/:name` with an empty name.
    const r = FindMyWay({ maxParamLength, ignoreTrailingSlash: true });
    for (const { method, url, kindOf } of routes) {
      r.on(method as FindMyWay.HTTPMethod, url, () => undefined, { kindOf });
    }
    return r;
  };
  return (url) => {
    router ??= build();
    const path = url.split('?')[0];
    return METHODS.filter((method) => {
      const found = router?.find(method, path);
      if (!found) return false;
      const { kindOf } = found.store as { kindOf?: RouteInfo['kindOf'] };
      if (!kindOf) return true;
      const desc = kindOf(found.params as unknown as KindParams);
      // Derived kinds (overviews, insights) are read-only.
      return desc !== undefined && (method === 'GET' || method === 'HEAD' || !desc.derived);
    });
  };
}

/** The 405 of a path that exists with other methods (RFC 9110 15.5.6: with `Allow`). */
export function methodNotAllowed(method: string, url: string, allowed: string[]): AppError {
  return new AppError(
    'METHOD_NOT_ALLOWED',
    'Method not allowed',
    `${method} is not supported on ${url.split('?')[0]}; it supports ${allowed.join(', ')}`,
  );
}
