import { randomUUID } from 'node:crypto';
import type { Socket } from 'node:net';
import cors from '@fastify/cors';
import type {
  FastifyBaseLogger,
  FastifyInstance,
  FastifyReply,
  FastifyRequest,
  FastifyServerOptions,
} from 'fastify';
import Fastify, { LogController } from 'fastify';
import { createServer as createHttpsServer, type Server as HttpsServer } from 'node:https';
import { createRequire } from 'node:module';
import type { Commands } from '../app/commands.js';
import type { History } from '../app/history.js';
import type { Queries } from '../app/queries.js';
import type { TokenService } from '../app/token-service.js';
import { COMPATIBILITY } from '../app/versions.js';
import type { WriteSettings } from '../app/write-policy.js';
import { writeRefusal } from '../app/write-policy.js';
import type { Registry } from '../resources/registry.js';
import { parseDuration } from '../util/duration.js';
import { AppError } from '../util/errors.js';
import type { AuthDeps } from './auth-hooks.js';
import { registerAuthHooks } from './auth-hooks.js';
import { createClientErrorHandler } from './client-errors.js';
import { collectAllowedMethods, methodNotAllowed } from './allowed-methods.js';
import { errorHandler } from './errors.js';
import { isEndpointMiss, noSuchEndpoint } from './kind-paths.js';
import type { RouteInfo } from './route-info.js';
import type { WatchOptions } from './watch.js';
import type { InspectQueries } from '../app/inspect.js';
import { registerHistoryRoutes } from './history-routes.js';
import type { TimelineItem } from '../app/config-timeline.js';
import { registerInspectRoutes, type PastInspect, type ProxyDumpFn } from './inspect-routes.js';
import { createRequestOrigin } from './request-origin.js';
import { registerResourceRoutes } from './resource-routes.js';
import { CHANGE_SET_PATH, MAX_SET_ITEMS, registerChangeSetRoutes } from './change-set-routes.js';
import { registerTokenRoutes } from './token-routes.js';
import { registerGuiRoutes, type GuiSettings } from './gui-routes.js';
import { registerIdentityRoute } from './identity-route.js';
import { registerStatusWatch } from './status-watch.js';
import type { XdsBootstrapSettings } from './xds-routes.js';
import { registerXdsRoutes } from './xds-routes.js';
import { parseJsonBody } from './json-body.js';
import type { LoadImpact } from './impact-query.js';
import { registerOpenApiRoute } from './openapi-route.js';
import { registerYamlAnswers } from './yaml-answers.js';
import { parseYamlBody } from './yaml-body.js';

/** What `GET /` says about this control plane (decisions §9). */
export interface ServerInfo {
  hostname: string;
  tagline: string;
  version: string;
  instanceId: string;
  clusterId: string;
  mode: string;
}

