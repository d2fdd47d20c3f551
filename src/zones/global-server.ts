import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import type { Commands } from '../app/commands.js';
import { rulesOnGlobal } from '../app/decide-sync.js';
import type { SyncApplier } from '../app/sync-apply.js';
import type { SyncSource } from '../app/sync-source.js';
import type { EventLog } from '../events/event-log.js';
import type { Actor, LogEntry } from '../events/types.js';
import { NO_MULTI_LINE_KEYS, controlCharacterCauses } from '../resources/control-characters.js';
import type { Registry } from '../resources/registry.js';
import { validSpec } from '../resources/validate.js';
import type { Insight, StatusStore, Subscription } from '../status/status-store.js';
import { AppError } from '../util/errors.js';
import { printable } from '../util/printable.js';
import type { EntryReceiver } from './entry-receiver.js';
import { createEntryReceiver, parseCursor } from './entry-receiver.js';
import type { EntrySender, SenderLimits, SenderLog } from './entry-sender.js';
import { createEntrySender, planStart } from './entry-sender.js';
import { statusName, toStreamEnd } from './grpc-errors.js';
import { createIngressServices } from './ingress-services.js';
import { createRefusalLog } from '../util/refusal-log.js';
import type { PeerStream, StreamEnd, StreamTimers } from './peer-stream.js';
import { DEFAULT_TIMERS, createPeerStream } from './peer-stream.js';
import type { DumpReply } from './dump-requests.js';
import { createDumpRequests } from './dump-requests.js';
import type {
  DumpRequest,
  Hello,
  ReceivedMessage,
  StatusUpdate,
  SyncStream,
  WireVersion,
} from './sync-protocol.js';
import { CHANNEL_OPTIONS, syncServerService } from './sync-protocol.js';
import type { SubscriptionHandle } from './zone-insights.js';
import { createZoneInsights } from './zone-insights.js';

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

/** Dependencies of {@link createGlobalSyncServer}. */
export interface GlobalSyncDeps {
  registry: Registry;
  log: SenderLog & Pick<EventLog, 'getMeta' | 'catchUp'>;
  commands: Commands;
  applier: SyncApplier;
  source: SyncSource;
  verifyZone(token: string): Promise<{ zone: string; scope: string[]; tokenId: string }>;
  status: StatusStore;
  info: { instanceId: string; clusterId: string; version: WireVersion };
  /** With several Global instances on one log: the open subscription of a zone connected to another. */
  elsewhere?: (zone: string) => Subscription | undefined;
  logger?: Logger;
  now: () => Date;
  timers?: StreamTimers;
  limits?: Partial<SenderLimits>;
  /** How long a zone has to answer a proxy view request (default 5 s). */
  dumpTimeoutMs?: number;
}

interface Session {
  zone: string;
  id: string;
  url: string;
  sub: SubscriptionHandle;
  down?: { stream: PeerStream; sender: EntrySender };
  up?: { stream: PeerStream; receiver: EntryReceiver };
  active: boolean;
  ended: boolean;
}

const SYSTEM_ACTOR: Actor = { name: 'mesh-cp', groups: ['mesh-system'], address: 'local' };

/** Refusals before authentication are logged once per caller address per this interval. */
const REFUSAL_LOG_INTERVAL_MS = 10_000;

/** Meta key of what Global applied of a zone's log. */
export const upCursorKey = (zone: string): string => `sync.up.${zone}`;

/** `grpcs://host:port` of a peer as grpc-js names it (`1.2.3.4:5` or `::1:5`). */
function peerUrl(peer: string): string {
  const i = peer.lastIndexOf(':');
  if (i < 0) return `grpcs://${peer}`;
  const host = peer.slice(0, i);
  return `grpcs://${host.includes(':') && !host.startsWith('[') ? `[${host}]` : host}:${peer.slice(i + 1)}`;
}

const fail = (code: 'UNAUTHENTICATED' | 'FORBIDDEN' | 'BAD_REQUEST', details: string): AppError =>
  new AppError(code, code === 'UNAUTHENTICATED' ? 'Unauthorized' : 'Refused', details);

/** How a refusal names a message: `a batch`, `an ack`. */
const named = (m: ReceivedMessage): string =>
  m.body === undefined ? 'a message with no body' : `${m.body === 'ack' ? 'an' : 'a'} ${m.body}`;

