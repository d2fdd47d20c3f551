import * as grpc from '@grpc/grpc-js';
import { rulesOnGlobal } from '../app/decide-sync.js';
import type { LogEntry } from '../events/types.js';
import type { DumpRequests } from './dump-requests.js';
import type { EntryReceiver } from './entry-receiver.js';
import { createEntryReceiver, parseCursor } from './entry-receiver.js';
import type { EntrySender } from './entry-sender.js';
import { createEntrySender, planStart } from './entry-sender.js';
import type { GlobalSyncDeps } from './global-sync-deps.js';
import type { IngressServices } from './ingress-services.js';
import type { PeerStream } from './peer-stream.js';
import type { Hello, ReceivedMessage, StatusUpdate } from './sync-protocol.js';
import type { SubscriptionHandle } from './zone-insights.js';

/** Meta key of what Global applied of a zone's log. */
export const upCursorKey = (zone: string): string => `sync.up.${zone}`;

/** What Global's sync server shares with each {@link GlobalSession}. */
export interface GlobalSessionServer {
  deps: GlobalSyncDeps;
  ingress: IngressServices;
  dumps: DumpRequests;
  /** Proxy status from the zone, kept as runtime status. */
  applyStatus(zone: string, update: StatusUpdate): void;
  /** The session ended: the server forgets it, unless a newer session of the zone replaced it. */
  forget(session: GlobalSession): void;
  /** The zone is gone: the status of its proxies says offline. */
  proxiesOffline(zone: string): void;
}

/** Where a {@link GlobalSession} is; see the class comment for what moves it. */
export type GlobalSessionState = 'attaching' | 'active' | 'ended';

/** A stream's messages once Global's Welcome is sent on it; false for one the stream does not carry. */
export type SessionMessages = (m: ReceivedMessage) => boolean;

/**
 * Global's end of one session of a zone: the Global→zone stream (`down`, entries out, acks and
 * proxy views in) and the zone→Global stream (`up`, batches and proxy status in, acks out).
 *
 * States and what moves them:
 * - `attaching`: made by the first Hello of the session (a new session id); each stream attaches
 *   with its Welcome: `down` starts the sender after the zone's cursor, `up` reads Global's cursor
 *   of the zone and starts the receiver. Both attached → `active` (logged "zone connected").
 * - `active`: the zone is connected; proxy views can be asked of it.
 * - `ended`, from any state (`end`): a stream ended, sending or applying failed, a newer session of
 *   the zone replaced it, the zone was disabled, or Global is stopping. The sender and receiver
 *   stop, both streams close, the subscription closes, open proxy view requests fail and the
 *   zone's proxies are shown offline.
 *
 * Events, each handled in one method: `attachDown`, `attachUp`, a message on either stream
 * (`onDown`, `onUp`), an ack or a batch applied (the sender's and receiver's events), `end`.
 */
export class GlobalSession {
  private state: GlobalSessionState = 'attaching';
  private down?: { stream: PeerStream; sender: EntrySender };
  private up?: { stream: PeerStream; receiver: EntryReceiver };

  constructor(
    readonly zone: string,
    readonly id: string,
    /** Where the zone's stream comes from (`grpcs://host:port`). */
    readonly url: string,
    private readonly sub: SubscriptionHandle,
    private readonly server: GlobalSessionServer,
  ) {}

  /** Whether both streams are attached and the session has not ended. */
  get active(): boolean {
    return this.state === 'active';
  }

  /** The Global→zone stream, while the session is active and the stream open. */
  openDownStream(): PeerStream | undefined {
    const down = this.down;
    return this.state === 'active' && down && !down.stream.ended ? down.stream : undefined;
  }

  /** Global → zone: resume after the zone's cursor, or a snapshot; acks come back. */
  attachDown(stream: PeerStream, hello: Hello): SessionMessages {
    const { deps } = this.server;
    const { log, source, logger } = deps;
    const plan = planStart(hello.cursor, deps.info.clusterId, log.head());
    const sender = createEntrySender({
      log,
      source,
      selectEntry: this.goesDown(),
      selectItem: (desc, item) =>
        desc.sync === 'down'
          ? !desc.keepOnGlobal?.test(item.name)
          : desc.crossZone === true && item.origin !== this.zone && item.origin !== 'local',
      send: (m) => stream.send(m),
      limits: deps.limits,
      events: {
        sent: (kinds) => this.sub.downSent(kinds),
        acked: (kinds, rejected, revision) => {
          this.sub.downAcked(kinds, rejected, revision);
          for (const r of rejected) {
            logger?.warn({ zone: this.zone, ...r }, 'the zone rejected an entry');
          }
        },
      },
      onError: (err) => {
        logger?.error({ err, zone: this.zone }, 'sending to the zone failed');
        this.end('sending failed');
      },
    });
    this.down = { stream, sender };
    const started = sender.start(plan);
    stream.send({
      welcome: { ...this.welcomeBase(), cursor: null, start: plan.start, fromRevision: started.fromRevision },
    });
    this.sub.downStart(plan.start, started.fromRevision, started.snapshotResources);
    logger?.info({ zone: this.zone, ...started, start: plan.start }, 'sync to zone started');
    this.activeIfAttached();
    return (m) => this.onDown(sender, m);
  }

