import type { Rejection as WireRejection } from './sync-protocol.js';
import type { Insight, StatusStore, Subscription } from '../status/status-store.js';
import type { WireVersion } from './sync-protocol.js';

/** Decisions §6: subscriptions kept per zone. */
export const ZONE_SUBSCRIPTIONS_KEPT = 10;

interface Counter {
  sent: number;
  acked: number;
  rejected: number;
}

/** Counters of one direction, per kind. */
class Counters {
  readonly byKind = new Map<string, Counter>();

  private of(kind: string): Counter {
    let c = this.byKind.get(kind);
    if (!c) this.byKind.set(kind, (c = { sent: 0, acked: 0, rejected: 0 }));
    return c;
  }

  sent(kinds: ReadonlyMap<string, number>): void {
    for (const [k, n] of kinds) this.of(k).sent += n;
  }

  acked(kinds: ReadonlyMap<string, number>, rejected: ReadonlyArray<{ kind: string }>): void {
    const refused = new Map<string, number>();
    for (const r of rejected) refused.set(r.kind, (refused.get(r.kind) ?? 0) + 1);
    for (const [k, n] of kinds) this.of(k).acked += n - (refused.get(k) ?? 0);
    for (const [k, n] of refused) this.of(k).rejected += n;
  }

  /** Spec 2.1, 2.12: counters are strings holding integers. */
  toWire(): { total: Record<string, string>; stat: Record<string, Record<string, string>> } {
    const wire = (c: Counter) => ({
      responsesSent: String(c.sent),
      responsesAcknowledged: String(c.acked),
      responsesRejected: String(c.rejected),
    });
    const total: Counter = { sent: 0, acked: 0, rejected: 0 };
    const stat: Record<string, Record<string, string>> = {};
    for (const k of [...this.byKind.keys()].sort()) {
      const c = this.byKind.get(k) as Counter;
      total.sent += c.sent;
      total.acked += c.acked;
      total.rejected += c.rejected;
      stat[k] = wire(c);
    }
    return { total: wire(total), stat };
  }
}

/** How one direction of a session started. */
interface Start {
  start: 'resume' | 'snapshot' | 'pending';
  fromRevision: number;
  snapshotResources: number;
}

/** What a new subscription records about the zone's connection. */
export interface SubscriptionInfo {
  id: string;
  globalInstanceId: string;
  zoneInstanceId: string;
  config: string;
  version: WireVersion | null;
  url: string;
}

/** The bookkeeping of one session: its subscription in the zone's insight. */
export interface SubscriptionHandle {
  readonly id: string;
  downStart(start: 'resume' | 'snapshot', fromRevision: number, snapshotResources: number): void;
  downSent(kinds: ReadonlyMap<string, number>): void;
  downAcked(kinds: ReadonlyMap<string, number>, rejected: readonly WireRejection[], revision: number): void;
  upStart(start: 'resume' | 'snapshot', fromRevision: number): void;
  upSnapshotResources(n: number): void;
  upApplied(
    kinds: ReadonlyMap<string, number>,
    rejected: ReadonlyArray<{ kind: string }>,
    revision: number,
  ): void;
  /** Sets the disconnect time and publishes at once. */
  close(): void;
}

/** Zone insights on Global (spec 2.12, decisions §6): one subscription per session, the last 10 kept. */
export interface ZoneInsights {
  open(zone: string, info: SubscriptionInfo): SubscriptionHandle;
  /** Drops a deleted zone's insight. */
  forget(zone: string): void;
  close(): void;
}

/** Creates the bookkeeping; counters are published to the status store at most every `publishMs`. */
export function createZoneInsights(deps: {
  status: StatusStore;
  now: () => Date;
  publishMs?: number;
}): ZoneInsights {
  const publishMs = deps.publishMs ?? 250;
  const zones = new Map<string, Array<() => Subscription>>();
  const dirty = new Set<string>();
  let timer: NodeJS.Timeout | undefined;

  const publishNow = (zone: string): void => {
    dirty.delete(zone);
    const subs = zones.get(zone);
    if (!subs) return;
    const insight: Insight = { subscriptions: subs.map((render) => render()) };
    deps.status.setZoneInsight(zone, insight);
  };
  const publishSoon = (zone: string): void => {
    dirty.add(zone);
    timer ??= setTimeout(() => {
      timer = undefined;
      for (const z of [...dirty]) publishNow(z);
    }, publishMs);
  };

  return {
    open(zone, info) {
      const connectTime = deps.now().toISOString();
      let disconnectTime: string | undefined;
      let lastUpdateTime = connectTime;
      const down = new Counters();
      const up = new Counters();
      const downStart: Start = { start: 'pending', fromRevision: 0, snapshotResources: 0 };
      const upStart: Start = { start: 'pending', fromRevision: 0, snapshotResources: 0 };
      let ackedRevision = 0;
      let appliedRevision = 0;
      const v = info.version;
      const render = (): Subscription => {
        const d = down.toWire();
        const u = up.toWire();
        const sub: Subscription = {
          id: info.id,
          globalInstanceId: info.globalInstanceId,
          zoneInstanceId: info.zoneInstanceId,
          connectTime,
        };
        if (disconnectTime) sub.disconnectTime = disconnectTime;
        Object.assign(sub, {
          url: info.url,
          config: info.config,
          version: {
            meshCp: {
              version: v?.version ?? 'unknown',
              gitTag: v?.gitTag ?? 'unknown',
              gitCommit: v?.gitCommit ?? 'unknown',
              buildDate: v?.buildDate ?? 'unknown',
            },
          },
          // Global → zone, as in spec 2.12 (plus `responsesRejected`).
          status: { lastUpdateTime, total: d.total, stat: d.stat },
          sync: {
            globalToZone: { ...downStart, ackedRevision },
            zoneToGlobal: { ...upStart, appliedRevision, total: u.total, stat: u.stat },
          },
        });
        return sub;
      };
      const list = zones.get(zone) ?? [];
      list.push(render);
      while (list.length > ZONE_SUBSCRIPTIONS_KEPT) list.shift();
      zones.set(zone, list);
      publishNow(zone);
      // Counters are published at most every `publishMs`; how a stream started, at once.
      const touched = (now = false): void => {
        lastUpdateTime = deps.now().toISOString();
        if (now) publishNow(zone);
        else publishSoon(zone);
      };
      return {
        id: info.id,
        downStart(start, fromRevision, snapshotResources) {
          Object.assign(downStart, { start, fromRevision, snapshotResources });
          touched(true);
        },
        downSent(kinds) {
          down.sent(kinds);
          touched();
        },
        downAcked(kinds, rejected, revision) {
          down.acked(kinds, rejected);
          ackedRevision = Math.max(ackedRevision, revision);
          touched();
        },
        upStart(start, fromRevision) {
          Object.assign(upStart, { start, fromRevision });
          touched(true);
        },
        upSnapshotResources(n) {
          const first = upStart.start !== 'snapshot';
          upStart.start = 'snapshot';
          upStart.snapshotResources += n;
          touched(first);
        },
        upApplied(kinds, rejected, revision) {
          up.sent(kinds);
          up.acked(kinds, rejected);
          appliedRevision = Math.max(appliedRevision, revision);
          touched();
        },
        close() {
          disconnectTime ??= deps.now().toISOString();
          publishNow(zone);
        },
      };
    },
    forget(zone) {
      zones.delete(zone);
      dirty.delete(zone);
      deps.status.setZoneInsight(zone, undefined);
    },
    close() {
      if (timer) clearTimeout(timer);
      timer = undefined;
    },
  };
}
