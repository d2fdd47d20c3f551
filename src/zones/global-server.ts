import * as grpc from '@grpc/grpc-js';
import type { Actor } from '../events/types.js';
import { NO_MULTI_LINE_KEYS, controlCharacterCauses } from '../resources/control-characters.js';
import { meshNameKey, splitMeshNameKey, zonedName } from '../resources/keys.js';
import { validSpec } from '../resources/validate.js';
import type { Insight } from '../status/status-store.js';
import { AppError } from '../util/errors.js';
import { printable } from '../util/printable.js';
import type { GlobalSessionServer } from './global-session.js';
import { GlobalSession } from './global-session.js';
import type { GlobalStreamServer } from './global-stream.js';
import { GlobalStream } from './global-stream.js';
import { statusName, toStreamEnd } from './grpc-errors.js';
import { createIngressServices } from './ingress-services.js';
import { createRefusalLog } from '../util/refusal-log.js';
import type { StreamEnd } from './peer-stream.js';
import { DEFAULT_TIMERS } from './peer-stream.js';
import type { DumpReply } from './dump-requests.js';
import { createDumpRequests } from './dump-requests.js';
import type { DumpRequest, Hello, StatusUpdate, SyncStream } from './sync-protocol.js';
import { CHANNEL_OPTIONS, syncServerService } from './sync-protocol.js';
import { createZoneInsights } from './zone-insights.js';
import type { GlobalSyncDeps } from './global-sync-deps.js';

export type { GlobalSyncDeps } from './global-sync-deps.js';

/** One entry of `GET /status/zones` (spec 2.17, decisions §6). */
export interface ZoneStatus {
  name: string;
  url: string;
  active: boolean;
}

/** Global's end of the sync: the gRPC server zones dial, their sessions and insights. */
export interface GlobalSyncServer {
  /** Binds the sync port with TLS; resolves with the bound port. */
  listen(port: number, tls: { key: string; cert: string }, host?: string): Promise<number>;
  /** Every Zone with the address its stream comes from and whether it is connected now. */
  zoneStatuses(): ZoneStatus[];
  /** Whether a session of the zone is open (decisions §3: such a zone cannot be deleted). */
  isConnected(zone: string): boolean;
  /**
   * A view of a zone's proxy, answered by the zone over its sync session; UNAVAILABLE
   * naming the zone when it is not connected or does not answer in time.
   */
  proxyDump(zone: string, req: Omit<DumpRequest, 'id'>): Promise<DumpReply>;
  close(): Promise<void>;
}

const SYSTEM_ACTOR: Actor = { name: 'mesh-cp', groups: ['mesh-system'], address: 'local' };

/** Refusals before authentication are logged once per caller address per this interval. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

/** `grpcs://host:port` of a peer as grpc-js names it (`1.2.3.4:5` or `::1:5`). */
function peerUrl(peer: string): string {
  const i = peer.lastIndexOf(':');
  if (i < 0) return `grpcs://${peer}`;
  const host = peer.slice(0, i);
  return `grpcs://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${peer.slice(i + 1)}`;
}

const fail = (code: 'UNAUTHENTICATED' | 'FORBIDDEN' | 'BAD_REQUEST', details: string): AppError =>
  new AppError(code, code === 'UNAUTHENTICATED' ? 'Unauthorized' : 'Refused', details);

/** The proxy status of a disconnected zone: every subscription ended (decisions §6: shown offline). */
function offline(insight: Insight, now: string): Insight {
  return {
    ...insight,
    subscriptions: (insight.subscriptions ?? []).map((s) =>
      s.disconnectTime ? s : { ...s, disconnectTime: now },
    ),
  };
}

