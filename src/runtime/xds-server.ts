/**
 * The data plane server of standalone and zone control planes (decisions §11): ADS on
 * `xdsServer.grpcPort`, streams named and checked by the mesh config source, and their counters
 * turned into DataplaneInsight subscriptions by the stream bookkeeping of src/xds/proxy-streams.ts
 * (online while a stream is open; on a zone, Global sees them through the sync of insights). Loaded
 * only when it starts: gRPC and the protos stay out of start-up otherwise.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { TokenService } from '../app/token-service.js';
import type { MatchView } from '../policies/match-view.js';
import type { ResourceViews } from '../projections/resource-views.js';
import type { StatusStore } from '../status/status-store.js';
import { clipDetails } from '../xds/ads-limits.js';
import { AdsServer } from '../xds/ads-server.js';
import type { AdsStream } from '../xds/ads-stream.js';
import { warmEnvoyProtos } from '../xds/envoy-protos.js';
import { createMeshConfigSource } from '../xds/mesh-config-source.js';
import { dataplaneLookup } from '../xds/node-identity.js';
import { createProxyInsights } from '../xds/proxy-insights.js';
import { createProxyStreams } from '../xds/proxy-streams.js';
import { authnWarning, createProxyTokenCheck } from '../xds/proxy-token.js';
import { createRefusalLog, peerHost } from '../util/refusal-log.js';
import { onMeshChange, xdsSources } from './xds-sources.js';
import { localZoneOf } from '../config/local-zone.js';
import { parseDuration } from '../util/duration.js';
import { isTokenSecret } from '../tokens/token-types.js';

/** Refused streams log one line per caller address per this interval (then a count of the rest). */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

/** A started xDS server. */
export interface XdsServer {
  port: number;
  ads: AdsServer;
  /** The newest open stream of a Dataplane (several may be open for one proxy). */
  streamOf(mesh: string, name: string): AdsStream | undefined;
  /**
   * Parses the Envoy protos in a later turn, off the path of the first proxy (the CLI calls it once
   * `mesh-cp ready` is written: `ready` still means the listeners are bound, no later).
   */
  warm(): void;
  close(): Promise<void>;
}

/** What the data plane server is built from. */
export interface XdsServerDeps {
  config: Config;
  views: ResourceViews;
  /** The policy engine: each proxy is served its entry there. */
  matches: MatchView<unknown>;
  status: StatusStore;
  tokens: TokenService;
  instanceId: string;
  logger?: Logger;
  now: () => Date;
}

/** Starts ADS on `xdsServer.grpcPort` (0: any free port). */
export async function startXdsServer(deps: XdsServerDeps): Promise<XdsServer> {
  const { config, views, logger } = deps;
  const authnType = config.dpServer.authn.type;
  const warning = authnWarning(authnType);
  if (warning) logger?.warn({ key: 'dpServer.authn.type' }, warning);
  const lookup = dataplaneLookup(views);
  const source = createMeshConfigSource({
    lookup,
    checkToken: createProxyTokenCheck({ tokens: deps.tokens, authnType }),
    sources: xdsSources(views, deps.matches, localZoneOf(config)),
    matches: deps.matches,
    onMeshChange: onMeshChange(views),
    tokenSecret: (mesh, name) => isTokenSecret('dataplane', 'Secret', name, mesh),
    now: deps.now,
  });
  const ads = new AdsServer(source, { now: deps.now });
  const insights = createProxyInsights({
    status: deps.status,
    now: deps.now,
    publishMs: parseDuration(config.xdsServer.dataplaneStatusFlushInterval),
  });
  const streams = createProxyStreams({ insights, lookup, instanceId: deps.instanceId });
  ads.on('connect', (info) => {
    const who = streams.connected(info);
    if (!who) return;
    logger?.info(
      { mesh: who.mesh, dataplane: who.name, stream: info.id, peer: info.peer },
      'proxy connected',
    );
  });
  ads.on('update', (info) => streams.updated(info));
  ads.on('disconnect', (info, status) => {
    streams.disconnected(info);
    logger?.info(
      { stream: info.id, code: status.code, details: clipDetails(status.details) },
      'proxy disconnected',
    );
  });
  // A refusal costs the caller nothing: its log lines are bounded in size and rate.
  const refusals = createRefusalLog({ intervalMs: REFUSAL_LOG_INTERVAL_MS, now: deps.now });
  ads.on('refuse', (node, status, _err, peer) => {
    const verdict = refusals.refused(peer);
    if (!verdict.log) return;
    const fields = {
      peer: peerHost(peer),
      node: node === undefined ? undefined : clipDetails(node.id, 200),
      code: status.code,
      details: status.details,
      ...(verdict.suppressed > 0 ? { suppressed: verdict.suppressed } : {}),
    };
    logger?.warn(fields, 'proxy refused');
  });
  const sweep = setInterval(() => {
    for (const { peer, suppressed } of refusals.sweep()) {
      logger?.warn(
        { peer, suppressed },
        `proxy refusals not logged (one line per address per ${REFUSAL_LOG_INTERVAL_MS / 1000} s)`,
      );
    }
  }, REFUSAL_LOG_INTERVAL_MS);
  sweep.unref();
  ads.on('streamError', (info, err) => logger?.error({ stream: info.id, err }, 'xDS stream failed'));
  const port = await ads.start({ port: config.xdsServer.grpcPort, host: config.xdsServer.bindAddress });
  let warming: NodeJS.Timeout | undefined;
  return {
    port,
    ads,
    warm() {
      warming ??= setTimeout(warmEnvoyProtos, 0);
      warming.unref();
    },
    streamOf(mesh, name) {
      for (const id of streams.openIds(mesh, name)) {
        const stream = ads.stream(id);
        if (stream) return stream;
      }
      return undefined;
    },
    async close() {
      clearInterval(sweep);
      clearTimeout(warming);
      await ads.close();
      streams.close();
      insights.close();
    },
  };
}
