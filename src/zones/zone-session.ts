import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import { rulesOnZone } from '../app/decide-sync.js';
import { meshNameKey } from '../resources/keys.js';
import { AppError } from '../util/errors.js';
import type { EntryReceiver } from './entry-receiver.js';
import { createEntryReceiver, parseCursor } from './entry-receiver.js';
import type { EntrySender } from './entry-sender.js';
import { createEntrySender, planStart } from './entry-sender.js';
import { statusName } from './grpc-errors.js';
import type { PeerStream, StreamEnd } from './peer-stream.js';
import { DEFAULT_TIMERS, createPeerStream } from './peer-stream.js';
import type {
  DumpRequest,
  DumpResponse,
  Hello,
  ProxyStatus,
  ReceivedMessage,
  SyncClient,
  WireCursor,
  Welcome,
} from './sync-protocol.js';
import type { GlobalLink, ZoneSyncDeps } from './zone-sync-deps.js';

/** Meta key of what the zone applied of Global's log. */
export const DOWN_CURSOR_KEY = 'sync.down';

const STATUS_FLUSH_MS = 100;

/** How a session ended: whether it had connected, and why it ended. */
export interface ZoneSessionEnd {
  connected: boolean;
  end: StreamEnd;
}

/** Where a {@link ZoneSession} is; see the class comment for what moves it. */
export type ZoneSessionState = 'reading-cursor' | 'handshaking' | 'streaming' | 'closed';

/**
 * One session of a zone with Global: both streams, from the dial to the end of either.
 *
 * States and what moves them:
 * - `reading-cursor`: reads what the zone applied of Global's log. Cursor read → both streams are
 *   dialled and each sends its Hello → `handshaking`.
 * - `handshaking`: each stream waits for Global's Welcome. The Global→zone Welcome starts the
 *   receiver; the zone→Global Welcome starts the sender and the full proxy status. Both Welcomes
 *   → `streaming` (the link says connected).
 * - `streaming`: batches and proxy view requests come down, acks too; batches and status go up.
 * - `closed`, from any state: a stream ended, sending or applying failed, the cursor could not be
 *   read, or the client asked (`close`). Everything stops and `run` resolves, once.
 *
 * Events, each handled in one method: `onDown` and `onUp` (a message on each stream),
 * `onStreamEnd`, `statusChanged` and `flushStatus` (its timer), `close`.
 */
export class ZoneSession {
  private state: ZoneSessionState = 'reading-cursor';
  private readonly id = randomUUID();
  private stored: { logId: string; revision: number } | undefined;
  private down: PeerStream | undefined;
  private up: PeerStream | undefined;
  private receiver: EntryReceiver | undefined;
  private sender: EntrySender | undefined;
  private downWelcomed = false;
  private upWelcomed = false;
  /** Proxies whose status changed since the last flush, by `mesh\0name`. */
  private readonly dirty = new Map<string, { mesh: string; name: string }>();
  private statusTimer: NodeJS.Timeout | undefined;
  private finish: (end: ZoneSessionEnd) => void = () => undefined;

  constructor(
    private readonly deps: ZoneSyncDeps,
    private readonly client: SyncClient,
    /** What the zone says about Global: the session marks it connected and disconnected. */
    private readonly link: GlobalLink,
  ) {}

  /** Reads the cursor, dials both streams; resolves when the session is closed. */
  run(): Promise<ZoneSessionEnd> {
    const ended = new Promise<ZoneSessionEnd>((resolve) => (this.finish = resolve));
    this.deps.log
      .getMeta(DOWN_CURSOR_KEY)
      .then((value) => this.dial(value))
      .catch((err: unknown) => this.close({ code: grpc.status.INTERNAL, details: String(err) }));
    return ended;
  }

  /** Ends the session (idempotent): stops the sender and receiver, closes both streams. */
  close(e: StreamEnd): void {
    if (this.state === 'closed') return;
    this.state = 'closed';
    if (this.statusTimer) clearTimeout(this.statusTimer);
    this.sender?.stop();
    this.receiver?.stop();
    this.down?.close();
    this.up?.close();
    const { link, deps } = this;
    const wasConnected = link.connected;
    if (wasConnected) {
      link.connected = false;
      link.disconnectTime = deps.now().toISOString();
      deps.logger?.warn({ global: deps.globalAddress, reason: e.details }, 'disconnected from Global');
    }
    this.finish({ connected: wasConnected, end: e });
  }

  /** A proxy's status changed: sent up with the others of the next flush, once the sender runs. */
  statusChanged(mesh: string, name: string): void {
    if (this.state === 'closed' || !this.upWelcomed) return;
    this.dirty.set(meshNameKey(mesh, name), { mesh, name });
    this.statusTimer ??= setTimeout(() => this.flushStatus(), STATUS_FLUSH_MS);
  }

  /** The cursor was read: both streams are dialled, each with its Hello. */
  private dial(value: string | undefined): void {
    if (this.state === 'closed') return;
    this.state = 'handshaking';
    this.stored = parseCursor(value);
    const { stored, client, deps } = this;
    const timers = deps.timers ?? DEFAULT_TIMERS;
    const metadata = new grpc.Metadata();
    metadata.set('authorization', `Bearer ${deps.token}`);
    this.down = createPeerStream(client.GlobalToZone(metadata), {
      timers,
      onMessage: (m) => this.onDown(m),
      onEnd: (e) => this.onStreamEnd('Global→zone', e),
    });
    this.down.send(this.hello(stored ? { logId: stored.logId, revision: stored.revision } : null));
    this.up = createPeerStream(client.ZoneToGlobal(metadata), {
      timers,
      onMessage: (m) => this.onUp(m),
      onEnd: (e) => this.onStreamEnd('zone→Global', e),
    });
    this.up.send(this.hello(null));
  }