/** Creates Global's sync server (architecture: Multi-zone sync). */
export function createGlobalSyncServer(deps: GlobalSyncDeps): GlobalSyncServer {
  const { registry, log, source, status, logger } = deps;
  const timers = deps.timers ?? DEFAULT_TIMERS;
  const sessions = new Map<string, GlobalSession>();
  const lastUrl = new Map<string, string>();
  /** Proxies whose status a zone sent: `meshNameKey` keys per zone. */
  const zoneProxies = new Map<string, Set<string>>();
  const insights = createZoneInsights({ status, now: deps.now });
  const ingress = createIngressServices({ log, source, commands: deps.commands, logger });
  const dumps = createDumpRequests(deps.dumpTimeoutMs ?? 5000);
  let server: grpc.Server | undefined;

  /** The status of the zone's proxies says offline (its session ended). */
  const proxiesOffline = (zone: string): void => {
    const now = deps.now().toISOString();
    for (const key of zoneProxies.get(zone) ?? []) {
      const [mesh, name] = splitMeshNameKey(key);
      const insight = status.dataplaneInsight(mesh, name);
      if (insight) status.setDataplaneInsight(mesh, name, offline(insight, now));
    }
  };

  /** Creates the Zone at its first connection; a disabled zone is refused. */
  const ensureZone = async (zone: string): Promise<void> => {
    const item = deps.commands.state.get('Zone', undefined, zone);
    if (item) {
      if (item.resource.enabled === false)
        throw fail('FORBIDDEN', `zone "${zone}" is disabled (enabled: false)`);
      return;
    }
    const spec = validSpec(registry.get('Zone'), { name: zone }, { enabled: true });
    await deps.commands
      .put({ kind: 'Zone', name: zone, spec, actor: SYSTEM_ACTOR, ifNoneMatch: '*' })
      .catch((err: unknown) => {
        if (!(err instanceof AppError && err.code === 'PRECONDITION_FAILED')) throw err;
      });
  };

  /**
   * The zone token of the call metadata, checked when the stream opens, before any message is read:
   * an unauthenticated caller is refused on its headers and never costs a message (up to
   * `grpc.max_receive_message_length`) held and decoded.
   */
  const authenticateCall = async (call: SyncStream): Promise<{ zone: string }> => {
    const header = call.metadata.get('authorization')[0];
    const token = typeof header === 'string' ? /^Bearer\s+(.+)$/i.exec(header)?.[1] : undefined;
    if (!token)
      throw fail('UNAUTHENTICATED', 'no zone token in the call metadata (authorization: Bearer <token>)');
    const claims = await deps.verifyZone(token);
    if (claims.scope.length > 0 && !claims.scope.includes('cp')) {
      throw fail('FORBIDDEN', 'the token has no "cp" scope');
    }
    return { zone: claims.zone };
  };

  /** The Hello of an authenticated stream: well formed, and of the zone its token is for. */
  const checkHello = (hello: Hello, tokenZone: string): void => {
    // Its strings go to the zone insight and to log lines (no control or bidi characters).
    const bad = controlCharacterCauses(hello, NO_MULTI_LINE_KEYS, 1)[0];
    if (bad) throw fail('BAD_REQUEST', `the Hello's ${bad.field} ${bad.message}`);
    if (tokenZone !== hello.zone) {
      throw fail('FORBIDDEN', `the token is for zone "${tokenZone}", not "${hello.zone}"`);
    }
    if (hello.zone === 'local' || hello.zone === '')
      throw fail('BAD_REQUEST', `"${hello.zone}" is not a zone name`);
  };

  const sessionFor = (hello: Hello, url: string): GlobalSession => {
    let s = sessions.get(hello.zone);
    if (s && s.id !== hello.sessionId) {
      logger?.warn({ zone: hello.zone, url }, 'a new connection of the zone replaces the open one');
      s.end('replaced by a newer connection of the same zone');
      s = undefined;
    }
    if (!s) {
      s = new GlobalSession(
        hello.zone,
        hello.sessionId,
        url,
        insights.open(hello.zone, {
          id: hello.sessionId,
          globalInstanceId: deps.info.instanceId,
          zoneInstanceId: hello.instanceId,
          config: hello.config,
          version: hello.version,
          url,
        }),
        sessionServer,
      );
      sessions.set(hello.zone, s);
      lastUrl.set(hello.zone, url);
    }
    return s;
  };

  /** Proxy status from a zone (runtime status, never the log), under the names Global gives them. */
  const applyStatus = (zone: string, update: StatusUpdate): void => {
    let tracked = zoneProxies.get(zone);
    if (!tracked) zoneProxies.set(zone, (tracked = new Set()));
    const seen = new Set<string>();
    for (const p of update.proxies) {
      if (p.kind !== 'Dataplane') continue;
      const name = zonedName(zone, p.name);
      const key = meshNameKey(p.mesh, name);
      seen.add(key);
      let insight: Insight | undefined;
      try {
        insight = p.insight.length > 0 ? (JSON.parse(p.insight.toString('utf8')) as Insight) : undefined;
      } catch {
        insight = undefined;
      }
      status.setDataplaneInsight(p.mesh, name, insight);
      if (insight) tracked.add(key);
      else tracked.delete(key);
    }
    if (update.full) {
      for (const key of [...tracked]) {
        if (seen.has(key)) continue;
        const [mesh, name] = splitMeshNameKey(key);
        status.setDataplaneInsight(mesh, name, undefined);
        tracked.delete(key);
      }
    }
  };

  // A caller without a valid token costs a line per address per interval, not one per try.
  const refusals = createRefusalLog({ intervalMs: REFUSAL_LOG_INTERVAL_MS, now: deps.now });
  const sweep = setInterval(() => {
    for (const { peer, suppressed } of refusals.sweep()) {
      logger?.warn(
        { url: peer, suppressed },
        `zone connections refused and not logged (one line per address per ${REFUSAL_LOG_INTERVAL_MS / 1000} s)`,
      );
    }
  }, REFUSAL_LOG_INTERVAL_MS);
  sweep.unref();

  /**
   * Logs why a stream was refused and ends it with the status of `err`; with `peer` (a refusal
   * before authentication), within the rate limit of the caller's address.
   */
  const refuse = (
    end: (e: StreamEnd) => void,
    err: unknown,
    where: { url: string; zone?: string; peer?: string },
  ): void => {
    const e = toStreamEnd(err);
    const verdict = where.peer === undefined ? { log: true, suppressed: 0 } : refusals.refused(where.peer);
    if (!verdict.log) {
      end(e);
      return;
    }
    logger?.warn(
      {
        zone: where.zone === undefined ? undefined : printable(where.zone),
        url: where.url,
        code: statusName(e.code),
        reason: e.details,
        ...(verdict.suppressed > 0 ? { suppressed: verdict.suppressed } : {}),
      },
      'zone connection refused',
    );
    if (!(err instanceof AppError)) logger?.error({ err }, 'zone connection failed');
    end(e);
  };

  /**
   * Handles one stream of either direction: the token of its metadata first, before any message is
   * read (grpc-js reads a stream's messages only once a `data` listener asks for them); then the
   * Hello, and the direction's messages once Global has sent its Welcome.
   */
  const handle = (direction: 'down' | 'up') => (call: SyncStream) => {
    const url = peerUrl(call.getPeer());
    authenticateCall(call).then(
      (claims) => {
        // The stream lives as long as the call: the call's listeners hold it.
        if (!call.cancelled) new GlobalStream(direction, call, url, claims.zone, streamServer);
      },
      (err: unknown) => {
        if (call.cancelled) return;
        // grpc-js: an `error` event on a server stream becomes the call's status.
        refuse((e) => call.emit('error', { code: e.code, details: e.details }), err, {
          url,
          peer: call.getPeer(),
        });
      },
    );
  };

  /** What each zone's session and each of its streams use of the server. */
  const sessionServer: GlobalSessionServer = {
    deps,
    ingress,
    dumps,
    applyStatus,
    forget: (s) => {
      if (sessions.get(s.zone) === s) sessions.delete(s.zone);
    },
    proxiesOffline,
  };
  const streamServer: GlobalStreamServer = {
    timers,
    logger,
    admit: (h, tokenZone) =>
      Promise.resolve()
        .then(() => checkHello(h, tokenZone))
        .then(() => ensureZone(h.zone))
        // With several Global instances on one log, this one may not have read the newest
        // entries yet: the zone's cursor is compared with the log's head, not with this lag.
        .then(() => log.catchUp()),
    sessionFor,
    refuse,
  };

  // A disabled zone is disconnected; a deleted zone's insight, address and proxy status go.
  const unsubscribe = log.onCommit((entries) => {
    for (const e of entries) {
      if (e.kind === 'Dataplane' && e.operation === 'delete' && e.mesh !== undefined) {
        // A deleted zone proxy's status goes with it.
        const key = meshNameKey(e.mesh, e.name);
        for (const tracked of zoneProxies.values()) {
          if (tracked.delete(key)) status.setDataplaneInsight(e.mesh, e.name, undefined);
        }
      }
      if (e.kind !== 'Zone') continue;
      if (e.operation === 'delete') {
        insights.forget(e.name);
        lastUrl.delete(e.name);
        for (const key of zoneProxies.get(e.name) ?? []) {
          const [mesh, name] = splitMeshNameKey(key);
          status.setDataplaneInsight(mesh, name, undefined);
        }
        zoneProxies.delete(e.name);
      } else if (e.resource?.enabled === false) {
        const s = sessions.get(e.name);
        if (s) s.end('the zone was disabled (enabled: false)');
      }
    }
  });

  return {
    async listen(port, tls, host = '0.0.0.0') {
      const srv = new grpc.Server(CHANNEL_OPTIONS);
      srv.addService(syncServerService(), {
        GlobalToZone: handle('down'),
        ZoneToGlobal: handle('up'),
      } as grpc.UntypedServiceImplementation);
      const creds = grpc.ServerCredentials.createSsl(
        null,
        [{ private_key: Buffer.from(tls.key), cert_chain: Buffer.from(tls.cert) }],
        false,
      );
      const bound = await new Promise<number>((resolve, reject) =>
        srv.bindAsync(`${host.includes(':') ? `[${host}]` : host}:${port}`, creds, (err, p) => {
          if (!err) resolve(p);
          else if (/EADDRINUSE|address already in use/i.test(err.message)) {
            reject(
              new AppError(
                'UNAVAILABLE',
                'cannot listen',
                `sync port ${port} already in use: ${err.message}`,
              ),
            );
          } else reject(err);
        }),
      );
      server = srv;
      return bound;
    },
    zoneStatuses() {
      const out: ZoneStatus[] = [];
      source.each('Zone', (item) => {
        const s = sessions.get(item.name);
        const here = !!s && s.active;
        const there = here ? undefined : deps.elsewhere?.(item.name);
        const url = here || there === undefined ? lastUrl.get(item.name) : String(there.url ?? '');
        out.push({ name: item.name, url: url ?? '', active: here || there !== undefined });
      });
      return out;
    },
    isConnected: (zone) => sessions.has(zone) || deps.elsewhere?.(zone) !== undefined,
    async proxyDump(zone, req) {
      const down = sessions.get(zone)?.openDownStream();
      if (!down) {
        const there = deps.elsewhere?.(zone);
        if (there !== undefined) {
          throw new AppError(
            'UNAVAILABLE',
            'Zone connected elsewhere',
            `zone "${zone}" is connected to another Global instance (${String(there.globalInstanceId)}); ask that instance`,
          );
        }
        throw new AppError('UNAVAILABLE', 'Zone not connected', `zone "${zone}" is not connected to Global`);
      }
      return dumps.ask(zone, (r) => down.send({ dumpRequest: r }), req);
    },
    async close() {
      clearInterval(sweep);
      unsubscribe();
      dumps.close();
      ingress.close();
      for (const s of [...sessions.values()]) s.end('Global is stopping');
      insights.close();
      const srv = server;
      server = undefined;
      if (!srv) return;
      await new Promise<void>((resolve) => {
        const force = setTimeout(() => {
          srv.forceShutdown();
          resolve();
        }, 1000);
        srv.tryShutdown(() => {
          clearTimeout(force);
          resolve();
        });
      });
    },
  };
}
