import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import type { Logger } from 'pino';
import { rulesOnZone } from '../app/decide-sync.js';
import type { SyncApplier } from '../app/sync-apply.js';
import type { SyncSource } from '../app/sync-source.js';
import type { EventLog } from '../events/event-log.js';
import type { Registry } from '../resources/registry.js';
import type { StatusStore } from '../status/status-store.js';
import { AppError } from '../util/errors.js';
import { createEntryReceiver, parseCursor } from './entry-receiver.js';
import type { EntrySender, SenderLimits, SenderLog } from './entry-sender.js';
import { createEntrySender, planStart } from './entry-sender.js';
import { statusName } from './grpc-errors.js';
import type { PeerStream, StreamEnd, StreamTimers } from './peer-stream.js';
import { DEFAULT_TIMERS, createPeerStream } from './peer-stream.js';
import type {
  DumpRequest,
  DumpResponse,
  ProxyStatus,
  ReceivedMessage,
  SyncClient,
  WireVersion,
} from './sync-protocol.js';
import { CHANNEL_OPTIONS, syncClientConstructor } from './sync-protocol.js';
import { explainConnectFailure } from './connect-failure.js';

/** Meta key of what the zone applied of Global's log. */
export const DOWN_CURSOR_KEY = 'sync.down';

/** What a zone says about the Global it follows (`GET /`, `/config`). */
export interface GlobalLink {
  /** This zone's name. */
  name: string;
  globalAddress: string;
  connected: boolean;
  globalInstanceId?: string;
  /** How the last Global→zone stream started (`resume` or `snapshot`). */
  start?: string;
  connectTime?: string;
  disconnectTime?: string;
  lastError?: string;
}

/** The zone's end of the sync: dials Global, keeps both streams up, reconnects with back-off. */
export interface ZoneSyncClient {
  start(): void;
  describe(): GlobalLink;
  close(): Promise<void>;
}

/** Dependencies of {@link createZoneSyncClient}. */
export interface ZoneSyncDeps {
  registry: Registry;
  log: SenderLog & Pick<EventLog, 'getMeta'>;
  applier: SyncApplier;
  source: SyncSource;
  status: StatusStore;
  zone: string;
  /** As configured (`grpcs://host:port`). */
  globalAddress: string;
  credentials: grpc.ChannelCredentials;
  token: string;
  info: { instanceId: string; clusterId: string; version: WireVersion; config: string };
  logger?: Logger;
  now: () => Date;
  timers?: StreamTimers;
  limits?: Partial<SenderLimits>;
  /** Back-off between attempts: from `min` doubling to `max` (ms). */
  backoff?: { min: number; max: number };
  /** Answers Global's requests for a view of one of this zone's proxies; absent: none are answered. */
  answerDump?: (req: DumpRequest) => Promise<{ contentType: string; body: string }>;
}

const STATUS_FLUSH_MS = 100;

