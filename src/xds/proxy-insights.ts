/**
 * DataplaneInsight from real ADS streams (decisions §11, Kuma 2.0's DiscoverySubscription): one
 * subscription per stream with its connect and disconnect times, the instance that served it, the
 * client's version (from the node's user agent) and, per xDS type, the responses sent, acknowledged
 * and rejected (counters as strings, spec 2.1); the last two subscriptions are kept, as Kuma's
 * default `subscriptionLimit` for data planes. Online = an open subscription, so overviews, mesh and
 * service insights follow streams; on a zone, Global sees them through the sync of insights.
 *
 * A stream opening or closing is published at once (online/offline must not lag); counters at most
 * every `publishMs`. The rest of a stored insight (mTLS...) is kept.
 */
import type { Insight, StatusStore, Subscription } from '../status/status-store.js';

/** Decisions §11: the subscriptions a proxy's insight keeps (Kuma's default subscriptionLimit: 2). */
export const PROXY_SUBSCRIPTIONS_KEPT = 2;

/** The xDS types the counters are kept for, by their short names. */
export const XDS_KINDS = ['cds', 'eds', 'lds', 'rds'] as const;
export type XdsKind = (typeof XDS_KINDS)[number];

/** What a new stream records. */
export interface ProxySubscriptionInfo {
  id: string;
  controlPlaneInstanceId: string;
  /** The client's name and version (node `user_agent_name`, `user_agent_version`), if it said them. */
  userAgent?: { name?: string; version?: string };
}

/** The bookkeeping of one stream. */
export interface ProxySubscriptionHandle {
  readonly id: string;
  sent(kind: XdsKind): void;
  acked(kind: XdsKind): void;
  rejected(kind: XdsKind): void;
  /**
   * Every type's counters changed (an ADS stream keeps them as numbers): `reader` gives them, and is
   * called when the insight is published, not per response (a push to many proxies stays cheap).
   */
  update(reader: CounterReader): void;
  /** Sets the disconnect time and publishes at once. */
  close(): void;
}

/** Proxy insights fed by streams. */
export interface ProxyInsights {
  open(mesh: string, name: string, info: ProxySubscriptionInfo): ProxySubscriptionHandle;
  /** Publishes what is pending and stops the timer. */
  close(): void;
}

/** The counters of an ADS stream per short type name. */
export type CountersByKind = Partial<
  Record<XdsKind, { responsesSent: number; responsesAcknowledged: number; responsesRejected: number }>
>;

/** Reads a stream's counters (an ADS stream's bookkeeping is its own reader). */
export interface CounterReader {
  counters(): StreamCounters;
}

/** What a stream's reader gives when its insight is published: its counters and when they last changed. */
export interface StreamCounters {
  byKind: CountersByKind;
  /** A Date, or epoch milliseconds (an ADS stream keeps its times as numbers). */
  lastUpdateTime: Date | number;
}

interface Counter {
  sent: number;
  acked: number;
  rejected: number;
}

type WireCounter = { responsesSent: string; responsesAcknowledged: string; responsesRejected: string };

/** Distinct counters kept for sharing; past it the table starts again. */
const WIRE_MAX = 4096;
const WIRES = new Map<number | string, WireCounter>();

/**
 * Counters as a subscription's status shows them: one frozen object per distinct triple, shared
 * by every status that shows it (the streams of a mesh mostly count alike: 10,000 statuses of
 * five counters each would otherwise hold 50,000 objects and their strings).
 */
function wire(sent: number, acked: number, rejected: number): WireCounter {
  // Small counters (nearly all) as one number, which hashes without making a string.
  const key: number | string =
    sent < 1024 && acked < 1024 && rejected < 1024
      ? sent * 1048576 + acked * 1024 + rejected
      : `${sent},${acked},${rejected}`;
  let w = WIRES.get(key);
  if (!w) {
    if (WIRES.size >= WIRE_MAX) WIRES.clear();
    w = Object.freeze({
      responsesSent: String(sent),
      responsesAcknowledged: String(acked),
      responsesRejected: String(rejected),
    });
    WIRES.set(key, w);
  }
  return w;
}

