import { createCommands, type Commands } from '../app/commands.js';
import { createConfigTimeline } from '../app/config-timeline.js';
import { createHistory, type History } from '../app/history.js';
import { createInspectQueries, type InspectQueries } from '../app/inspect.js';
import { createQueries, type Queries } from '../app/queries.js';
import { createTokenService, type TokenService } from '../app/token-service.js';
import { localZoneOf } from '../config/local-zone.js';
import type { EventLog } from '../events/event-log.js';
import { gatewayMatcher } from '../policies/gateway-matcher.js';
import type { GatewayView } from '../policies/match-gateway.js';
import { createMatchView, type BuildReport, type MatchView } from '../policies/match-view.js';
import { createDerivedViews } from '../projections/derived-views.js';
import { createPointInTime, type PointInTime } from '../projections/point-in-time.js';
import { registry } from '../resources/registry.js';
import type { ValidatedSpec } from '../resources/validate.js';
import type { LoadedState } from './load-state.js';
import { configRenderer } from './past-inspect.js';
import type { ProxyDumpDeps, Timeline } from './proxy-dump.js';
import type { Running, StartContext } from './start-context.js';
import { writeDefaults, type StartupDefaults } from './write-defaults.js';

/** The services the API, sync and xDS are built on. */
export interface Services {
  /** The one write path. */
  commands: Commands;
  /** The defaults written at start (the signing keys once start-up is over). */
  defaults: StartupDefaults;
  queries: Queries;
  /** The policy engine: which policies apply to each proxy; what inspect lists and xDS renders. */
  matches: MatchView<GatewayView>;
  /** The policy engine's build at start: meshes, proxies, the longest slice of the event loop it held. */
  matchView: BuildReport;
  inspect: InspectQueries;
  pointInTime: PointInTime;
  history: History;
  /** A proxy's config timeline, from the log. */
  configTimeline: Timeline;
  tokens: TokenService;
  /** What a proxy's /xds, /stats and /clusters read (its stream once it is connected; on Global, its zone's). */
  dumpDeps: ProxyDumpDeps;
}

/**
 * The start-up step that builds the services over the loaded views: the write path (which writes
 * the defaults now), queries, the policy engine (every mesh with proxies built now, in slices that
 * yield the event loop, before any listener serves inspect or xDS from it; kept current by every
 * write after), history, the config timeline and the token service.
 */
export async function buildServices(
  ctx: StartContext,
  deps: {
    log: Pick<EventLog, 'append' | 'head' | 'catchUp' | 'read' | 'history'>;
    state: LoadedState;
    /** The validated `defaults.mesh`. */
    defaultMesh: ValidatedSpec;
    keygen?: () => Promise<string>;
    running: Running;
  },
): Promise<Services> {
  const { config, now, logger } = ctx;
  const { log, running } = deps;
  const { views, status, summaries, bus } = deps.state;
  const commands = createCommands({
    registry,
    log,
    views,
    now,
    options: { skipDefaultPolicies: config.defaults.skipDefaultPolicies },
    keygen: deps.keygen,
    zoneConnected: (name) => running.multizone?.isConnected(name) ?? false,
  });
  const defaults = await writeDefaults(config, commands, deps.defaultMesh, logger);
  const derived = createDerivedViews({ registry, views, status, summaries, now });
  const queries = createQueries({ views, derived, status });
  const matches = createMatchView(views, gatewayMatcher);
  const matchView = await matches.buildAll();
  logger?.debug(matchView, 'policy matches built');
  const inspect = createInspectQueries({ views, matches });
  const dumpDeps: ProxyDumpDeps = {
    config,
    views,
    matches,
    xds: () => running.xds,
    multizone: () => running.multizone,
  };
  const pointInTime = createPointInTime({
    registry,
    log: deps.state.replaySource,
    useSnapshots: !!deps.state.snapshots,
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
  const tokens = createTokenService({ views, now, keysReady: defaults.ready });
  return {
    commands,
    defaults,
    queries,
    matches,
    matchView,
    inspect,
    pointInTime,
    history,
    configTimeline,
    tokens,
    dumpDeps,
  };
}
