import { randomUUID } from 'node:crypto';
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import type { Logger } from 'pino';
import type { ServerDeps } from '../api/server.js';
import { buildServer } from '../api/server.js';
import type { Commands } from '../app/commands.js';
import { createCommands } from '../app/commands.js';
import { createQueries } from '../app/queries.js';
import type { TokenService } from '../app/token-service.js';
import { createTokenService } from '../app/token-service.js';
import { MESH_CP_VERSION } from '../app/versions.js';
import type { Config } from '../config/schema.js';
import { maskConfig } from '../config/mask.js';
import { createBus } from '../events/bus.js';
import { createLevelLog } from '../events/level-log.js';
import { createMemoryLog } from '../events/memory-log.js';
import type { EventLog, LogEntry } from '../events/types.js';
import { createDerivedViews } from '../projections/derived-views.js';
import { createMeshSummaries } from '../projections/mesh-summaries.js';
import type { ResourceViews } from '../projections/resource-views.js';
import { createResourceViews } from '../projections/resource-views.js';
import { registry } from '../resources/registry.js';
import { createStatusStore } from '../status/status-store.js';
import { AppError } from '../util/errors.js';
import type { TlsMaterial } from './tls.js';
import { loadTlsMaterial } from './tls.js';

/** A running control plane: its API server, bound ports and a clean shutdown. */
export interface ControlPlane {
  app: FastifyInstance;
  log: EventLog;
  views: ResourceViews;
  commands: Commands;
  /** Issues and verifies tokens (issue 4). */
  tokens: TokenService;
  /** The HTTPS instance of the API, when it listens (issue 4). */
  httpsApp?: FastifyInstance;
  /** Where the HTTPS certificate came from (`files`, `kept`, `generated`, `memory`), when HTTPS listens. */
  tls?: Pick<TlsMaterial, 'source' | 'certFile'>;
  /** Bound ports; `https` is 0 when HTTPS is off. */
  ports: { api: number; diagnostics: number; https: number };
  /** Resolves once the signing keys made at first start are written (they are made after ready). */
  defaultsReady: Promise<void>;
  /** Entries replayed at start and how long start-up took. */
  startup: { replayed: number; ms: number };
  close(): Promise<void>;
}

/** Options for tests and tools: a clock, a logger, and whether to listen. */
export interface StartOptions {
  logger?: Logger;
  now?: () => Date;
  listen?: boolean;
  keygen?: () => Promise<string>;
}

const CLUSTER_ID = 'clusterId';
const REPLAY_CHUNK = 1000;

/** Opens the log for the configured store (the level adapter explains a locked or bad data dir). */
async function openLog(config: Config, now: () => Date): Promise<EventLog> {
  const log =
    config.store.type === 'memory'
      ? createMemoryLog({ now })
      : createLevelLog({ path: config.store.level.path, now });
  await log.open();
  return log;
}

/** Replays the whole log into the views, in chunks. */
async function replay(log: EventLog, views: ResourceViews): Promise<number> {
  let chunk: LogEntry[] = [];
  let n = 0;
  for await (const e of log.read(1)) {
    chunk.push(e);
    if (chunk.length >= REPLAY_CHUNK) {
      views.apply(chunk);
      n += chunk.length;
      chunk = [];
    }
  }
  views.apply(chunk);
  return n + chunk.length;
}

