import type { FastifyInstance, FastifyRequest } from 'fastify';
import type { TokenService } from '../app/token-service.js';
import type { Registry } from '../resources/registry.js';
import type { AuthzSettings } from './authz.js';
import { createAuthorizer, meshOfRequest } from './authz.js';
import type { Identity } from './identity.js';
import { createAuthenticator } from './identity.js';
import { noSuchEndpoint } from './kind-paths.js';
import type { RequestOrigin } from './request-origin.js';
import { checkHostHeader } from './request-origin.js';
import type { KindParams, RouteInfo } from './route-info.js';
import { refuseForgeablePost } from './browser-writes.js';

/** What the auth hooks need: the token verifier, the loopback rule and the role model. */
export interface AuthDeps {
  tokens: Pick<TokenService, 'verifyUser'>;
  localhostIsAdmin: boolean;
  /** Whether the `Host` names us and the `Origin` is allowed (decisions §7). */
  origin: Pick<RequestOrigin, 'hostAllowed' | 'originAllowed'>;
  authz: AuthzSettings;
}

/**
 * Registers authentication and authorization as one `onRequest` hook, so a refused request
 * is answered before its body is read. A `Host` that is not `host[:port]` is 400 first; a POST that a
 * web page could forge is 415 (browser-writes.ts). Routes declare `config: {kind?, action, adminOnly?}`; a route
 * that declares nothing is admin only; one that declares `public: true` (gui-routes.ts) is open to all. Unknown paths (404) and CORS preflights are not authorized;
 * a parametric resource route whose `kindOf` names no kind is answered 404 here.
 */
export function registerAuthHooks(app: FastifyInstance, registry: Registry, deps: AuthDeps): void {
  const authenticate = createAuthenticator({
    verifyUser: (token) => deps.tokens.verifyUser(token),
    localhostIsAdmin: deps.localhostIsAdmin,
    hostAllowed: (req) => deps.origin.hostAllowed(req),
    originAllowed: (req) => deps.origin.originAllowed(req),
  });
  const authorizer = createAuthorizer(registry, deps.authz);
  app.decorateRequest('identity', null as unknown as Identity);
  const authorize = (req: FastifyRequest, identity: Identity): void => {
    req.identity = identity;
    if (req.is404 || req.method === 'OPTIONS') return;
    const info = (req.routeOptions.config ?? {}) as Partial<RouteInfo> & { public?: boolean };
    // The GUI's files and `/_identity` hold no data: a caller refused everything may still sign in.
    if (info.public === true) return;
    let kind = info.kind;
    if (info.kindOf) {
      // A parametric resource route: a path naming no kind is a 404, as if no route matched.
      const desc = info.kindOf(req.params as KindParams);
      if (!desc) throw noSuchEndpoint(req.method, req.url);
      kind = desc.kind;
    }
    refuseForgeablePost(req);
    if (info.perItem) {
      authorizer.checkMayWrite(identity, req.method, req.url.split('?')[0]);
      return;
    }
    authorizer.check(identity, {
      method: req.method,
      path: req.url.split('?')[0],
      action: info.action ?? 'write',
      kind,
      mesh: meshOfRequest(kind, req.params as { mesh?: string; name?: string }),
      adminOnly: info.adminOnly === true || info.action === undefined,
    });
  };
  // A callback hook, not an async one: most requests carry no token and are decided synchronously.
  // `done` is called once, outside the try: it runs the rest of the request, whose errors are not ours.
  app.addHook('onRequest', (req, _reply, done) => {
    const decide = (identity: Identity): void => {
      let refused: Error | undefined;
      try {
        authorize(req, identity);
      } catch (err) {
        refused = err as Error;
      }
      done(refused);
    };
    let identity: Identity | Promise<Identity>;
    try {
      checkHostHeader(req);
      identity = authenticate(req);
    } catch (err) {
      done(err as Error);
      return;
    }
    if (identity instanceof Promise) identity.then(decide, (err: unknown) => done(err as Error));
    else decide(identity);
  });
}