/** Sums of counters, as `statusOf` adds them up. */
interface Totals {
  sent: number;
  acked: number;
  rejected: number;
}

/** One kind's counters: counted in `byKind`, else kept from `before`; added to `totals`. */
function kindStatus(
  kind: XdsKind,
  byKind: CountersByKind,
  before: Record<string, unknown> | undefined,
  totals: Totals,
): WireCounter {
  const c = byKind[kind];
  const kept = c ? undefined : (before?.[kind] as WireCounter | undefined);
  const s = c ? c.responsesSent : Number(kept?.responsesSent ?? 0);
  const a = c ? c.responsesAcknowledged : Number(kept?.responsesAcknowledged ?? 0);
  const r = c ? c.responsesRejected : Number(kept?.responsesRejected ?? 0);
  totals.sent += s;
  totals.acked += a;
  totals.rejected += r;
  return kept ?? wire(s, a, r);
}

/**
 * `status` of a subscription: the time of the last change, the counters in total and per kind; a
 * kind `byKind` does not count keeps its counters of `before` (the status rendered last). Made as
 * one literal (its fields in the order of `XDS_KINDS`): an object given fields one by one keeps
 * them in a separate array.
 */
function statusOf(
  lastUpdateTime: string,
  byKind: CountersByKind,
  before: Record<string, unknown> | undefined,
): Record<string, unknown> {
  const totals: Totals = { sent: 0, acked: 0, rejected: 0 };
  const cds = kindStatus('cds', byKind, before, totals);
  const eds = kindStatus('eds', byKind, before, totals);
  const lds = kindStatus('lds', byKind, before, totals);
  const rds = kindStatus('rds', byKind, before, totals);
  return { lastUpdateTime, total: wire(totals.sent, totals.acked, totals.rejected), cds, eds, lds, rds };
}

const UNKNOWN = 'unknown';
const MESH_DP_VERSION = Object.freeze({
  version: UNKNOWN,
  gitTag: UNKNOWN,
  gitCommit: UNKNOWN,
  buildDate: UNKNOWN,
});

/** Distinct client versions kept for sharing; past it the table starts again. */
const VERSIONS_MAX = 1024;
const VERSIONS = new Map<string, Readonly<Record<string, unknown>>>();

/**
 * The `version` of a subscription: the same object for every stream of one client version (a
 * mesh of one client build shares one), never changed.
 */
function versionOf(userAgent: ProxySubscriptionInfo['userAgent']): Readonly<Record<string, unknown>> {
  const version = userAgent?.version || UNKNOWN;
  const build = userAgent?.name || UNKNOWN;
  const key = JSON.stringify([version, build]);
  let v = VERSIONS.get(key);
  if (!v) {
    if (VERSIONS.size >= VERSIONS_MAX) VERSIONS.clear();
    v = Object.freeze({ meshDp: MESH_DP_VERSION, proxy: Object.freeze({ version, build }) });
    VERSIONS.set(key, v);
  }
  return v;
}

/** The last time `isoTime` wrote, as epoch milliseconds and as text. */
let isoMs = NaN;
let isoText = '';

/**
 * A time as ISO 8601 text. The streams published in one tick mostly changed within the same few
 * milliseconds: the last text made is handed out again for the same millisecond.
 */
function isoTime(at: Date | number): string {
  const ms = typeof at === 'number' ? at : at.getTime();
  if (ms !== isoMs) {
    isoText = new Date(ms).toISOString();
    isoMs = ms;
  }
  return isoText;
}

/** A proxy's open and recent subscriptions, oldest first. */
interface ProxyEntry {
  mesh: string;
  name: string;
  /**
   * Replaced, never grown in place (an array grown by `push` or a spread reserves room for 17,
   * `slice` makes one of the exact size).
   */
  subs: readonly StreamSubscription[];
  /** Waiting for the next publish (in the queue). */
  dirty: boolean;
}