  /**
   * Zone → Global: tell the zone what was applied; apply its batches and its proxies' status.
   * Undefined when the stream or the session ended while the cursor was read.
   */
  async attachUp(stream: PeerStream, hello: Hello): Promise<SessionMessages | undefined> {
    const { deps, ingress } = this.server;
    const { logger } = deps;
    const stored = parseCursor(await deps.log.getMeta(upCursorKey(this.zone)));
    // The write path's state: the Zone the other stream of the session just created may not be durable yet.
    const zoneCreated = deps.commands.state.get('Zone', undefined, this.zone)?.resource.creationTime;
    // A cursor written before the zone was deleted and made again says nothing about what is here now.
    const cursor =
      stored && stored.zoneCreated === zoneCreated && stored.logId === hello.clusterId ? stored : undefined;
    if (stream.ended || this.state === 'ended') return undefined;
    const receiver = createEntryReceiver({
      applier: deps.applier,
      rules: rulesOnGlobal(this.zone, ingress.adjust(this.zone)),
      actor: { name: `zone/${this.zone}`, groups: ['mesh-system:zone'], address: this.url },
      cursorKey: upCursorKey(this.zone),
      cursorValue: (revision) => JSON.stringify({ logId: hello.clusterId, revision, zoneCreated }),
      cursor: cursor?.revision ?? 0,
      send: (m) => stream.send(m),
      pause: () => stream.pause(),
      resume: () => stream.resume(),
      events: {
        applied: (batch, kinds, result) => {
          if (batch.snapshot !== 'NONE') this.sub.upSnapshotResources(batch.entries.length);
          this.sub.upApplied(kinds, result.rejected, batch.toRevision);
          if (result.removed > 0) {
            logger?.info({ zone: this.zone, removed: result.removed }, 'removed what the zone no longer has');
          }
          for (const r of result.rejected)
            logger?.warn({ zone: this.zone, ...r }, 'rejected an entry from the zone');
        },
      },
      onError: (err) => {
        logger?.error({ err, zone: this.zone }, 'applying what the zone sent failed');
        this.end('applying failed');
      },
    });
    this.up = { stream, receiver };
    stream.send({
      welcome: {
        ...this.welcomeBase(),
        cursor: cursor ? { logId: cursor.logId, revision: cursor.revision } : null,
        start: '',
        fromRevision: 0,
      },
    });
    this.sub.upStart(cursor ? 'resume' : 'snapshot', cursor?.revision ?? 0);
    this.activeIfAttached();
    return (m) => this.onUp(receiver, m);
  }

  /** Ends the session (idempotent), with the reason the zone insight and the log line give. */
  end(reason: string): void {
    if (this.state === 'ended') return;
    const wasActive = this.state === 'active';
    this.state = 'ended';
    const { server } = this;
    server.forget(this);
    this.down?.sender.stop();
    this.up?.receiver.stop();
    this.down?.stream.close({ code: grpc.status.UNAVAILABLE, details: reason });
    this.up?.stream.close({ code: grpc.status.UNAVAILABLE, details: reason });
    this.sub.close();
    server.dumps.dropZone(this.zone, reason);
    server.proxiesOffline(this.zone);
    if (wasActive)
      server.deps.logger?.info({ zone: this.zone, session: this.id, reason }, 'zone disconnected');
  }

  /** A message on the Global→zone stream: an ack of what `sender` sent, or a proxy view. */
  private onDown(sender: EntrySender, m: ReceivedMessage): boolean {
    if (m.body === 'ack' && m.ack) sender.onAck(m.ack);
    else if (m.body === 'dumpResponse' && m.dumpResponse)
      this.server.dumps.answered(this.zone, m.dumpResponse);
    else return false;
    return true;
  }

  /** A message on the zone→Global stream: a batch for `receiver`, or proxy status. */
  private onUp(receiver: EntryReceiver, m: ReceivedMessage): boolean {
    if (m.body === 'batch' && m.batch) receiver.onBatch(m.batch);
    else if (m.body === 'status' && m.status) this.server.applyStatus(this.zone, m.status);
    else return false;
    return true;
  }

  /** Both streams attached: the zone is connected. */
  private activeIfAttached(): void {
    if (this.state !== 'attaching' || !this.down || !this.up) return;
    this.state = 'active';
    this.server.deps.logger?.info({ zone: this.zone, session: this.id, url: this.url }, 'zone connected');
  }

  private welcomeBase() {
    const { info } = this.server.deps;
    return { instanceId: info.instanceId, clusterId: info.clusterId, version: info.version };
  }

  /** Entries of the log that go to this zone. */
  private goesDown(): (e: LogEntry) => boolean {
    const { registry } = this.server.deps;
    const zone = this.zone;
    return (e: LogEntry) => {
      const desc = registry.find(e.kind);
      if (!desc) return false;
      if (desc.sync === 'down') return !desc.keepOnGlobal?.test(e.name);
      // Another zone's ingress (its origin is that zone; deletes by a zone delete are local).
      return desc.crossZone === true && e.origin !== zone;
    };
  }
}