/** A message of a kind the stream does not carry once it is open. */
function outOfPlace(m: ReceivedMessage, direction: 'down' | 'up'): AppError {
  return fail(
    'BAD_REQUEST',
    direction === 'down'
      ? `${named(m)} is not a message of the Global→zone stream: a zone sends only acks and proxy views on it`
      : `${named(m)} is not a message of the zone→Global stream: a zone sends only batches and proxy status on it`,
  );
}

/** A message that came between a stream's Hello and Global's Welcome. */
function tooEarly(m: ReceivedMessage): AppError {
  const what = named(m);
  return fail(
    'BAD_REQUEST',
    `${what} arrived before Global's Welcome: a zone sends nothing on a stream but its Hello until Global answers with a Welcome`,
  );
}

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
  const sessions = new Map<string, Session>();
  const lastUrl = new Map<string, string>();
  /** Proxies whose status a zone sent: `mesh\0name` per zone. */
  const zoneProxies = new Map<string, Set<string>>();
  const insights = createZoneInsights({ status, now: deps.now });
  const ingress = createIngressServices({ log, source, commands: deps.commands, logger });
  const dumps = createDumpRequests(deps.dumpTimeoutMs ?? 5000);
  let server: grpc.Server | undefined;

  const goesDown = (zone: string) => (e: LogEntry) => {
    const desc = registry.find(e.kind);
    if (!desc) return false;
    if (desc.sync === 'down') return !desc.keepOnGlobal?.test(e.name);
    // Another zone's ingress (its origin is that zone; deletes by a zone delete are local).
    return desc.crossZone === true && e.origin !== zone;
  };

  const endSession = (s: Session, reason: string): void => {
    if (s.ended) return;
    s.ended = true;
    if (sessions.get(s.zone) === s) sessions.delete(s.zone);
    s.down?.sender.stop();
    s.up?.receiver.stop();
    s.down?.stream.close({ code: grpc.status.UNAVAILABLE, details: reason });
    s.up?.stream.close({ code: grpc.status.UNAVAILABLE, details: reason });
    s.sub.close();
    dumps.dropZone(s.zone, reason);
    const now = deps.now().toISOString();
    for (const key of zoneProxies.get(s.zone) ?? []) {
      const [mesh, name] = key.split('\u0000');
      const insight = status.dataplaneInsight(mesh, name);
      if (insight) status.setDataplaneInsight(mesh, name, offline(insight, now));
    }
    if (s.active) logger?.info({ zone: s.zone, session: s.id, reason }, 'zone disconnected');
  };

  const markActive = (s: Session): void => {
    if (s.active || !s.down || !s.up) return;
    s.active = true;
    logger?.info({ zone: s.zone, session: s.id, url: s.url }, 'zone connected');
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

  const sessionFor = (hello: Hello, url: string): Session => {
    let s = sessions.get(hello.zone);
    if (s && s.id !== hello.sessionId) {
      logger?.warn({ zone: hello.zone, url }, 'a new connection of the zone replaces the open one');
      endSession(s, 'replaced by a newer connection of the same zone');
      s = undefined;
    }
    if (!s) {
      s = {
        zone: hello.zone,
        id: hello.sessionId,
        url,
        active: false,
        ended: false,
        sub: insights.open(hello.zone, {
          id: hello.sessionId,
          globalInstanceId: deps.info.instanceId,
          zoneInstanceId: hello.instanceId,
          config: hello.config,
          version: hello.version,
          url,
        }),
      };
      sessions.set(hello.zone, s);
      lastUrl.set(hello.zone, url);
    }
    return s;
  };

  const welcomeBase = () => ({
    instanceId: deps.info.instanceId,
    clusterId: deps.info.clusterId,
    version: deps.info.version,
  });

  /** Global → zone: resume after the zone's cursor, or a snapshot; acks come back. */
  const attachDown = (s: Session, stream: PeerStream, hello: Hello): ((m: ReceivedMessage) => boolean) => {
    const plan = planStart(hello.cursor, deps.info.clusterId, log.head());
    const sender = createEntrySender({
      log,
      source,
      selectEntry: goesDown(s.zone),
      selectItem: (desc, item) =>
        desc.sync === 'down'
          ? !desc.keepOnGlobal?.test(item.name)
          : desc.crossZone === true && item.origin !== s.zone && item.origin !== 'local',
      send: (m) => stream.send(m),
      limits: deps.limits,
      events: {
        sent: (kinds) => s.sub.downSent(kinds),
        acked: (kinds, rejected, revision) => {
          s.sub.downAcked(kinds, rejected, revision);
          for (const r of rejected) {
            logger?.warn({ zone: s.zone, ...r }, 'the zone rejected an entry');
          }
        },
      },
      onError: (err) => {
        logger?.error({ err, zone: s.zone }, 'sending to the zone failed');
        endSession(s, 'sending failed');
      },
    });
    s.down = { stream, sender };
    const started = sender.start(plan);
    stream.send({
      welcome: { ...welcomeBase(), cursor: null, start: plan.start, fromRevision: started.fromRevision },
    });
    s.sub.downStart(plan.start, started.fromRevision, started.snapshotResources);
    logger?.info({ zone: s.zone, ...started, start: plan.start }, 'sync to zone started');
    markActive(s);
    return (m) => {
      if (m.body === 'ack' && m.ack) sender.onAck(m.ack);
      else if (m.body === 'dumpResponse' && m.dumpResponse) dumps.answered(s.zone, m.dumpResponse);
      else return false;
      return true;
    };
  };

  /** Zone → Global: tell the zone what was applied; apply its batches and its proxies' status. */
  const attachUp = async (
    s: Session,
    stream: PeerStream,
    hello: Hello,
  ): Promise<((m: ReceivedMessage) => boolean) | undefined> => {
    const stored = parseCursor(await log.getMeta(upCursorKey(s.zone)));
    // The write path's state: the Zone the other stream of the session just created may not be durable yet.
    const zoneCreated = deps.commands.state.get('Zone', undefined, s.zone)?.resource.creationTime;
    // A cursor written before the zone was deleted and made again says nothing about what is here now.
    const cursor =
      stored && stored.zoneCreated === zoneCreated && stored.logId === hello.clusterId ? stored : undefined;
    if (stream.ended || s.ended) return undefined;
    const receiver = createEntryReceiver({
      applier: deps.applier,
      rules: rulesOnGlobal(s.zone, ingress.adjust(s.zone)),
      actor: { name: `zone/${s.zone}`, groups: ['mesh-system:zone'], address: s.url },
      cursorKey: upCursorKey(s.zone),
      cursorValue: (revision) => JSON.stringify({ logId: hello.clusterId, revision, zoneCreated }),
      cursor: cursor?.revision ?? 0,
      send: (m) => stream.send(m),
      pause: () => stream.pause(),
      resume: () => stream.resume(),
      events: {
        applied: (batch, kinds, result) => {
          if (batch.snapshot !== 'NONE') s.sub.upSnapshotResources(batch.entries.length);
          s.sub.upApplied(kinds, result.rejected, batch.toRevision);
          if (result.removed > 0) {
            logger?.info({ zone: s.zone, removed: result.removed }, 'removed what the zone no longer has');
          }
          for (const r of result.rejected)
            logger?.warn({ zone: s.zone, ...r }, 'rejected an entry from the zone');
        },
      },
      onError: (err) => {
        logger?.error({ err, zone: s.zone }, 'applying what the zone sent failed');
        endSession(s, 'applying failed');
      },
    });
    s.up = { stream, receiver };
    stream.send({
      welcome: {
        ...welcomeBase(),
        cursor: cursor ? { logId: cursor.logId, revision: cursor.revision } : null,
        start: '',
        fromRevision: 0,
      },
    });
    s.sub.upStart(cursor ? 'resume' : 'snapshot', cursor?.revision ?? 0);
    markActive(s);
    return (m) => {
      if (m.body === 'batch' && m.batch) receiver.onBatch(m.batch);
      else if (m.body === 'status' && m.status) applyStatus(s.zone, m.status);
      else return false;
      return true;
    };
  };

  /** Proxy status from a zone (runtime status, never the log), under the names Global gives them. */
  const applyStatus = (zone: string, update: StatusUpdate): void => {
    let tracked = zoneProxies.get(zone);
    if (!tracked) zoneProxies.set(zone, (tracked = new Set()));
    const seen = new Set<string>();
    for (const p of update.proxies) {
      if (p.kind !== 'Dataplane') continue;
      const name = `${zone}.${p.name}`;
      const key = `${p.mesh}\u0000${name}`;
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
        const [mesh, name] = key.split('\u0000');
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
        if (!call.cancelled) serve(direction, call, url, claims.zone);
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

  /** An authenticated stream: its Hello, then the direction's messages. */
  const serve = (direction: 'down' | 'up', call: SyncStream, url: string, tokenZone: string): void => {
    let session: Session | undefined;
    /** The direction's messages once the Welcome is sent; false for one the stream does not carry. */
    let onMessage: ((m: ReceivedMessage) => boolean) | undefined;
    let hello: Hello | undefined;
    /** Ends the stream over a message it does not carry, with a log line naming the zone. */
    const closeOutOfPlace = (end: StreamEnd): void => {
      logger?.warn(
        { zone: printable(tokenZone), url, reason: end.details },
        'a zone sent a message out of place',
      );
      stream.close(end);
    };
    const stream = createPeerStream(call, {
      timers,
      onMessage(m) {
        if (m.body === 'undecodable') {
          const end = {
            code: grpc.status.INVALID_ARGUMENT,
            details: `a message that is not a SyncMessage of proto/sync.proto (${m.undecodable ?? 'no details'})`,
          };
          closeOutOfPlace(end);
          return;
        }
        if (onMessage) {
          // The session ends with the stream (and says so); the log line says which message did it.
          if (!onMessage(m)) closeOutOfPlace(toStreamEnd(outOfPlace(m, direction)));
          return;
        }
        if (hello) {
          // Between the Hello and Global's Welcome a zone has nothing to send (pings aside): whatever
          // comes is out of order, and is refused rather than lost without a word.
          refuse((e) => stream.close(e), tooEarly(m), { url, zone: hello.zone });
          return;
        }
        if (m.body !== 'hello' || !m.hello) {
          stream.close({ code: grpc.status.INVALID_ARGUMENT, details: 'the first message must be a Hello' });
          return;
        }
        hello = m.hello;
        const h = m.hello;
        Promise.resolve()
          .then(() => checkHello(h, tokenZone))
          .then(() => ensureZone(h.zone))
          // With several Global instances on one log, this one may not have read the newest
          // entries yet: the zone's cursor is compared with the log's head, not with this lag.
          .then(() => log.catchUp())
          .then(async () => {
            if (stream.ended) return;
            session = sessionFor(h, url);
            onMessage =
              direction === 'down' ? attachDown(session, stream, h) : await attachUp(session, stream, h);
          })
          .catch((err: unknown) => {
            if (!stream.ended) refuse((e) => stream.close(e), err, { url, zone: h.zone });
          });
      },
      onEnd(end) {
        clearTimeout(helloTimer);
        if (session)
          endSession(
            session,
            `${direction === 'down' ? 'Global→zone' : 'zone→Global'} stream ended: ${end.details}`,
          );
      },
    });
    const helloTimer = setTimeout(() => {
      if (!hello) stream.close({ code: grpc.status.DEADLINE_EXCEEDED, details: 'no Hello received' });
    }, timers.idleTimeoutMs);
    helloTimer.unref();
  };

  // A disabled zone is disconnected; a deleted zone's insight, address and proxy status go.
  const unsubscribe = log.onCommit((entries) => {
    for (const e of entries) {
      if (e.kind === 'Dataplane' && e.operation === 'delete' && e.mesh !== undefined) {
        // A deleted zone proxy's status goes with it.
        const key = `${e.mesh}\u0000${e.name}`;
        for (const tracked of zoneProxies.values()) {
          if (tracked.delete(key)) status.setDataplaneInsight(e.mesh, e.name, undefined);
        }
      }
      if (e.kind !== 'Zone') continue;
      if (e.operation === 'delete') {
        insights.forget(e.name);
        lastUrl.delete(e.name);
        for (const key of zoneProxies.get(e.name) ?? []) {
          const [mesh, name] = key.split('\u0000');
          status.setDataplaneInsight(mesh, name, undefined);
        }
        zoneProxies.delete(e.name);
      } else if (e.resource?.enabled === false) {
        const s = sessions.get(e.name);
        if (s) endSession(s, 'the zone was disabled (enabled: false)');
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
        const here = !!s && s.active && !s.ended;
        const there = here ? undefined : deps.elsewhere?.(item.name);
        const url = here || there === undefined ? lastUrl.get(item.name) : String(there.url ?? '');
        out.push({ name: item.name, url: url ?? '', active: here || there !== undefined });
      });
      return out;
    },
    isConnected: (zone) => sessions.has(zone) || deps.elsewhere?.(zone) !== undefined,
    async proxyDump(zone, req) {
      const s = sessions.get(zone);
      const down = s?.down;
      if (!s || s.ended || !s.active || !down || down.stream.ended) {
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
      return dumps.ask(zone, (r) => down.stream.send({ dumpRequest: r }), req);
    },
    async close() {
      clearInterval(sweep);
      unsubscribe();
      dumps.close();
      ingress.close();
      for (const s of [...sessions.values()]) endSession(s, 'Global is stopping');
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