/** Creates the zone's sync client (architecture: Multi-zone sync). */
export function createZoneSyncClient(deps: ZoneSyncDeps): ZoneSyncClient {
  const { registry, log, source, status, logger } = deps;
  const timers = deps.timers ?? DEFAULT_TIMERS;
  const backoff = deps.backoff ?? { min: 500, max: 5000 };
  const target = deps.globalAddress.replace(/^grpcs?:\/\//, '');
  const Client = syncClientConstructor();
  const client: SyncClient = new Client(target, deps.credentials, CHANNEL_OPTIONS);
  const link: GlobalLink = { name: deps.zone, globalAddress: deps.globalAddress, connected: false };
  let closed = false;
  let current: { end(reason: StreamEnd): void } | undefined;
  let loop: Promise<void> | undefined;
  let lastFailure = '';
  let statusSink: ((mesh: string, name: string) => void) | undefined;
  // One listener for the client's lifetime; the open session, if any, takes the changes.
  status.onChange((mesh, name) => {
    if (name !== undefined && mesh !== '') statusSink?.(mesh, name);
  });

  /** One session: both streams; resolves when either ends. */
  const runSession = (): Promise<{ connected: boolean; end: StreamEnd }> =>
    new Promise((resolve) => {
      const sessionId = randomUUID();
      const metadata = new grpc.Metadata();
      metadata.set('authorization', `Bearer ${deps.token}`);
      let down: PeerStream | undefined;
      let up: PeerStream | undefined;
      let sender: EntrySender | undefined;
      let receiverStop: (() => void) | undefined;
      let downReady = false;
      let upReady = false;
      let finished = false;
      let statusTimer: NodeJS.Timeout | undefined;
      const dirty = new Map<string, { mesh: string; name: string }>();
      let stored: { logId: string; revision: number } | undefined;

      const hello = (cursor: { logId: string; revision: number } | null) => ({
        hello: {
          zone: deps.zone,
          sessionId,
          instanceId: deps.info.instanceId,
          clusterId: deps.info.clusterId,
          version: deps.info.version,
          config: deps.info.config,
          cursor,
        },
      });

      const end = (e: StreamEnd): void => {
        if (finished) return;
        finished = true;
        current = undefined;
        statusSink = undefined;
        if (statusTimer) clearTimeout(statusTimer);
        sender?.stop();
        receiverStop?.();
        down?.close();
        up?.close();
        const wasConnected = link.connected;
        if (wasConnected) {
          link.connected = false;
          link.disconnectTime = deps.now().toISOString();
          logger?.warn({ global: deps.globalAddress, reason: e.details }, 'disconnected from Global');
        }
        resolve({ connected: wasConnected, end: e });
      };
      current = { end };

      const ready = (): void => {
        if (!downReady || !upReady || link.connected) return;
        link.connected = true;
        link.connectTime = deps.now().toISOString();
        link.lastError = undefined;
        lastFailure = '';
        logger?.info({ global: deps.globalAddress, start: link.start }, 'connected to Global');
      };

      /** Proxy status of the zone's own data planes: all at once, then what changes. */
      const proxyStatus = (mesh: string, name: string): ProxyStatus => {
        const insight = status.dataplaneInsight(mesh, name);
        const own = source.get('Dataplane', mesh, name)?.origin === 'local';
        return {
          kind: 'Dataplane',
          mesh,
          name,
          insight: insight && own ? Buffer.from(JSON.stringify(insight)) : Buffer.alloc(0),
        };
      };
      const sendStatus = (): void => {
        statusTimer = undefined;
        if (!up || dirty.size === 0) return;
        const proxies = [...dirty.values()].map((p) => proxyStatus(p.mesh, p.name));
        dirty.clear();
        up.send({ status: { proxies, full: false } });
      };
      statusSink = (mesh, name) => {
        if (finished || !upReady) return;
        dirty.set(`${mesh}\u0000${name}`, { mesh, name });
        statusTimer ??= setTimeout(sendStatus, STATUS_FLUSH_MS);
      };

      let onBatch: ((b: NonNullable<ReceivedMessage['batch']>) => void) | undefined;
      const onDown = (m: ReceivedMessage): void => {
        if (m.body === 'welcome' && m.welcome && !downReady) {
          const w = m.welcome;
          link.globalInstanceId = w.instanceId;
          link.start = w.start;
          downReady = true;
          startReceiver(w.clusterId);
          return;
        }
        if (m.body === 'batch' && m.batch) onBatch?.(m.batch);
        else if (m.body === 'dumpRequest' && m.dumpRequest) answer(m.dumpRequest);
      };

      /** Global's request for a proxy view: answered on the same stream, errors by their code. */
      const answer = (req: DumpRequest): void => {
        const reply = (res: Omit<DumpResponse, 'id'>): void =>
          down?.send({ dumpResponse: { id: req.id, ...res } });
        const none = { contentType: '', body: Buffer.alloc(0) };
        if (!deps.answerDump) {
          reply({
            ...none,
            errorCode: 'UNAVAILABLE',
            errorTitle: 'Not served',
            errorDetails: `zone "${deps.zone}" serves no proxy views`,
          });
          return;
        }
        deps.answerDump(req).then(
          (r) =>
            reply({
              contentType: r.contentType,
              body: Buffer.from(r.body),
              errorCode: '',
              errorTitle: '',
              errorDetails: '',
            }),
          (err: unknown) => {
            const known = err instanceof AppError;
            if (!known) logger?.error({ err }, 'answering a proxy view request failed');
            reply({
              ...none,
              errorCode: known ? err.code : 'INTERNAL',
              errorTitle: known ? err.title : 'Internal error',
              errorDetails: known ? err.details : `zone "${deps.zone}" failed to answer`,
            });
          },
        );
      };

      const startReceiver = (globalLogId: string): void => {
        const stream = down as PeerStream;
        const receiver = createEntryReceiver({
          applier: deps.applier,
          rules: rulesOnZone(),
          actor: { name: 'global', groups: ['mesh-system:global'], address: deps.globalAddress },
          cursorKey: DOWN_CURSOR_KEY,
          cursorValue: (revision) => JSON.stringify({ logId: globalLogId, revision }),
          cursor: stored?.logId === globalLogId ? stored.revision : 0,
          send: (msg) => stream.send(msg),
          pause: () => stream.pause(),
          resume: () => stream.resume(),
          events: {
            applied: (_batch, _kinds, result) => {
              if (result.removed > 0)
                logger?.info({ removed: result.removed }, 'removed what Global no longer has');
              for (const r of result.rejected) logger?.warn({ ...r }, 'rejected an entry from Global');
            },
          },
          onError: (err) => {
            logger?.error({ err }, 'applying what Global sent failed');
            end({ code: grpc.status.INTERNAL, details: 'applying failed' });
          },
        });
        receiverStop = () => receiver.stop();
        onBatch = (b) => receiver.onBatch(b);
        ready();
      };

      const onUp = (m: ReceivedMessage): void => {
        if (m.body === 'welcome' && m.welcome && !upReady) {
          const plan = planStart(m.welcome.cursor, deps.info.clusterId, log.head());
          const stream = up as PeerStream;
          sender = createEntrySender({
            log,
            source,
            selectEntry: (e) => registry.find(e.kind)?.sync === 'up' && e.origin === 'local',
            selectItem: (desc, item) => desc.sync === 'up' && item.origin === 'local',
            send: (msg) => stream.send(msg),
            limits: deps.limits,
            events: {
              sent: () => undefined,
              acked: (_kinds, rejected) => {
                for (const r of rejected) logger?.warn({ ...r }, 'Global rejected an entry of this zone');
              },
            },
            onError: (err) => {
              logger?.error({ err }, 'sending to Global failed');
              end({ code: grpc.status.INTERNAL, details: 'sending failed' });
            },
          });
          const started = sender.start(plan);
          logger?.info(
            { start: plan.start, ...started, cursor: m.welcome.cursor, head: log.head() },
            'sync to Global started',
          );
          upReady = true;
          const proxies: ProxyStatus[] = [];
          source.each('Dataplane', (item) => {
            if (item.origin === 'local' && item.mesh && status.dataplaneInsight(item.mesh, item.name)) {
              proxies.push(proxyStatus(item.mesh, item.name));
            }
          });
          stream.send({ status: { proxies, full: true } });
          ready();
          return;
        }
        if (m.body === 'ack' && m.ack) sender?.onAck(m.ack);
      };

      const onEnd = (which: string) => (e: StreamEnd) =>
        end({ code: e.code, details: `${which}: ${statusName(e.code)}: ${e.details}` });

      log
        .getMeta(DOWN_CURSOR_KEY)
        .then((value) => {
          if (finished || closed) {
            end({ code: grpc.status.CANCELLED, details: 'closed' });
            return;
          }
          stored = parseCursor(value);
          down = createPeerStream(client.GlobalToZone(metadata), {
            timers,
            onMessage: onDown,
            onEnd: onEnd('Global→zone'),
          });
          down.send(hello(stored ? { logId: stored.logId, revision: stored.revision } : null));
          up = createPeerStream(client.ZoneToGlobal(metadata), {
            timers,
            onMessage: onUp,
            onEnd: onEnd('zone→Global'),
          });
          up.send(hello(null));
        })
        .catch((err: unknown) => end({ code: grpc.status.INTERNAL, details: String(err) }));
    });

  const sleep = (ms: number): Promise<void> =>
    new Promise((resolve) => {
      const t = setTimeout(resolve, ms);
      t.unref();
      wakeSleep = () => {
        clearTimeout(t);
        resolve();
      };
    });
  let wakeSleep: (() => void) | undefined;

  const run = async (): Promise<void> => {
    let delay = backoff.min;
    while (!closed) {
      const { connected, end } = await runSession();
      if (closed) break;
      if (connected) delay = backoff.min;
      if (!connected) {
        const failure = explainConnectFailure(end.details, deps.globalAddress);
        link.lastError = failure;
        // One line per distinct failure, not one per attempt.
        if (failure !== lastFailure) {
          logger?.warn({ global: deps.globalAddress, reason: failure }, 'cannot connect to Global; retrying');
          lastFailure = failure;
        }
      }
      await sleep(delay + Math.floor(Math.random() * 100));
      delay = Math.min(delay * 2, backoff.max);
    }
  };

  return {
    start() {
      loop ??= run();
    },
    describe: () => ({ ...link }),
    async close() {
      closed = true;
      current?.end({ code: grpc.status.CANCELLED, details: 'the zone is stopping' });
      wakeSleep?.();
      await loop;
      client.close();
    },
  };
}