/** Everything the HTTP API needs; built by the runtime (or a test). */
export interface ServerDeps {
  registry: Registry;
  queries: Queries;
  commands: Commands;
  writeSettings: WriteSettings;
  info: ServerInfo;
  /** The effective config with secrets masked (`GET /config`). */
  maskedConfig: () => Record<string, unknown>;
  /** Zone statuses for `GET /status/zones` ([] when there are none). */
  zoneStatuses: () => Array<{ name: string; url: string; active: boolean }>;
  corsAllowedDomains: readonly string[];
  /** Host names that name this control plane besides the loopback ones (config `apiServer.allowedHosts`). */
  allowedHosts?: readonly string[];
  /** The URL clients reach the API at, for absolute links (config `apiServer.externalUrl`). */
  externalUrl?: string;
  bodyLimit: number;
  /** A pino logger; when absent the server logs nothing (tests). */
  logger?: FastifyBaseLogger;
  /** Token issue and verification. */
  tokens: TokenService;
  /** Who is admin by address, and the role model. */
  auth: Omit<AuthDeps, 'tokens' | 'origin'>;
  /** Header and time limits of the node server (hardening); durations as in config. */
  limits: ServerLimits;
  /** Serve HTTPS with these; absent: plain HTTP. */
  https?: HttpsOptions;
  /** History, audit, `?revision` reads and revert; absent: none of them is served. */
  history?: History;
  /** The inspect API; absent: not served. */
  inspect?: InspectQueries;
  /** The `/xds`, `/stats` and `/clusters` views of a proxy; absent: not served. */
  proxyDump?: ProxyDumpFn;
  /** Per dialled service, what a proxyless client could not apply; shown by `/policies`. */
  xdsNotes?: (mesh: string, name: string) => Record<string, string[]> | undefined;
  /** A proxy's config timeline (`…/dataplanes/{name}/xds/_history`); absent: not served. */
  configTimeline?: (mesh: string, name: string) => Promise<readonly TimelineItem[] | undefined>;
  /** Inspect as of a past revision (`?revision=R`, `?at=T` on the inspect routes). */
  pastInspect?: (revision: number) => Promise<PastInspect>;
  /** What a write does to proxies (`?impact=` on writes); absent: not served. */
  impact?: LoadImpact;
  /** Limits of the `/_events` watch streams. */
  watch?: WatchOptions;
  /** What data plane bootstraps name; absent on Global, which serves no xDS. */
  xdsBootstrap?: XdsBootstrapSettings;
  /** Proxies going online and offline (`GET /_status/events`); absent: not served. */
  statusFeed?: {
    onChange: (listener: (mesh: string, name?: string) => void) => void;
    dataplaneOnline: (mesh: string, name: string) => boolean;
  };
  /** The web GUI at `/gui` (config `apiServer.gui.enabled`); absent: not served. */
  gui?: GuiSettings;
  /** The clock tokens are verified with (default: the system clock); a token's stream ends at its expiry by it. */
  now?: () => Date;
}

/** Limits enforced before a request reaches a handler (config `apiServer.maxHeaderSize`, `apiServer.timeouts`). */
export interface ServerLimits {
  maxHeaderSize: number;
  /** All headers must arrive within this. */
  headersTimeout: string;
  /** The whole request (headers and body) must arrive within this. */
  requestTimeout: string;
  /** A connection with no traffic for this long is closed. */
  idleTimeout: string;
}

/** The TLS material of the HTTPS listener; `ca` set asks for client certificates verified against it. */
export interface HttpsOptions {
  key: string;
  cert: string;
  ca?: string[];
}

/** Whether a URL is the change-set route (its YAML body may hold several documents). */
const isChangeSetPath = (url: string): boolean => {
  const path = url.split('?', 1)[0];
  return path === CHANGE_SET_PATH || path === `${CHANGE_SET_PATH}/`;
};

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** The node server settings both listeners share (header size and the two request deadlines). */
function nodeOptionsOf(limits: ServerLimits) {
  const headersMs = parseDuration(limits.headersTimeout);
  const requestMs = parseDuration(limits.requestTimeout);
  return {
    maxHeaderSize: limits.maxHeaderSize,
    headersTimeout: headersMs,
    requestTimeout: requestMs,
    // node checks the two deadlines on this interval (default 30 s): check often enough to keep them.
    connectionsCheckingInterval: Math.max(
      25,
      Math.min(1000, Math.floor(Math.min(...[headersMs, requestMs].filter((ms) => ms > 0), 4000) / 4)),
    ),
  };
}

/** What both listeners are built from: node's settings, the idle timeout, the client-error answers. */
interface ListenerSettings {
  node: ReturnType<typeof nodeOptionsOf>;
  idleMs: number;
  onClientError: ReturnType<typeof createClientErrorHandler>;
}

function listenerSettingsOf(limits: ServerLimits): ListenerSettings {
  return {
    node: nodeOptionsOf(limits),
    idleMs: parseDuration(limits.idleTimeout),
    onClientError: createClientErrorHandler(limits),
  };
}

