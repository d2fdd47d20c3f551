import { randomUUID } from 'node:crypto';
import type { Server as HttpsServer } from 'node:https';
import { hostname } from 'node:os';
import type { FastifyInstance } from 'fastify';
import Fastify from 'fastify';
import type { Logger } from 'pino';
import type { ServerDeps } from '../api/server.js';
import { buildServer, httpsServerOf, lazySchemaCompilers, limitedServerOptions } from '../api/server.js';
import { useBoundXdsPort, xdsBootstrapSettings } from '../api/xds-routes.js';
import type { Commands } from '../app/commands.js';
import { createCommands } from '../app/commands.js';
import { createHistory } from '../app/history.js';
import { createQueries } from '../app/queries.js';
import { createInspectQueries } from '../app/inspect.js';
import { gatewayMatcher } from '../policies/gateway-matcher.js';
import type { GatewayView } from '../policies/match-gateway.js';
import { createMatchView, type BuildReport, type MatchView } from '../policies/match-view.js';
import { createPolicyNotes } from '../xds/dump.js';
import { inertKeysSet } from '../config/config-keys.js';
import { xdsSources } from './xds-sources.js';
import { answerDumpRequest, configTimelineOf, localProxyDump, proxyDump } from './proxy-dump.js';
import { configRenderer, createPastInspect } from './past-inspect.js';
import { loadImpact } from './served-resources.js';
import { createConfigTimeline } from '../app/config-timeline.js';
import type { TokenService } from '../app/token-service.js';
import { createTokenService } from '../app/token-service.js';
import { MESH_CP_VERSION } from '../app/versions.js';
import type { Config } from '../config/schema.js';
import { maskConfig } from '../config/mask.js';
import { createBus } from '../events/bus.js';
import type { LevelLogOptions } from '../events/level-log.js';
import { createDerivedViews } from '../projections/derived-views.js';
import { createMeshSummaries } from '../projections/mesh-summaries.js';
import { createPointInTime } from '../projections/point-in-time.js';
import type { ResourceViews } from '../projections/resource-views.js';
import { createResourceViews } from '../projections/resource-views.js';
import {
  createSnapshotter,
  loadViews,
  trackSnapshotSource,
  type LogSource,
} from '../projections/snapshot.js';
import { registry } from '../resources/registry.js';
import { createMergedStatus } from '../status/merged-status.js';
import type { ClusterTimers } from './pg-cluster.js';
import { connected, createStatusStore } from '../status/status-store.js';
import { parseDuration } from '../util/duration.js';
import type { TlsMaterial } from './tls.js';
import { loadTlsMaterial } from './tls.js';
import type { StatusStore } from '../status/status-store.js';
import type { Multizone, MultizoneOptions } from './multizone.js';
import type { XdsServer } from './xds-server.js';
// The sync code (and gRPC) loads only in global and zone modes: standalone starts without it.
import { exposeGlobalLink, withGlobalLink } from './global-link.js';
import { localZoneOf } from '../config/local-zone.js';
import { defaultMeshSpec } from './default-mesh.js';
import { openLog, type OpenedLog } from './open-log.js';
import { bound, listenerKeys, listenersOf, withEveryBusyPort } from './listeners.js';

/** A running control plane: its API server, bound ports and a clean shutdown. */
export interface ControlPlane {
  app: FastifyInstance;
  log: OpenedLog['log'];
  views: ResourceViews;
  /** The policy engine: which policies apply to each proxy; what inspect lists and xDS renders. */
  matches: MatchView<GatewayView>;
  commands: Commands;
  /** Issues and verifies tokens. */
  tokens: TokenService;
  /** The HTTPS listener of the API (same routes as `app`), when it listens. */
  httpsServer?: HttpsServer;
  /** Where the HTTPS certificate came from (`files`, `kept`, `generated`, `memory`), when HTTPS listens. */
  tls?: Pick<TlsMaterial, 'source' | 'certFile'>;
  /**
   * Bound ports; `https` is 0 when HTTPS is off, `kds` (Global's sync port) 0 but on Global,
   * `xds` (the data plane server) 0 on Global.
   */
  ports: { api: number; diagnostics: number; https: number; kds: number; xds: number };
  /** The data plane (ADS) server of standalone and zone modes, when it listens. */
  xds?: XdsServer;
  /** Runtime status of proxies and zones. */
  status: StatusStore;
  /** Global's sync server or a zone's sync client; absent in standalone mode. */
  multizone?: Multizone;
  /** Resolves once the signing keys made at first start are written (they are made after ready). */
  defaultsReady: Promise<void>;
  /** Entries replayed at start, the snapshot they followed and how long start-up took. */
  startup: {
    replayed: number;
    ms: number;
    snapshot?: number;
    snapshotResources?: number;
    /** The policy engine's build at start: meshes, proxies, the longest slice of the event loop it held. */
    matchView: BuildReport;
  };
  close(): Promise<void>;
}

