import type { Server as HttpsServer } from 'node:https';
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import type { ServerDeps } from '../api/server.js';
import { buildServer, httpsServerOf } from '../api/server.js';
import type { XdsBootstrapSettings } from '../api/xds-routes.js';
import { MESH_CP_VERSION } from '../app/versions.js';
import { localZoneOf } from '../config/local-zone.js';
import { maskConfig } from '../config/mask.js';
import type { Config } from '../config/schema.js';
import { registry } from '../resources/registry.js';
import { connected, type StatusStore } from '../status/status-store.js';
import { parseDuration } from '../util/duration.js';
import { createPolicyNotes } from '../xds/dump.js';
import type { Services } from './build-services.js';
import { exposeGlobalLink, withGlobalLink } from './global-link.js';
import type { Multizone } from './multizone.js';
import { createPastInspect } from './past-inspect.js';
import { configTimelineOf, proxyDump } from './proxy-dump.js';
import { loadImpact } from './served-resources.js';
import type { StartContext, Running } from './start-context.js';
import type { TlsMaterial } from './tls.js';
import { xdsSources } from './xds-sources.js';

/** The API server of a plane, built without listening. */
export interface BuiltApi {
  app: FastifyInstance;
  /** The HTTPS listener of the API (same routes as `app`), when HTTPS is on. */
  httpsServer?: HttpsServer;
}

/** What the API is built from besides the start's context. */
export interface ApiParts {
  services: Services;
  status: StatusStore;
  clusterId: string;
  running: Running;
  /** The bootstrap file the API serves (the xDS listener sets its bound port). */
  bootstrap?: XdsBootstrapSettings;
  /** The HTTPS material, when HTTPS will listen. */
  tls?: TlsMaterial;
}

/** The API server's dependencies: the config's settings and the services it answers from. */
function apiServerDeps(ctx: StartContext, parts: ApiParts): ServerDeps {
  const { config } = ctx;
  const { services, running } = parts;
  const { dumpDeps } = services;
  const multizone = (): Multizone | undefined => running.multizone;
  return {
    registry,
    queries: services.queries,
    commands: services.commands,
    writeSettings: {
      mode: config.mode,
      environment: config.environment,
      readOnly: config.apiServer.readOnly,
    },
    info: {
      hostname: hostname(),
      tagline: 'mesh-cp',
      version: MESH_CP_VERSION,
      instanceId: ctx.instanceId,
      clusterId: parts.clusterId,
      mode: config.mode,
    },
    maskedConfig: () => withGlobalLink(maskConfig(config), multizone()),
    zoneStatuses: () => multizone()?.zoneStatuses() ?? [],
    corsAllowedDomains: config.apiServer.corsAllowedDomains,
    allowedHosts: config.apiServer.allowedHosts,
    externalUrl: config.apiServer.externalUrl,
    bodyLimit: config.apiServer.bodyLimit,
    logger: ctx.logger,
    tokens: services.tokens,
    auth: {
      localhostIsAdmin: config.apiServer.authn.localhostIsAdmin,
      authz: {
        groups: config.apiServer.authz.groups,
        anonymous: config.apiServer.authz.anonymous,
        anonymousWrite: config.apiServer.authn.anonymousWrite,
      },
    },
    history: services.history,
    inspect: services.inspect,
    proxyDump: proxyDump(dumpDeps),
    xdsNotes:
      config.mode === 'global'
        ? undefined
        : createPolicyNotes(xdsSources(dumpDeps.views, services.matches, localZoneOf(config))),
    configTimeline: configTimelineOf(dumpDeps, services.configTimeline),
    impact: loadImpact({ views: dumpDeps.views, matches: services.matches, localZone: localZoneOf(config) }),
    pastInspect: createPastInspect({
      pointInTime: services.pointInTime,
      localZone: localZoneOf(config),
      dumps: config.mode !== 'global',
    }),
    now: ctx.now,
    xdsBootstrap: parts.bootstrap,
    gui: { enabled: config.apiServer.gui.enabled },
    statusFeed: {
      onChange: (listener) => parts.status.onChange(listener),
      dataplaneOnline: (mesh, name) => connected(parts.status.dataplaneInsight(mesh, name)),
    },
    watch: {
      heartbeatMs: parseDuration(config.apiServer.watch.heartbeatInterval),
      bufferLimit: config.apiServer.watch.bufferLimit,
    },
    limits: apiLimits(config),
  };
}

/** The API's header, request and idle deadlines (the diagnostics port keeps them too). */
export function apiLimits(config: Config): ServerDeps['limits'] {
  return {
    maxHeaderSize: config.apiServer.maxHeaderSize,
    headersTimeout: config.apiServer.timeouts.headers,
    requestTimeout: config.apiServer.timeouts.request,
    idleTimeout: config.apiServer.timeouts.idle,
  };
}

/**
 * The start-up step that builds the API server (not listening yet); HTTPS serves the same route
 * table from a second node server, made only when it will listen.
 */
export async function buildApi(ctx: StartContext, parts: ApiParts): Promise<BuiltApi> {
  const deps = apiServerDeps(ctx, parts);
  exposeGlobalLink(deps.info, () => parts.running.multizone);
  const app = await buildServer(parts.tls ? { ...deps, https: parts.tls } : deps);
  return { app, httpsServer: httpsServerOf(app) };
}