/**
 * The fastify options that hold a listener to the API's limits (header size, the header, request and
 * idle deadlines, JSON answers to connection errors): the API's and the diagnostics port's.
 */
export function limitedServerOptions(limits: ServerLimits) {
  return fastifyOptionsOf(listenerSettingsOf(limits));
}

function fastifyOptionsOf(listener: ListenerSettings) {
  return {
    http: listener.node,
    requestTimeout: listener.node.requestTimeout,
    connectionTimeout: listener.idleMs,
    clientErrorHandler: listener.onClientError,
  };
}

const fastifyRequire = createRequire(createRequire(import.meta.url).resolve('fastify'));

/**
 * Fastify's schema compilers, loaded on first use. Bodies are validated with zod in the registry, so
 * no route has a fastify schema and ajv (~100 ms of start-up) is never loaded; a route that gains a
 * schema still gets the default compilers.
 */
export const lazySchemaCompilers = {
  compilersFactory: {
    buildValidator: (...args: unknown[]) =>
      (fastifyRequire('@fastify/ajv-compiler') as () => (...a: unknown[]) => unknown)()(...args),
    buildSerializer: (...args: unknown[]) =>
      (fastifyRequire('@fastify/fast-json-stringify-compiler') as () => (...a: unknown[]) => unknown)()(
        ...args,
      ),
  },
} as unknown as FastifyServerOptions['schemaController'];

/**
 * Builds the API server without listening (style habit 6): tests call `app.inject()`. One route
 * table serves HTTP (`app.server`) and, when `deps.https` is set, HTTPS (`httpsServerOf(app)`):
 * route set-up dominates start-up, so the table is built once, and the resources are served by a
 * few parametric routes (resource-routes.ts).
 */
