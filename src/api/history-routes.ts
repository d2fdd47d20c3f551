import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { EventFilter, History, SecretData } from '../app/history.js';
import type { TokenService } from '../app/token-service.js';
import { matchesFilter, redactsKind } from '../app/history.js';
import type { WriteSettings } from '../app/write-policy.js';
import { assertWritable } from '../app/write-policy.js';
import type { LogEntry } from '../events/types.js';
import type { Registry } from '../resources/registry.js';
import { isTokenSecret } from '../tokens/token-types.js';
import type { ErrorCause } from '../util/errors.js';
import { AppError } from '../util/errors.js';
import { actorOf } from './actor.js';
import type { AuthzSettings } from './authz.js';
import { createAuthorizer, describeCaller } from './authz.js';
import type { Identity } from './identity.js';
import { bearerToken } from './identity.js';
import { nextUrl, parsePage, parseRevision, rawQuery } from './list-query.js';
import { pageBody } from './page-body.js';
import type { KindHandler, PathScope } from './kind-paths.js';
import { SCOPE_PREFIX, addKindRoute, createKindPaths } from './kind-paths.js';
import type { KindParams, RouteInfo } from './route-info.js';
import { dryRunOf } from './resource-routes.js';
import type { StreamCredential, WatchOptions } from './watch.js';
import { createWatchHub } from './watch.js';

/** Dependencies of the history, audit, watch and revert routes. */
export interface HistoryRouteDeps {
  registry: Registry;
  history: History;
  writeSettings: WriteSettings;
  /** The role model, to show each caller only the audit entries of what it may read. */
  authz: AuthzSettings;
  watch: WatchOptions;
  /** Streams opened with a user token end when it is revoked, expires or its key goes. */
  tokens: Pick<TokenService, 'recheckUser'>;
  /** The clock tokens are verified with (default: the system clock). */
  now?: () => Date;
  logger?: FastifyBaseLogger;
  /** `apiServer.bodyLimit`: a revert stores at most this many bytes of JSON. */
  bodyLimit: number;
}

const json = (reply: FastifyReply, revision: number, body: string | Buffer): FastifyReply =>
  reply.type('application/json; charset=utf-8').header('x-mesh-revision', String(revision)).send(body);

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

const invalid = (causes: ErrorCause[]): AppError =>
  new AppError('INVALID_QUERY', 'Invalid query parameters', 'bad audit log parameters', causes);

/** `?includeSecretData=`: true shows secret entries with their data, else (default) with its digest. */
function secretDataOf(q: URLSearchParams, causes: ErrorCause[]): SecretData {
  const raw = q.get('includeSecretData');
  if (raw === null || raw === '' || raw === 'false') return 'digest';
  if (raw !== 'true') causes.push({ field: 'includeSecretData', message: 'must be true or false' });
  return raw === 'true' ? 'include' : 'digest';
}

/**
 * Registers `<resource URL>/_history`, `<resource URL>/_revert` for every stored kind and `/_events`
 * (list and `text/event-stream` watch), decisions §8. History reads need the right to read the
 * kind, revert the right to write it (so secrets stay admin only); `/_events` is open to readers
 * but shows each caller only entries of resources it may read: without the right to read secrets,
 * Secret and GlobalSecret entries are left out entirely, in lists and streams alike. Secret entries
 * show the digest of their data, not the data (the log keeps every version, private keys
 * included), unless the caller asks with `?includeSecretData=true` and may read those secrets.
 */