/** Options for tests and tools: a clock, a logger, and whether to listen. */
export interface StartOptions {
  logger?: Logger;
  now?: () => Date;
  listen?: boolean;
  keygen?: () => Promise<string>;
  /** Sync timers and back-off (tests). */
  multizone?: MultizoneOptions;
  /** The HTTPS material, when the caller started loading it early (`mesh-cp run` does, so that a
   * first start makes its certificate while the modules load); else it is loaded here. */
  tls?: Promise<TlsMaterial>;
  /** The LevelDB log's retry back-off and injected write fault (tests of a full disk). */
  levelLog?: Pick<LevelLogOptions, 'retry' | 'fault'>;
  /** Timing of the cluster work on a PostgreSQL log (tests shorten it). */
  cluster?: Partial<ClusterTimers>;
}

const CLUSTER_ID = 'clusterId';

/** Listens on `port` (0: any free one); rejects with the listen error (EADDRINUSE…). */
function listenOn(server: HttpsServer, port: number, host: string): Promise<void> {
  return new Promise((resolve, reject) => {
    server.once('error', reject);
    server.listen(port, host, () => {
      server.off('error', reject);
      resolve();
    });
  });
}

/** The composition root: builds the adapters for the config's mode and starts the listeners. */
export async function startControlPlane(config: Config, opts: StartOptions = {}): Promise<ControlPlane> {
  const started = Date.now();
  const now = opts.now ?? (() => new Date());
  for (const { key, env } of inertKeysSet(config)) {
    opts.logger?.warn(
      { key, env },
      `config key ${key} (${env}) is set, but mesh-cp does not act on it (see mesh-cp config-keys)`,
    );
  }
  // A bad `defaults.mesh` stops start-up before the log opens.
  const defaultMesh = defaultMeshSpec(config);
  const listen = opts.listen !== false;
  // The HTTPS certificate is read or made while the log loads (a first start makes one).
  const tlsLoading =
    listen && config.apiServer.https.enabled ? (opts.tls ?? loadTlsMaterial(config)) : undefined;
  tlsLoading?.catch(() => undefined);
  // The data plane server loads gRPC (~50 ms): start loading it while the log opens.
  const xdsLoading = listen && config.mode !== 'global' ? import('./xds-server.js') : undefined;
  xdsLoading?.catch(() => undefined);
  const opened = await openLog(config, { now, logger: opts.logger, levelLog: opts.levelLog });
  const { log } = opened;
  const views = createResourceViews(registry);
  const instanceId = randomUUID();
  // On a PostgreSQL log several instances serve one cluster: reads of runtime status merge theirs.
  const merged =
    config.store.type === 'postgres' ? createMergedStatus(createStatusStore(), instanceId) : undefined;
  const status = merged?.store ?? createStatusStore();
  const summaries = createMeshSummaries({ registry, views, status });
  // From the newest sound snapshot, then the tail; a damaged one is logged and skipped.
  const snapshots = config.store.snapshot.every > 0 ? opened.snapshots : undefined;
  const source = trackSnapshotSource(registry, views);
  // What the views load and point-in-time reads replay from: the log, and its snapshots when used.
  const replaySource: LogSource = {
    read: (from, to) => log.read(from, to),
    readRawChunks: (o) => log.readRawChunks(o),
    head: () => log.head(),
    snapshots,
  };
  const loaded = await loadViews({
    log: replaySource,
    views,
    source,
    useSnapshots: !!snapshots,
    every: config.store.snapshot.every,
    logger: opts.logger,
  });
  const replayed = loaded.replayed;

  const bus = createBus();
  log.onCommit((entries) => bus.emit('committed', entries));
  bus.on('committed', (entries) => views.apply(entries));
  // A log shared with other instances (PostgreSQL): what they appended during the load, then follow.
  await log.catchUp();
  const snapshotter = snapshots
    ? createSnapshotter({
        store: snapshots,
        source,
        every: config.store.snapshot.every,
        last: loaded.snapshot,
        resources: loaded.snapshotResources,
        logger: opts.logger,
      })
    : undefined;
  if (snapshotter) bus.on('committed', () => snapshotter.committed());

  const cluster = merged
    ? await (
        await import('./pg-cluster.js')
      ).joinPgCluster({
        connection: (await import('../events/pg-connection.js')).pgClientConfig(config.store.postgres),
        instanceId,
        status: merged,
        logger: opts.logger,
        now,
        timers: opts.cluster,
        onOthersRunning: (running) => opened.shared?.othersRunning(running),
      })
    : undefined;
  // Instances of one PostgreSQL log starting at once agree on the first one's id.
  const clusterId = (await log.getMeta(CLUSTER_ID)) ?? (await log.ensureMeta(CLUSTER_ID, randomUUID()));

  let multizone: Multizone | undefined;
  const commands = createCommands({
    registry,
    log,
    views,
    now,
    options: { skipDefaultPolicies: config.defaults.skipDefaultPolicies },
    keygen: opts.keygen,
    zoneConnected: (name) => multizone?.isConnected(name) ?? false,
  });
  let defaultsReady = Promise.resolve();
  // The signing keys are generated once start-up is over (or the plane closes before that).
  let startupOver!: () => void;
  const after = new Promise<void>((resolve) => (startupOver = resolve));
  const stopKeys = new AbortController();
  if (config.mode !== 'zone') {
    const { keys } = await commands.ensureDefaults({
      createDefaultMesh: !config.defaults.skipMeshCreation,
      defaultMeshSpec: defaultMesh,
      globalKeys: true,
      after,
      stop: stopKeys.signal,
    });
    defaultsReady = keys.then(
      () => opts.logger?.debug('signing keys ready'),
      (err: unknown) => opts.logger?.error({ err }, 'creating the signing keys failed'),
    );
  }
  const derived = createDerivedViews({ registry, views, status, summaries, now });
  const queries = createQueries({ views, derived, status });
  // The policy engine: every mesh with proxies built now (in slices that yield the event loop),
  // before any listener serves inspect or xDS from it; kept current by every write after.
  const matches = createMatchView(views, gatewayMatcher);
  const matchView = await matches.buildAll();
  opts.logger?.debug(matchView, 'policy matches built');
  const inspect = createInspectQueries({ views, matches });
  // A proxy's /xds, /stats and /clusters (its stream once it is connected; on Global, its zone's).
  const dumpDeps = { config, views, matches, xds: () => xds, multizone: () => multizone };
  const dumpSources = xdsSources(views, matches, localZoneOf(config));
  const pointInTime = createPointInTime({
    registry,
    log: replaySource,
    useSnapshots: !!snapshots,
  });
  const history = createHistory({
    registry,
    log,
    queries,
    commands,
    pointInTime,
    subscribe: (listener) => {
      bus.on('committed', listener);
      return () => bus.off('committed', listener);
    },
  });
  // A proxy's config timeline, from the log (Global serves no xDS: the route says so).
  const { timeline: configTimeline } = createConfigTimeline({
    registry,
    read: (from, to) => log.read(from, to),
    head: () => log.head(),
    renderer: () => configRenderer(localZoneOf(config)),
  });
  const tokens = createTokenService({ views, now, keysReady: defaultsReady });
  const xdsBootstrap = xdsBootstrapSettings(config);
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
      instanceId,
      clusterId,
      mode: config.mode,
    },
    maskedConfig: () => withGlobalLink(maskConfig(config), multizone),
    zoneStatuses: () => multizone?.zoneStatuses() ?? [],
    corsAllowedDomains: config.apiServer.corsAllowedDomains,
    allowedHosts: config.apiServer.allowedHosts,
    externalUrl: config.apiServer.externalUrl,
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
    history,
    inspect,
    proxyDump: proxyDump(dumpDeps),
    xdsNotes: config.mode === 'global' ? undefined : createPolicyNotes(dumpSources),
    configTimeline: configTimelineOf(dumpDeps, configTimeline),
    impact: loadImpact({ views, matches, localZone: localZoneOf(config) }),
    pastInspect: createPastInspect({
      pointInTime,
      localZone: localZoneOf(config),
      dumps: config.mode !== 'global',
    }),
    now,
    xdsBootstrap,
    gui: { enabled: config.apiServer.gui.enabled },
    statusFeed: {
      onChange: (listener) => status.onChange(listener),
      dataplaneOnline: (mesh, name) => connected(status.dataplaneInsight(mesh, name)),
    },
    watch: {
      heartbeatMs: parseDuration(config.apiServer.watch.heartbeatInterval),
      bufferLimit: config.apiServer.watch.bufferLimit,
    },
    limits: {
      maxHeaderSize: config.apiServer.maxHeaderSize,
      headersTimeout: config.apiServer.timeouts.headers,
      requestTimeout: config.apiServer.timeouts.request,
      idleTimeout: config.apiServer.timeouts.idle,
    },
  };
  exposeGlobalLink(serverDeps.info, () => multizone);
  // HTTPS serves the same route table from a second node server; only when it will listen.
  const tls = await tlsLoading;
  const app = await buildServer(tls ? { ...serverDeps, https: tls } : serverDeps);
  const httpsServer = httpsServerOf(app);

  // The API's header, request and idle deadlines hold on the diagnostics port too.
  const diagnostics = Fastify({
    logger: false,
    schemaController: lazySchemaCompilers,
    ...limitedServerOptions(serverDeps.limits),
  });
  // Liveness only: a log that cannot write retries by itself, and a restart would not free the disk.
  diagnostics.get('/healthy', async () => ({ status: 'ok' }));
  diagnostics.get('/ready', async (_request, reply) => {
    const reason = log.writeFailure();
    if (reason === undefined) return { status: 'ready', revision: views.revision() };
    return reply.code(503).send({ status: 'unavailable', reason, revision: views.revision() });
  });

  const ports = { api: 0, diagnostics: 0, https: 0, kds: 0, xds: 0 };
  const listening: FastifyInstance[] = [];
  let xds: XdsServer | undefined;
  const closeAll = async (): Promise<void> => {
    startupOver();
    // A key still waiting for the log to come back is given up (written at the next start).
    stopKeys.abort();
    await xds?.close();
    await multizone?.close();
    await Promise.allSettled(listening.map((s) => s.close()));
    await defaultsReady;
    await snapshotter?.close();
    await cluster?.close();
    await log.close();
  };
  if (listen) {
    try {
      await bound(listenerKeys(config, 'apiServer', 'port'), () =>
        app.listen({ port: config.apiServer.port, host: config.apiServer.bindAddress }),
      );
      listening.push(app);
      ports.api = (app.server.address() as { port: number }).port;
      if (httpsServer) {
        await bound(listenerKeys(config, 'apiServer.https', 'port'), () =>
          listenOn(httpsServer, config.apiServer.https.port, config.apiServer.https.bindAddress),
        );
        ports.https = (httpsServer.address() as { port: number }).port;
      }
      await bound(listenerKeys(config, 'diagnostics', 'port'), () =>
        diagnostics.listen({ port: config.diagnostics.port, host: config.diagnostics.bindAddress }),
      );
      listening.push(diagnostics);
      ports.diagnostics = (diagnostics.server.address() as { port: number }).port;
      const { startMultizone } =
        config.mode === 'standalone'
          ? { startMultizone: async () => undefined }
          : await import('./multizone.js');
      multizone = await bound(listenerKeys(config, 'multizone.global.kds', 'grpcPort'), () =>
        startMultizone(config, {
          log,
          views,
          commands,
          status,
          tokens,
          info: { instanceId: serverDeps.info.instanceId, clusterId },
          elsewhere: merged ? (zone) => merged.zoneOpenElsewhere(zone) : undefined,
          leadership: cluster,
          maskedConfig: () => maskConfig(config),
          https: tls,
          logger: opts.logger,
          now,
          options: opts.multizone,
          answerDump: answerDumpRequest(localProxyDump(dumpDeps), configTimeline),
        }),
      );
      ports.kds = multizone?.kdsPort ?? 0;
      // Decisions §11: proxies connect to their zone (or a standalone plane); Global serves no xDS.
      if (xdsLoading) {
        const { startXdsServer } = await xdsLoading;
        xds = await bound(listenerKeys(config, 'xdsServer', 'grpcPort'), () =>
          startXdsServer({
            config,
            views,
            matches,
            status,
            tokens,
            instanceId: serverDeps.info.instanceId,
            logger: opts.logger,
            now,
          }),
        );
        ports.xds = xds.port;
        if (xdsBootstrap) useBoundXdsPort(xdsBootstrap, config, xds.port);
      }
    } catch (err) {
      await closeAll();
      throw await withEveryBusyPort(err, listenersOf(config));
    }
  }

  startupOver();
  // A tail past the interval is due now. Checked once listening, so that a snapshot does not delay
  // `ready`, and a start that fails (a port in use, a full disk) writes none.
  snapshotter?.committed();
  return {
    app,
    log,
    views,
    matches,
    commands,
    tokens,
    httpsServer,
    tls: tls ? { source: tls.source, certFile: tls.certFile } : undefined,
    ports,
    get xds() {
      return xds;
    },
    status,
    get multizone() {
      return multizone;
    },
    defaultsReady,
    startup: {
      replayed,
      ms: Date.now() - started,
      snapshot: loaded.snapshot,
      snapshotResources: loaded.snapshotResources,
      matchView,
    },
    close: closeAll,
  };
}