export async function buildServer(deps: ServerDeps): Promise<FastifyInstance> {
  // One set of node settings for both listeners (HTTPS gets them in attachHttps).
  const listener = listenerSettingsOf(deps.limits);
  // A path that exists with other methods is a 405 with `Allow`, not "no such endpoint".
  const handleError = (err: Error, req: FastifyRequest, reply: FastifyReply): void => {
    const refused = err instanceof AppError && err.code === 'METHOD_NOT_ALLOWED';
    const allowed =
      isEndpointMiss(err) || refused
        ? allowedMethods(req.url).filter((m) => m !== req.method && !(m === 'HEAD' && req.method === 'GET'))
        : [];
    if (allowed.length === 0) return errorHandler(err, req, reply);
    reply.header('allow', allowed.join(', '));
    errorHandler(refused ? err : methodNotAllowed(req.method, req.url, allowed), req, reply);
  };
  const app = Fastify({
    ...(deps.logger ? { loggerInstance: deps.logger } : { logger: false }),
    ...fastifyOptionsOf(listener),
    bodyLimit: deps.bodyLimit,
    schemaController: lazySchemaCompilers,
    // Writes are logged by their handlers with kind, name and revision; reads are not logged.
    logController: new LogController({ disableRequestLogging: true }),
    requestIdHeader: false,
    genReqId: (req) => {
      const incoming = req.headers['x-request-id'];
      return typeof incoming === 'string' && REQUEST_ID.test(incoming) ? incoming : randomUUID();
    },
    routerOptions: {
      ignoreTrailingSlash: true,
      // The request line counts toward maxHeaderSize, so no path parameter reaches this: a name is
      // judged by the name rule alone (decisions §2: up to 253 characters), whatever its length.
      maxParamLength: deps.limits.maxHeaderSize,
    },
    // Errors the router raises before any hook runs (bad percent-encoding, a parameter too long).
    frameworkErrors: (err, req, reply) => {
      reply.header('x-request-id', req.id);
      handleError(err, req, reply);
    },
    // HEAD answers every GET route with its headers (RFC 9110 9.3.2); the resource routes are a few
    // parametric ones, so the twins cost little at start-up.
    exposeHeadRoutes: true,
  }) as unknown as FastifyInstance;
  if (deps.https) attachHttps(app, deps.https, listener);
  const allowedMethods = collectAllowedMethods(app, deps.limits.maxHeaderSize);

  app.setErrorHandler(handleError);
  // Decisions §9: only JSON and YAML bodies; text/plain is 415 like any other type.
  app.removeContentTypeParser('text/plain');
  app.setNotFoundHandler((req, reply) => {
    // @fastify/cors hands a preflight whose Origin it refuses to the not-found handler: say why.
    const { origin: from, 'access-control-request-method': preflight } = req.headers;
    if (req.method === 'OPTIONS' && from !== undefined && preflight !== undefined) {
      errorHandler(corsRefusal(from), req, reply);
      return;
    }
    handleError(noSuchEndpoint(req.method, req.url), req, reply);
  });
  app.addHook('onRequest', (req, reply, done) => {
    reply.header('x-request-id', req.id);
    done();
  });
  registerYamlAnswers(app);

  // Our JSON parser says where a body is broken (fastify's only that it is).
  app.removeContentTypeParser('application/json');
  app.addContentTypeParser('application/json', { parseAs: 'string' }, (req, body, done) => {
    try {
      // A POST without a body (a revert) says application/json all the same (browser-writes.ts).
      done(null, body === '' && req.method === 'POST' ? undefined : parseJsonBody(body as string));
    } catch (err) {
      done(err as Error, undefined);
    }
  });
  // Decisions §3: application/yaml is accepted on PUT besides JSON (and text/yaml, its other name).
  app.addContentTypeParser(
    ['application/yaml', 'application/x-yaml', 'text/yaml', 'text/x-yaml'],
    { parseAs: 'string' },
    // Async: a large body is read in slices, the event loop served between them (yaml-body.ts).
    // A change set may be several documents, one item each.
    async (req: FastifyRequest, body: string | Buffer) =>
      parseYamlBody(body as string, deps.bodyLimit, isChangeSetPath(req.url) ? MAX_SET_ITEMS : 1),
  );

  // Decisions §7: no cross-origin caller unless listed; loopback is admin only for a Host that names us.
  const origin = createRequestOrigin(deps);
  app.decorateRequest('baseUrl', function (this: FastifyRequest) {
    return origin.baseUrl(this);
  });
  await app.register(cors, {
    origin: (o, cb) => cb(null, o !== undefined && origin.corsAllows(o)),
    methods: ['GET', 'PUT', 'POST', 'DELETE', 'OPTIONS'],
    exposedHeaders: ['etag', 'x-mesh-revision', 'x-request-id'],
  });
  // After CORS, so that 401 and 403 answers carry the CORS headers a browser needs to read them.
  registerAuthHooks(app, deps.registry, {
    ...deps.auth,
    tokens: deps.tokens,
    origin,
  });

  const send = (reply: FastifyReply, body: unknown) =>
    reply
      .type('application/json')
      .header('x-mesh-revision', String(deps.queries.revision()))
      .send(JSON.stringify(body));

  // Control-plane routes are reads of no kind: readers may call them (`/config` is masked).
  const read = { config: { action: 'read' } satisfies RouteInfo };
  app.get('/', read, async (_req, reply) => send(reply, deps.info));
  app.get('/config', read, async (_req, reply) => send(reply, deps.maskedConfig()));
  app.get('/versions', read, async (_req, reply) => send(reply, COMPATIBILITY));
  app.get('/policies', read, async (_req, reply) =>
    send(reply, {
      policies: deps.registry.catalogue.map((d) => ({
        name: d.kind,
        readOnly: writeRefusal(d, deps.writeSettings) !== undefined,
        path: d.path,
        displayName: d.catalogue?.displayName,
        singularDisplayName: d.catalogue?.singularDisplayName,
        pluralDisplayName: d.catalogue?.displayName,
        isExperimental: false,
      })),
    }),
  );
  app.get('/status/zones', read, async (_req, reply) => send(reply, deps.zoneStatuses()));
  registerOpenApiRoute(app, {
    registry: deps.registry,
    version: deps.info.version,
    revision: () => deps.queries.revision(),
  });
  registerResourceRoutes(app, deps);
  registerChangeSetRoutes(app, { ...deps, authz: deps.auth.authz });
  if (deps.history) {
    registerHistoryRoutes(app, {
      ...deps,
      history: deps.history,
      authz: deps.auth.authz,
      watch: deps.watch ?? { heartbeatMs: 15_000, bufferLimit: 4 * 1024 * 1024 },
    });
  }
  if (deps.inspect) {
    const { history, pastInspect } = deps;
    registerInspectRoutes(app, {
      ...deps,
      inspect: deps.inspect,
      past:
        history && pastInspect
          ? { revisionAt: (t) => history.revisionAt(t), inspectAt: pastInspect }
          : undefined,
    });
  }
  registerXdsRoutes(app, deps);
  registerTokenRoutes(app, deps.tokens);
  registerIdentityRoute(app, {
    registry: deps.registry,
    authz: deps.auth.authz,
    revision: () => deps.queries.revision(),
  });
  if (deps.statusFeed) {
    const watch = deps.watch ?? { heartbeatMs: 15_000, bufferLimit: 4 * 1024 * 1024 };
    registerStatusWatch(app, {
      onStatusChange: deps.statusFeed.onChange,
      dataplaneOnline: deps.statusFeed.dataplaneOnline,
      heartbeatMs: watch.heartbeatMs,
      bufferLimit: watch.bufferLimit,
    });
  }
  if (deps.gui) await registerGuiRoutes(app, deps.gui);
  return app;
}

