import type { FastifyInstance } from 'fastify';
import type { Registry } from '../resources/registry.js';
import type { AuthzSettings } from './authz.js';
import { createAuthorizer } from './authz.js';
import { PUBLIC_ROUTE } from './gui-routes.js';

/**
 * `GET /_identity`: who the caller is to this API (loopback admin, a user token, or anonymous) and
 * the roles it holds, each for every mesh or for some. A client (the GUI) offers only what these
 * allow; the server decides each request all the same. Open to every caller: it tells a caller
 * only about itself.
 */
export function registerIdentityRoute(
  app: FastifyInstance,
  deps: { registry: Registry; authz: AuthzSettings; revision: () => number },
): void {
  const authorizer = createAuthorizer(deps.registry, deps.authz);
  app.get('/_identity', { config: PUBLIC_ROUTE }, async (req, reply) => {
    const { name, groups, via, expiresAt } = req.identity;
    const body = {
      name,
      groups,
      via,
      ...(expiresAt ? { expiresAt: expiresAt.toISOString() } : {}),
      grants: authorizer.grantsOf(req.identity).map((g) => ({
        role: g.role,
        ...(g.meshes ? { meshes: [...g.meshes] } : {}),
      })),
    };
    return reply
      .type('application/json')
      .header('x-mesh-revision', String(deps.revision()))
      .header('cache-control', 'no-store')
      .send(JSON.stringify(body));
  });
}