/** What the subscriptions of one {@link ProxyInsights} share. */
interface Publisher {
  now: () => Date;
  publishNow(entry: ProxyEntry): void;
  publishSoon(entry: ProxyEntry): void;
}

/**
 * The bookkeeping of one stream: its times and, once something changed, how to read its counters.
 * It keeps the `status` it last rendered (the published insight holds the same object) and renders
 * it again only after a change.
 */
class StreamSubscription implements ProxySubscriptionHandle {
  private disconnectTime: string | undefined = undefined;
  private lastUpdate: Date | number | string;
  /** Reads the stream's counters when rendering, once they changed. */
  private pending: CounterReader | undefined = undefined;
  /** Counters kept here when they are counted one by one (`sent`, `acked`, `rejected`). */
  private counters: Map<XdsKind, Counter> | undefined = undefined;
  /** The status last rendered (the published insight holds it), and whether it is out of date. */
  private status: Record<string, unknown> | undefined = undefined;
  private stale = true;
  private readonly version: Readonly<Record<string, unknown>>;
  readonly id: string;
  private readonly controlPlaneInstanceId: string;

  constructor(
    private readonly publisher: Publisher,
    private readonly entry: ProxyEntry,
    info: ProxySubscriptionInfo,
    private readonly connectTime: string,
  ) {
    // The info's fields, not the object (one object fewer per stream).
    this.id = info.id;
    this.controlPlaneInstanceId = info.controlPlaneInstanceId;
    this.lastUpdate = connectTime;
    this.version = versionOf(info.userAgent);
  }

  sent(kind: XdsKind): void {
    this.count(kind, 'sent');
  }

  acked(kind: XdsKind): void {
    this.count(kind, 'acked');
  }

  rejected(kind: XdsKind): void {
    this.count(kind, 'rejected');
  }

  update(reader: CounterReader): void {
    this.pending = reader;
    this.stale = true;
    this.publisher.publishSoon(this.entry);
  }

  close(): void {
    if (this.disconnectTime) return;
    this.disconnectTime = this.publisher.now().toISOString();
    this.lastUpdate = this.disconnectTime;
    this.stale = true;
    this.publisher.publishNow(this.entry);
  }

  render(): Subscription {
    if (this.stale || !this.status) {
      this.status = this.renderStatus(this.status);
      this.stale = false;
    }
    const { id, controlPlaneInstanceId, connectTime, disconnectTime, status, version } = this;
    // Whole literals, in the order the insight shows: fields added one by one take an array more.
    return disconnectTime
      ? { id, controlPlaneInstanceId, connectTime, disconnectTime, status, version }
      : { id, controlPlaneInstanceId, connectTime, status, version };
  }

  private renderStatus(before: Record<string, unknown> | undefined): Record<string, unknown> {
    let byKind: CountersByKind = {};
    if (this.pending) {
      const read = this.pending.counters();
      this.pending = undefined;
      this.lastUpdate = read.lastUpdateTime;
      byKind = read.byKind;
      // Counted one by one too: the read replaces the counters of the kinds it has.
      for (const kind of this.counters ? XDS_KINDS : []) {
        const c = byKind[kind];
        if (c)
          this.counters?.set(kind, {
            sent: c.responsesSent,
            acked: c.responsesAcknowledged,
            rejected: c.responsesRejected,
          });
      }
    }
    if (this.counters) byKind = this.countedByKind();
    const lastUpdateTime = typeof this.lastUpdate === 'string' ? this.lastUpdate : isoTime(this.lastUpdate);
    // Kept as text (a Date costs about 100 bytes of each of 10,000 subscriptions).
    this.lastUpdate = lastUpdateTime;
    return statusOf(lastUpdateTime, byKind, before);
  }

  private countedByKind(): CountersByKind {
    const out: CountersByKind = {};
    for (const [kind, c] of this.counters ?? []) {
      out[kind] = { responsesSent: c.sent, responsesAcknowledged: c.acked, responsesRejected: c.rejected };
    }
    return out;
  }

