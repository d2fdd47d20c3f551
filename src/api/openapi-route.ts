import type { FastifyInstance } from 'fastify';
import type { Registry } from '../resources/registry.js';
import type { RouteInfo } from './route-info.js';

/** The serialised document of each registry, made on its first request (a process has one registry). */
const documents = new WeakMap<Registry, Promise<string>>();

/**
 * `GET /openapi.json`: the OpenAPI 3.1 document of this API, a read like `/policies`. Neither start-up
 * nor the bundle's first chunk pays for it: the generator is imported, and the document built and
 * serialised, on the first request; later requests send the same text.
 */
export function registerOpenApiRoute(
  app: FastifyInstance,
  deps: { registry: Registry; version: string; revision: () => number },
): void {
  const document = (): Promise<string> => {
    let doc = documents.get(deps.registry);
    if (!doc) {
      doc = import('./openapi-document.js').then((m) =>
        JSON.stringify(m.buildOpenApiDocument(deps.registry, deps.version)),
      );
      // A failure is answered (500) and not kept: the next request tries again.
      doc.catch(() => documents.delete(deps.registry));
      documents.set(deps.registry, doc);
    }
    return doc;
  };
  app.get('/openapi.json', { config: { action: 'read' } satisfies RouteInfo }, async (_req, reply) =>
    reply
      .type('application/json; charset=utf-8')
      .header('x-mesh-revision', String(deps.revision()))
      .send(await document()),
  );
}