  /** The zone's Hello, the same on both streams but for the cursor. */
  private hello(cursor: WireCursor | null): { hello: Hello } {
    const { deps } = this;
    return {
      hello: {
        zone: deps.zone,
        sessionId: this.id,
        instanceId: deps.info.instanceId,
        clusterId: deps.info.clusterId,
        version: deps.info.version,
        config: deps.info.config,
        cursor,
      },
    };
  }

  /** A message on the Global→zone stream: its Welcome, then batches and proxy view requests. */
  private onDown(m: ReceivedMessage): void {
    if (m.body === 'welcome' && m.welcome && !this.downWelcomed) {
      this.downWelcome(m.welcome);
      return;
    }
    if (m.body === 'batch' && m.batch) this.receiver?.onBatch(m.batch);
    else if (m.body === 'dumpRequest' && m.dumpRequest) this.answerDump(m.dumpRequest);
  }

  /** A message on the zone→Global stream: its Welcome, then acks. */
  private onUp(m: ReceivedMessage): void {
    if (m.body === 'welcome' && m.welcome && !this.upWelcomed) {
      this.upWelcome(m.welcome);
      return;
    }
    if (m.body === 'ack' && m.ack) this.sender?.onAck(m.ack);
  }

  /** Either stream ended, whichever side ended it: the session closes, naming the stream. */
  private onStreamEnd(which: string, e: StreamEnd): void {
    this.close({ code: e.code, details: `${which}: ${statusName(e.code)}: ${e.details}` });
  }

  /** Global's Welcome on the Global→zone stream: the receiver starts after the stored cursor. */
  private downWelcome(w: Welcome): void {
    const { deps, link, stored } = this;
    const stream = this.down as PeerStream;
    const logger = deps.logger;
    link.globalInstanceId = w.instanceId;
    link.start = w.start;
    this.downWelcomed = true;
    const globalLogId = w.clusterId;
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
        this.close({ code: grpc.status.INTERNAL, details: 'applying failed' });
      },
    });
    this.receiver = receiver;
    this.streamingIfWelcomed();
  }

  /** Global's Welcome on the zone→Global stream: the sender starts, then the full proxy status. */
  private upWelcome(w: Welcome): void {
    const { deps } = this;
    const { registry, log, source, status, logger } = deps;
    const stream = this.up as PeerStream;
    const plan = planStart(w.cursor, deps.info.clusterId, log.head());
    const sender = createEntrySender({
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
        this.close({ code: grpc.status.INTERNAL, details: 'sending failed' });
      },
    });
    this.sender = sender;
    const started = sender.start(plan);
    logger?.info(
      { start: plan.start, ...started, cursor: w.cursor, head: log.head() },
      'sync to Global started',
    );
    this.upWelcomed = true;
    const proxies: ProxyStatus[] = [];
    source.each('Dataplane', (item) => {
      if (item.origin === 'local' && item.mesh && status.dataplaneInsight(item.mesh, item.name)) {
        proxies.push(this.proxyStatus(item.mesh, item.name));
      }
    });
    stream.send({ status: { proxies, full: true } });
    this.streamingIfWelcomed();
  }

  /** Both Welcomes came: the link says connected. */
  private streamingIfWelcomed(): void {
    if (!this.downWelcomed || !this.upWelcomed || this.state !== 'handshaking') return;
    this.state = 'streaming';
    const { link, deps } = this;
    link.connected = true;
    link.connectTime = deps.now().toISOString();
    link.lastError = undefined;
    deps.logger?.info({ global: deps.globalAddress, start: link.start }, 'connected to Global');
  }

  /** The status flush timer: what changed since the last flush goes up in one message. */
  private flushStatus(): void {
    this.statusTimer = undefined;
    if (!this.up || this.dirty.size === 0) return;
    const proxies = [...this.dirty.values()].map((p) => this.proxyStatus(p.mesh, p.name));
    this.dirty.clear();
    this.up.send({ status: { proxies, full: false } });
  }

  /** Proxy status of one of the zone's own data planes (empty for one it does not own). */
  private proxyStatus(mesh: string, name: string): ProxyStatus {
    const insight = this.deps.status.dataplaneInsight(mesh, name);
    const own = this.deps.source.get('Dataplane', mesh, name)?.origin === 'local';
    return {
      kind: 'Dataplane',
      mesh,
      name,
      insight: insight && own ? Buffer.from(JSON.stringify(insight)) : Buffer.alloc(0),
    };
  }

  /** Global's request for a proxy view: answered on the same stream, errors by their code. */
  private answerDump(req: DumpRequest): void {
    const { deps } = this;
    const reply = (res: Omit<DumpResponse, 'id'>): void =>
      this.down?.send({ dumpResponse: { id: req.id, ...res } });
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
        if (!known) deps.logger?.error({ err }, 'answering a proxy view request failed');
        reply({
          ...none,
          errorCode: known ? err.code : 'INTERNAL',
          errorTitle: known ? err.title : 'Internal error',
          errorDetails: known ? err.details : `zone "${deps.zone}" failed to answer`,
        });
      },
    );
  }
}