export function registerHistoryRoutes(app: FastifyInstance, deps: HistoryRouteDeps): void {
  const { registry, history, writeSettings } = deps;
  const authorizer = createAuthorizer(registry, deps.authz);
  const hub = createWatchHub({
    history,
    options: deps.watch,
    redacts: (kind, secretData) => redactsKind(registry, kind, secretData),
    logger: deps.logger,
  });

  /**
   * Refuses `?includeSecretData=true` (403) unless the caller may read every secret the answer may
   * hold: those of `mesh`, or with no mesh, those of every mesh and the global ones.
   */
  const assertMayIncludeSecretData = (req: FastifyRequest, mesh: string | undefined): void => {
    const target = {
      method: 'GET',
      path: req.url.split('?')[0],
      action: 'read' as const,
      kind: mesh === undefined ? 'GlobalSecret' : 'Secret',
      mesh,
      adminOnly: false,
    };
    if (authorizer.allows(req.identity, target)) return;
    throw new AppError(
      'FORBIDDEN',
      'Forbidden',
      `${describeCaller(req.identity)} may not read secret data: includeSecretData=true needs the ` +
        'right to read secrets (the admin role); without it each secret shows the sha256 of its data',
    );
  };
  app.addHook('preClose', async () => hub.closeAll());

  const resourceHistory: KindHandler = async (desc, req, reply) => {
    const q = rawQuery(req);
    const causes: ErrorCause[] = [];
    const { size, offset } = parsePage(q, causes);
    const secretData = secretDataOf(q, causes);
    if (causes.length > 0) throw invalid(causes);
    // A secret kind's history is already a read of that secret (checked on the route); another
    // kind has no secret data, so the flag changes nothing there.
    const head = history.head();
    const page = await history.resourceHistory(
      desc,
      req.params.mesh,
      req.params.name as string,
      { offset, size },
      secretData,
    );
    const next = nextUrl(req, q, offset, size, page.total);
    return json(reply, head, pageBody(page.total, page.items, next));
  };

  const revert: KindHandler = async (desc, req, reply) => {
    assertWritable(desc, writeSettings);
    const q = rawQuery(req);
    const dryRun = dryRunOf(q);
    const toRevision = parseRevision(q, history.head(), 'toRevision');
    if (toRevision === undefined) {
      throw invalid([{ field: 'toRevision', message: 'cannot be empty' }]);
    }
    const { mesh } = req.params;
    const name = req.params.name as string;
    const result = await history.revert({
      desc,
      mesh,
      name,
      toRevision,
      actor: actorOf(req),
      ifMatch: header(req, 'if-match'),
      dryRun,
      maxBytes: deps.bodyLimit,
    });
    if (result.operation === 'put') {
      const { put } = result;
      if (!dryRun) {
        req.log.info(
          { kind: desc.kind, mesh, name, revision: put.revision, toRevision, created: put.created },
          'resource reverted',
        );
        reply.header('etag', `"${put.revision}"`);
      }
      reply.code(put.created ? 201 : 200);
      return json(reply, put.revision, put.json);
    }
    const { remove } = result;
    if (!dryRun) {
      req.log.info(
        { kind: desc.kind, mesh, name, revision: remove.revision, toRevision },
        'resource reverted (deleted)',
      );
      reply.header('etag', `"${remove.revision}"`);
    }
    return json(reply, remove.revision, '{}');
  };

  /** Whether `identity` may read the resource of an entry (a Mesh is in itself, as for `/meshes/{name}`). */
  const visibility = (identity: Identity): ((e: LogEntry) => boolean) | undefined => {
    const grants = authorizer.grantsOf(identity);
    if (grants.some((g) => g.role === 'admin' && g.meshes === undefined)) return undefined;
    const seen = new Map<string, boolean>();
    return (e) => {
      const mesh = e.kind === 'Mesh' ? e.name : e.mesh;
      const key = `${e.kind}\u0000${mesh ?? ''}`;
      let ok = seen.get(key);
      if (ok === undefined) {
        ok = authorizer.allows(identity, {
          method: 'GET',
          path: '/_events',
          action: 'read',
          kind: e.kind,
          mesh,
          adminOnly: false,
        });
        seen.set(key, ok);
      }
      return ok;
    };
  };

  const now = deps.now ?? (() => new Date());

  /** What keeps a stream opened with a user token open: the token still verifying (loopback, certificates: nothing). */
  const credentialOf = (req: FastifyRequest): StreamCredential | undefined => {
    const { identity } = req;
    const token = bearerToken(req);
    if (identity.via !== 'token' || token === undefined) return undefined;
    const { expiresAt, tokenId } = identity;
    return {
      expiry: expiresAt && {
        inMs: expiresAt.getTime() - now().getTime(),
        title: 'Token expired',
        details: `the token ${tokenId ?? ''} expired at ${expiresAt.toISOString()}`,
      },
      affects: (e) => isTokenSecret('user', e.kind, e.name, e.mesh),
      recheck: () => deps.tokens.recheckUser(token),
    };
  };

  const events = async (req: FastifyRequest, reply: FastifyReply) => {
    const q = rawQuery(req);
    const stream = (req.headers.accept ?? '').includes('text/event-stream');
    const head = history.head();
    const causes: ErrorCause[] = [];
    let fromRevision: number | undefined;
    try {
      // fromRevision may be the next revision to come (head + 1): nothing yet, then live entries.
      fromRevision = parseRevision(q, head, 'fromRevision', { next: true });
    } catch (err) {
      causes.push(...(err as AppError).causes);
    }
    let lastEventId: number | undefined;
    const rawLast = header(req, 'last-event-id');
    if (stream && rawLast !== undefined && rawLast.trim() !== '') {
      const v = rawLast.trim();
      if (!/^\d+$/.test(v) || Number(v) > head) {
        causes.push({ field: 'Last-Event-ID', message: `must be a revision between 0 and ${head}` });
      } else lastEventId = Number(v);
    }
    const filter: EventFilter = {};
    for (const key of ['kind', 'mesh', 'name', 'actor', 'changeSet'] as const) {
      const v = q.get(key);
      if (v !== null && v !== '') filter[key] = v;
    }
    if (filter.kind !== undefined) {
      const desc = registry.find(filter.kind);
      if (!desc || desc.derived) {
        causes.push({
          field: 'kind',
          message: `must be a stored kind: ${registry.stored.map((d) => d.kind).join(', ')}`,
        });
      }
    }
    const page = parsePage(q, stream ? [] : causes);
    const secretData = secretDataOf(q, causes);
    if (causes.length > 0) throw invalid(causes);
    if (filter.kind !== undefined) {
      // Asking for a kind's entries takes the right to read that kind (secrets: admin).
      authorizer.check(req.identity, {
        method: 'GET',
        path: '/_events',
        action: 'read',
        kind: filter.kind,
        mesh: filter.kind === 'Mesh' ? (filter.name ?? filter.mesh) : filter.mesh,
        adminOnly: false,
      });
    }
    // Only where the answer may hold secrets: a kind filter of another kind holds none.
    if (
      secretData === 'include' &&
      (filter.kind === undefined || registry.find(filter.kind)?.secret === true)
    ) {
      assertMayIncludeSecretData(req, filter.kind === 'Mesh' ? (filter.name ?? filter.mesh) : filter.mesh);
    }
    const visible = visibility(req.identity);
    if (stream) {
      const from = lastEventId !== undefined ? lastEventId + 1 : (fromRevision ?? head + 1);
      hub.serve(req, reply, {
        from,
        match: (e) => matchesFilter(e, filter) && (!visible || visible(e)),
        secretData,
        credential: credentialOf(req),
      });
      return reply;
    }
    const result = await history.events({
      fromRevision: fromRevision ?? 1,
      filter,
      offset: page.offset,
      size: page.size,
      visible,
      visibilityKey: visible ? JSON.stringify(authorizer.grantsOf(req.identity)) : 'all',
      secretData,
    });
    const next = nextUrl(req, q, page.offset, page.size, result.total);
    return json(reply, head, pageBody(result.total, result.items, next));
  };

  // History is a read of the kind, revert a write of it (the auth hooks read that from the route).
  const paths = createKindPaths(registry);
  for (const [scope, prefix] of Object.entries(SCOPE_PREFIX) as Array<[PathScope, string]>) {
    const kindOf = (p: KindParams) => paths.stored(scope, p.seg);
    addKindRoute(app, 'GET', `${prefix}:seg/:name/_history`, kindOf, resourceHistory);
    addKindRoute(app, 'POST', `${prefix}:seg/:name/_revert`, kindOf, revert);
  }
  // `/meshes/default/_history` is routed as a list under that mesh (`/meshes/:mesh/:seg`): a mesh's
  // own history and revert need routes of their own.
  const meshKind = () => paths.stored('root', 'meshes');
  addKindRoute(app, 'GET', '/meshes/:name/_history', meshKind, resourceHistory);
  addKindRoute(app, 'POST', '/meshes/:name/_revert', meshKind, revert);
  // No HEAD twin: with `Accept: text/event-stream` the handler takes over the socket and streams.
  app.get('/_events', { exposeHeadRoute: false, config: { action: 'read' } satisfies RouteInfo }, events);
  app.head('/_events', { config: { action: 'read' } satisfies RouteInfo }, async (_req, reply) => {
    reply.header('allow', 'GET');
    throw new AppError('METHOD_NOT_ALLOWED', 'Method not allowed', 'HEAD /_events is not served: GET it');
  });
}