/** The composition root: builds the adapters for the config's mode and starts the listeners. */
export async function startControlPlane(config: Config, opts: StartOptions = {}): Promise<ControlPlane> {
  const started = Date.now();
  const now = opts.now ?? (() => new Date());
  const log = await openLog(config, now);
  const views = createResourceViews(registry);
  const status = createStatusStore();
  const summaries = createMeshSummaries({ registry, views, status });
  const replayed = await replay(log, views);

  const bus = createBus();
  log.onCommit((entries) => bus.emit('committed', entries));
  bus.on('committed', (entries) => views.apply(entries));

  let clusterId = await log.getMeta(CLUSTER_ID);
  if (!clusterId) {
    clusterId = randomUUID();
    await log.putMeta(CLUSTER_ID, clusterId);
  }

  const commands = createCommands({
    registry,
    log,
    views,
    now,
    options: { skipDefaultPolicies: config.defaults.skipDefaultPolicies },
    keygen: opts.keygen,
  });
  let defaultsReady = Promise.resolve();
  if (config.mode !== 'zone') {
    const { keys } = await commands.ensureDefaults({
      createDefaultMesh: !config.defaults.skipMeshCreation,
      globalKeys: true,
    });
    defaultsReady = keys.then(
      () => opts.logger?.debug('signing keys ready'),
      (err: unknown) => opts.logger?.error({ err }, 'creating the signing keys failed'),
    );
  }
  const derived = createDerivedViews({ registry, views, status, summaries, now });
  const queries = createQueries({ views, derived, status });
  const tokens = createTokenService({ views, now, keysReady: defaultsReady });
  const serverDeps: ServerDeps = {
    registry,
    queries,
    commands,
    writeSettings: {
      mode: config.mode,
      environment: config.environment,
      readOnly: config.apiServer.readOnly,
    },
    info: {
      hostname: hostname(),
      tagline: 'mesh-cp',
      version: MESH_CP_VERSION,
      instanceId: randomUUID(),
      clusterId,
      mode: config.mode,
    },
    maskedConfig: () => maskConfig(config),
    zoneStatuses: () => [],
    corsAllowedDomains: config.apiServer.corsAllowedDomains,
    bodyLimit: config.apiServer.bodyLimit,
    logger: opts.logger,
    tokens,
    auth: {
      localhostIsAdmin: config.apiServer.authn.localhostIsAdmin,
      authz: {
        groups: config.apiServer.authz.groups,
        anonymous: config.apiServer.authz.anonymous,
        anonymousWrite: config.apiServer.authn.anonymousWrite,
      },
    },
    limits: {
      maxHeaderSize: config.apiServer.maxHeaderSize,
      headersTimeout: config.apiServer.timeouts.headers,
      requestTimeout: config.apiServer.timeouts.request,
      idleTimeout: config.apiServer.timeouts.idle,
    },
  };
  const app = await buildServer(serverDeps);
  const listen = opts.listen !== false;
  // HTTPS serves the same API from a second instance (issue 4); only built when it will listen.
  const tls = listen && config.apiServer.https.enabled ? await loadTlsMaterial(config) : undefined;
  const httpsApp = tls ? await buildServer({ ...serverDeps, https: tls }) : undefined;

  const diagnostics = Fastify({ logger: false });
  diagnostics.get('/healthy', async () => ({ status: 'ok' }));
  diagnostics.get('/ready', async () => ({ status: 'ready', revision: views.revision() }));

  const ports = { api: 0, diagnostics: 0, https: 0 };
  const listening: FastifyInstance[] = [];
  const closeAll = async (): Promise<void> => {
    await Promise.allSettled(listening.map((s) => s.close()));
    await defaultsReady;
    await log.close();
  };
  if (listen) {
    try {
      await app.listen({ port: config.apiServer.port, host: '0.0.0.0' });
      listening.push(app);
      ports.api = (app.server.address() as { port: number }).port;
      if (httpsApp) {
        await httpsApp.listen({ port: config.apiServer.https.port, host: '0.0.0.0' });
        listening.push(httpsApp);
        ports.https = (httpsApp.server.address() as { port: number }).port;
      }
      await diagnostics.listen({ port: config.diagnostics.port, host: '0.0.0.0' });
      listening.push(diagnostics);
      ports.diagnostics = (diagnostics.server.address() as { port: number }).port;
    } catch (err) {
      await closeAll();
      const e = err as NodeJS.ErrnoException & { port?: number };
      if (e.code === 'EADDRINUSE') {
        throw new AppError('UNAVAILABLE', 'cannot listen', `port already in use: ${e.message}`);
      }
      throw err;
    }
  }

  return {
    app,
    log,
    views,
    commands,
    tokens,
    httpsApp,
    tls: tls ? { source: tls.source, certFile: tls.certFile } : undefined,
    ports,
    defaultsReady,
    startup: { replayed, ms: Date.now() - started },
    close: closeAll,
  };
}