/** The answer to a preflight from an origin that `apiServer.corsAllowedDomains` does not list. */
function corsRefusal(origin: string): AppError {
  return new AppError(
    'FORBIDDEN',
    'Forbidden',
    `origin ${JSON.stringify(origin)} may not call this API from a browser: list it in apiServer.corsAllowedDomains`,
  );
}

const HTTPS_SERVER = Symbol('httpsServer');

/**
 * The HTTPS server of `app`: a node server whose requests go through the same route table as
 * `app.server`, with the same limits and client-error answers. It listens when the caller says
 * (after `app.listen`), and `app.close()` closes it.
 */
export function httpsServerOf(app: FastifyInstance): HttpsServer | undefined {
  return (app as unknown as Record<symbol, HttpsServer | undefined>)[HTTPS_SERVER];
}

function attachHttps(app: FastifyInstance, https: HttpsOptions, listener: ListenerSettings): void {
  const server = createHttpsServer(
    {
      key: https.key,
      cert: https.cert,
      // Client certificates are optional: a verified one makes the caller admin (see identity.ts).
      ...(https.ca ? { ca: https.ca, requestCert: true, rejectUnauthorized: false } : {}),
      ...listener.node,
      // The handshake comes before any header: a client that never finishes it is cut off as one
      // whose headers are late (node's default waits 120 s).
      ...(listener.node.headersTimeout > 0 ? { handshakeTimeout: listener.node.headersTimeout } : {}),
    },
    (req, res) => app.routing(req, res),
  );
  // What fastify sets on its own server (lib/server.js), from the same options.
  server.keepAliveTimeout = app.initialConfig.keepAliveTimeout ?? 72_000;
  server.requestTimeout = listener.node.requestTimeout;
  server.setTimeout(listener.idleMs);
  server.on('clientError', (err: NodeJS.ErrnoException, socket: Socket) =>
    listener.onClientError.call(app, err, socket),
  );
  (app as unknown as Record<symbol, HttpsServer>)[HTTPS_SERVER] = server;
  app.addHook('onClose', (_app, done) => {
    if (!server.listening) return done();
    server.close(() => done());
    server.closeIdleConnections();
  });
}
