import { randomUUID } from 'node:crypto';
import type { Server as HttpsServer } from 'node:https';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { xdsBootstrapSettings } from '../api/xds-routes.js';
import type { Commands } from '../app/commands.js';
import type { TokenService } from '../app/token-service.js';
import { inertKeysSet } from '../config/config-keys.js';
import type { Config } from '../config/schema.js';
import type { LevelLogOptions } from '../events/level-log.js';
import type { GatewayView } from '../policies/match-gateway.js';
import type { BuildReport, MatchView } from '../policies/match-view.js';
import type { ResourceViews } from '../projections/resource-views.js';
import type { StatusStore } from '../status/status-store.js';
import { apiLimits, buildApi } from './build-api.js';
import { buildServices } from './build-services.js';
import { defaultMeshSpec } from './default-mesh.js';
import { buildDiagnostics } from './diagnostics-server.js';
import { joinCluster, type JoinedCluster } from './join-cluster.js';
import { listenDiagnostics, listenHttp, listenHttps, startSync } from './listen-steps.js';
import { listenersOf, withEveryBusyPort } from './listeners.js';
import { loadState, type LoadedState } from './load-state.js';
import type { Multizone, MultizoneOptions } from './multizone.js';
import { openLog, type OpenedLog } from './open-log.js';
import type { ClusterTimers } from './pg-cluster.js';
import type { Running, StartContext } from './start-context.js';
import type { TlsMaterial } from './tls.js';
import { loadTlsMaterial } from './tls.js';
import type { StartupDefaults } from './write-defaults.js';
import { xdsListener } from './xds-listener.js';
import type { XdsServer } from './xds-server.js';

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

/** One warning per config key that is set but that mesh-cp does not act on. */
function warnInertKeys(config: Config, logger: Logger | undefined): void {
  for (const { key, env } of inertKeysSet(config)) {
    logger?.warn(
      { key, env },
      `config key ${key} (${env}) is set, but mesh-cp does not act on it (see mesh-cp config-keys)`,
    );
  }
}

/** Closes what a start opened, in this order: the listeners, the defaults, snapshots, the cluster, the log. */
async function shutdown(
  running: Running,
  defaults: StartupDefaults,
  state: LoadedState,
  joined: JoinedCluster,
  log: OpenedLog['log'],
): Promise<void> {
  defaults.startupOver();
  // A key still waiting for the log to come back is given up (written at the next start).
  defaults.giveUp();
  await running.xds?.close();
  await running.multizone?.close();
  await Promise.allSettled(running.listening.map((s) => s.close()));
  await defaults.ready;
  await state.snapshotter?.close();
  await joined.cluster?.close();
  await log.close();
}

/**
 * The composition root: builds the adapters for the config's mode and starts the listeners, as a
 * list of steps, each in its own file: open the log, load the views, join the cluster, build the
 * services (writing the defaults) and the API, then start each listener in turn (HTTP, HTTPS,
 * diagnostics, sync, xDS). It resolves (`ready`) once every listener is bound.
 */
export async function startControlPlane(config: Config, opts: StartOptions = {}): Promise<ControlPlane> {
  const started = Date.now();
  const ctx: StartContext = {
    config,
    now: opts.now ?? (() => new Date()),
    logger: opts.logger,
    instanceId: randomUUID(),
  };
  warnInertKeys(config, opts.logger);
  // A bad `defaults.mesh` stops start-up before the log opens.
  const defaultMesh = defaultMeshSpec(config);
  const listen = opts.listen !== false;
  // The HTTPS certificate is read or made while the log loads (a first start makes one).
  const tlsLoading =
    listen && config.apiServer.https.enabled ? (opts.tls ?? loadTlsMaterial(config)) : undefined;
  tlsLoading?.catch(() => undefined);
  const xds = xdsListener(ctx, listen);

  const opened = await openLog(ctx, opts.levelLog);
  const { log } = opened;
  const state = await loadState(ctx, opened);
  const joined = await joinCluster(ctx, opened, state.merged, opts.cluster);
  const running: Running = { listening: [] };
  const services = await buildServices(ctx, { log, state, defaultMesh, keygen: opts.keygen, running });
  const { defaults } = services;
  const bootstrap = xdsBootstrapSettings(config);
  const tls = await tlsLoading;
  const api = { services, status: state.status, clusterId: joined.clusterId, running, bootstrap, tls };
  const { app, httpsServer } = await buildApi(ctx, api);
  const diagnostics = buildDiagnostics({ limits: apiLimits(config), log, views: state.views });

  const close = (): Promise<void> => shutdown(running, defaults, state, joined, log);
  const ports = { api: 0, diagnostics: 0, https: 0, kds: 0, xds: 0 };
  if (listen) {
    try {
      ports.api = await listenHttp(app, config);
      running.listening.push(app);
      if (httpsServer) ports.https = await listenHttps(httpsServer, config);
      ports.diagnostics = await listenDiagnostics(diagnostics, config);
      running.listening.push(diagnostics);
      const sync = { log, state, services, joined, tls, options: opts.multizone };
      running.multizone = await startSync(ctx, sync);
      ports.kds = running.multizone?.kdsPort ?? 0;
      // Decisions §11: proxies connect to their zone (or a standalone plane); Global serves no xDS.
      running.xds = await xds.start({ state, services, bootstrap });
      ports.xds = running.xds?.port ?? 0;
    } catch (err) {
      await close();
      throw await withEveryBusyPort(err, listenersOf(config));
    }
  }

  defaults.startupOver();
  // A tail past the interval is due now. Checked once listening, so that a snapshot does not delay
  // `ready`, and a start that fails (a port in use, a full disk) writes none.
  state.snapshotter?.committed();
  return {
    app,
    log,
    views: state.views,
    matches: services.matches,
    commands: services.commands,
    tokens: services.tokens,
    httpsServer,
    tls: tls ? { source: tls.source, certFile: tls.certFile } : undefined,
    ports,
    get xds() {
      return running.xds;
    },
    status: state.status,
    get multizone() {
      return running.multizone;
    },
    defaultsReady: defaults.ready,
    startup: {
      replayed: state.loaded.replayed,
      ms: Date.now() - started,
      snapshot: state.loaded.snapshot,
      snapshotResources: state.loaded.snapshotResources,
      matchView: services.matchView,
    },
    close,
  };
}