  private count(kind: XdsKind, field: keyof Counter): void {
    // From the counters rendered last (zero before the first render).
    this.counters ??= new Map(
      XDS_KINDS.map((k) => {
        const w = this.status?.[k] as WireCounter | undefined;
        const n = (v: string | undefined) => Number(v ?? 0);
        return [
          k,
          {
            sent: n(w?.responsesSent),
            acked: n(w?.responsesAcknowledged),
            rejected: n(w?.responsesRejected),
          },
        ];
      }),
    );
    let c = this.counters.get(kind);
    if (!c) this.counters.set(kind, (c = { sent: 0, acked: 0, rejected: 0 }));
    c[field]++;
    this.lastUpdate = this.publisher.now();
    this.stale = true;
    this.publisher.publishSoon(this.entry);
  }
}

/** The longest a tick of publishing holds the event loop before it lets I/O run. */
const PUBLISH_SLICE_MS = 5;

/** Creates the bookkeeping over the status store. */
export function createProxyInsights(deps: {
  status: StatusStore;
  now: () => Date;
  publishMs?: number;
}): ProxyInsights {
  const publishMs = deps.publishMs ?? 250;
  /** Mesh → name → its open and recent subscriptions (no `mesh/name` key made per stream). */
  const proxies = new Map<string, Map<string, ProxyEntry>>();
  /**
   * The entries to publish at the next tick (each once: its `dirty` flag says it is queued). A
   * push to 10,000 streams marks each twice (the response, the ACK): a flag and a list cost less
   * than a Set of 10,000 that grows and is emptied every tick.
   */
  let queue: ProxyEntry[] = [];
  let timer: NodeJS.Timeout | undefined;
  /** The tick's entries still to publish, in slices (the next tick is set once they are done). */
  let batch: ProxyEntry[] = [];
  let at = 0;
  const schedule = (): void => {
    timer ??= setTimeout(() => {
      timer = undefined;
      batch = queue;
      queue = [];
      at = 0;
      publishSlice();
    }, publishMs);
  };
  /**
   * Publishes the tick's entries for about {@link PUBLISH_SLICE_MS}, then lets I/O run: a tick that
   * publishes 10,000 entries (a push to every proxy) would hold the event loop for 100 ms and more
   * while their responses are still being written.
   */
  const publishSlice = (): void => {
    const until = performance.now() + PUBLISH_SLICE_MS;
    while (at < batch.length) {
      const entry = batch[at++] as ProxyEntry;
      if (entry.dirty) publisher.publishNow(entry);
      if (at % 64 === 0 && performance.now() >= until) break;
    }
    if (at < batch.length) return void setImmediate(publishSlice);
    batch = [];
    at = 0;
    if (queue.length > 0) schedule();
  };
  /** Publishes every entry marked (at shutdown). */
  const publishAll = (): void => {
    for (const entry of [...batch.slice(at), ...queue]) if (entry.dirty) publisher.publishNow(entry);
    batch = [];
    at = 0;
    queue = [];
  };

  const publisher: Publisher = {
    now: deps.now,
    publishNow(p) {
      p.dirty = false;
      const previous = deps.status.dataplaneInsight(p.mesh, p.name) ?? {};
      const insight: Insight = { ...previous, subscriptions: p.subs.map((sub) => sub.render()) };
      deps.status.setDataplaneInsight(p.mesh, p.name, insight);
    },
    publishSoon(p) {
      if (p.dirty) return;
      p.dirty = true;
      queue.push(p);
      // While a tick is published in slices, the next is set when it is done.
      if (batch.length === 0) schedule();
    },
  };

  return {
    open(mesh, name, info) {
      let byName = proxies.get(mesh);
      if (!byName) proxies.set(mesh, (byName = new Map()));
      let entry = byName.get(name);
      if (!entry) byName.set(name, (entry = { mesh, name, subs: [], dirty: false }));
      const sub = new StreamSubscription(publisher, entry, info, deps.now().toISOString());
      entry.subs = [...entry.subs, sub].slice(-PROXY_SUBSCRIPTIONS_KEPT);
      publisher.publishNow(entry);
      return sub;
    },
    close() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      publishAll();
    },
  };
}
