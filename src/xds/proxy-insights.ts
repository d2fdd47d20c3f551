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
   * Every type's counters changed (an ADS stream keeps them as numbers): `read` gives them, and is
   * called when the insight is published, not per response (a push to many proxies stays cheap).
   */
  update(read: () => StreamCounters): void;
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

/** What a stream's reader gives when its insight is published: its counters and when they last changed. */
export interface StreamCounters {
  byKind: CountersByKind;
  lastUpdateTime: Date;
}

interface Counter {
  sent: number;
  acked: number;
  rejected: number;
}

const wire = (c: Counter) => ({
  responsesSent: String(c.sent),
  responsesAcknowledged: String(c.acked),
  responsesRejected: String(c.rejected),
});

/** Creates the bookkeeping over the status store. */
export function createProxyInsights(deps: {
  status: StatusStore;
  now: () => Date;
  publishMs?: number;
}): ProxyInsights {
  const publishMs = deps.publishMs ?? 250;
  /** `mesh/name` → the renderers of its open and recent subscriptions, oldest first. */
  const proxies = new Map<string, { mesh: string; name: string; subs: Array<() => Subscription> }>();
  const dirty = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  const publishNow = (key: string): void => {
    dirty.delete(key);
    const p = proxies.get(key);
    if (!p) return;
    const previous = deps.status.dataplaneInsight(p.mesh, p.name) ?? {};
    const insight: Insight = { ...previous, subscriptions: p.subs.map((render) => render()) };
    deps.status.setDataplaneInsight(p.mesh, p.name, insight);
  };
  const publishSoon = (key: string): void => {
    dirty.add(key);
    timer ??= setTimeout(() => {
      timer = undefined;
      for (const k of [...dirty]) publishNow(k);
    }, publishMs);
  };

  return {
    open(mesh, name, info) {
      const key = `${mesh}/${name}`;
      const connectTime = deps.now().toISOString();
      let disconnectTime: string | undefined;
      let lastUpdate: Date | string = connectTime;
      /** Reads the stream's counters when rendering, once they changed. */
      let pending: (() => StreamCounters) | undefined;
      const counters = new Map<XdsKind, Counter>(
        XDS_KINDS.map((k) => [k, { sent: 0, acked: 0, rejected: 0 }]),
      );
      const render = (): Subscription => {
        if (pending) {
          const read = pending();
          const byKind = read.byKind;
          lastUpdate = read.lastUpdateTime;
          pending = undefined;
          for (const kind of XDS_KINDS) {
            const c = byKind[kind];
            if (c)
              counters.set(kind, {
                sent: c.responsesSent,
                acked: c.responsesAcknowledged,
                rejected: c.responsesRejected,
              });
          }
        }
        const lastUpdateTime = typeof lastUpdate === 'string' ? lastUpdate : lastUpdate.toISOString();
        const total: Counter = { sent: 0, acked: 0, rejected: 0 };
        const byKind: Record<string, ReturnType<typeof wire>> = {};
        for (const [k, c] of counters) {
          total.sent += c.sent;
          total.acked += c.acked;
          total.rejected += c.rejected;
          byKind[k] = wire(c);
        }
        const sub: Subscription = {
          id: info.id,
          controlPlaneInstanceId: info.controlPlaneInstanceId,
          connectTime,
        };
        if (disconnectTime) sub.disconnectTime = disconnectTime;
        sub.status = { lastUpdateTime, total: wire(total), ...byKind };
        sub.version = {
          meshDp: { version: 'unknown', gitTag: 'unknown', gitCommit: 'unknown', buildDate: 'unknown' },
          proxy: {
            version: info.userAgent?.version || 'unknown',
            build: info.userAgent?.name || 'unknown',
          },
        };
        return sub;
      };
      const entry = proxies.get(key) ?? { mesh, name, subs: [] };
      entry.subs.push(render);
      while (entry.subs.length > PROXY_SUBSCRIPTIONS_KEPT) entry.subs.shift();
      proxies.set(key, entry);
      publishNow(key);
      const count = (kind: XdsKind, field: keyof Counter): void => {
        (counters.get(kind) as Counter)[field]++;
        lastUpdate = deps.now();
        publishSoon(key);
      };
      return {
        id: info.id,
        sent: (kind) => count(kind, 'sent'),
        acked: (kind) => count(kind, 'acked'),
        rejected: (kind) => count(kind, 'rejected'),
        update(read) {
          pending = read;
          publishSoon(key);
        },
        close() {
          if (disconnectTime) return;
          disconnectTime = deps.now().toISOString();
          lastUpdate = disconnectTime;
          publishNow(key);
        },
      };
    },
    close() {
      if (timer) clearTimeout(timer);
      timer = undefined;
      for (const k of [...dirty]) publishNow(k);
    },
  };
}
