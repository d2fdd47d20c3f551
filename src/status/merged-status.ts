import { EventEmitter } from 'eventemitter3';
import { dataplaneStatusKey, splitDataplaneStatusKey, statusRowKey } from '../resources/keys.js';

import type { Insight, StatusStore, Subscription } from './status-store.js';

/** What a status row is about: a zone (key: its name) or a data plane proxy (key: `mesh/name`). */
export type StatusKind = 'zone' | 'dataplane';

/** One instance's insight of one zone or proxy, as kept in a store shared by several instances. */
export interface StatusRow {
  kind: StatusKind;
  key: string;
  instance: string;
  /** The insight as JSON; null once the instance dropped it. */
  value: string | null;
}

/** The runtime status of several Global instances on one log: this one's own, merged with the others'. */
export interface MergedStatus {
  /** Reads merge every instance's insights; writes set this instance's own. */
  readonly store: StatusStore;
  /** This instance's insights changed since the last call, as rows to publish. */
  takeChanged(): StatusRow[];
  /** Rows read from the shared store (other instances'); rows of this instance are ignored. */
  applyRemote(rows: readonly StatusRow[]): void;
  /** Whether another instance has an open subscription of `zone` (a zone connected there). */
  zoneOpenElsewhere(zone: string): Subscription | undefined;
}

/** Subscriptions kept per merged insight: decisions §6 for zones, §11 for proxies. */
const KEPT: Record<StatusKind, number> = { zone: 10, dataplane: 2 };

const isOpen = (sub: Subscription): boolean =>
  sub.connectTime !== undefined && sub.disconnectTime === undefined;

/**
 * One insight from several instances' parts: every subscription once (an open copy wins over a
 * closed one: the instance that holds the connection now knows best), oldest first, the last
 * `kept`; the other fields from the part whose newest subscription connected last.
 */
export function mergeInsights(parts: readonly Insight[], kept: number): Insight | undefined {
  if (parts.length <= 1) return parts[0];
  const byId = new Map<string, Subscription>();
  let base = parts[0];
  let baseLatest = '';
  for (const part of parts) {
    for (const sub of part.subscriptions ?? []) {
      const known = byId.get(sub.id);
      if (known === undefined || !isOpen(known)) byId.set(sub.id, sub);
      if ((sub.connectTime ?? '') > baseLatest) {
        baseLatest = sub.connectTime ?? '';
        base = part;
      }
    }
  }
  const subscriptions = [...byId.values()].sort((a, b) =>
    (a.connectTime ?? '').localeCompare(b.connectTime ?? ''),
  );
  return { ...base, subscriptions: subscriptions.slice(-kept) };
}

/**
 * Wraps this instance's status store: what it sets is its own part (published as rows by the
 * caller), what it reads is merged with the parts other instances published.
 */
export function createMergedStatus(own: StatusStore, instanceId: string): MergedStatus {
  /** `statusRowKey` → instance → insight, of the other instances. */
  const remote = new Map<string, Map<string, { json: string; insight: Insight }>>();
  const changed = new Map<string, { kind: StatusKind; key: string }>();
  const events = new EventEmitter<{ change: [string, string | undefined] }>();
  own.onChange((mesh, name) => events.emit('change', mesh, name));

  const partsOf = (kind: StatusKind, key: string, mine: Insight | undefined): Insight[] => {
    const parts = [...(remote.get(statusRowKey(kind, key))?.values() ?? [])].map((r) => r.insight);
    return mine === undefined ? parts : [mine, ...parts];
  };
  const merged = (kind: StatusKind, key: string, mine: Insight | undefined): Insight | undefined => {
    const parts = partsOf(kind, key, mine);
    return parts.length === 1 ? parts[0] : mergeInsights(parts, KEPT[kind]);
  };
  const mark = (kind: StatusKind, key: string): void => {
    changed.set(statusRowKey(kind, key), { kind, key });
  };

  const store: StatusStore = {
    dataplaneInsight: (mesh, name) =>
      merged('dataplane', dataplaneStatusKey(mesh, name), own.dataplaneInsight(mesh, name)),
    zoneInsight: (name) => merged('zone', name, own.zoneInsight(name)),
    zoneIngressInsight: (name) => own.zoneIngressInsight(name),
    zoneEgressInsight: (name) => own.zoneEgressInsight(name),
    setDataplaneInsight(mesh, name, insight) {
      mark('dataplane', dataplaneStatusKey(mesh, name));
      own.setDataplaneInsight(mesh, name, insight);
    },
    setZoneInsight(name, insight) {
      mark('zone', name);
      own.setZoneInsight(name, insight);
    },
    onChange(listener) {
      events.on('change', listener);
    },
  };

  return {
    store,
    takeChanged() {
      const rows: StatusRow[] = [];
      for (const { kind, key } of changed.values()) {
        let insight: Insight | undefined;
        if (kind === 'zone') insight = own.zoneInsight(key);
        else {
          const [mesh, name] = splitDataplaneStatusKey(key);
          insight = own.dataplaneInsight(mesh, name);
        }
        rows.push({
          kind,
          key,
          instance: instanceId,
          value: insight === undefined ? null : JSON.stringify(insight),
        });
      }
      changed.clear();
      return rows;
    },
    applyRemote(rows) {
      for (const row of rows) {
        if (row.instance === instanceId) continue;
        const id = statusRowKey(row.kind, row.key);
        let parts = remote.get(id);
        const known = parts?.get(row.instance);
        if (known?.json === row.value || (known === undefined && row.value === null)) continue;
        if (row.value === null) parts?.delete(row.instance);
        else {
          if (parts === undefined) remote.set(id, (parts = new Map()));
          parts.set(row.instance, { json: row.value, insight: JSON.parse(row.value) as Insight });
        }
        if (parts?.size === 0) remote.delete(id);
        if (row.kind === 'zone') events.emit('change', '', undefined);
        else {
          const [mesh, name] = splitDataplaneStatusKey(row.key);
          events.emit('change', mesh, name);
        }
      }
    },
    zoneOpenElsewhere(zone) {
      for (const { insight } of remote.get(statusRowKey('zone', zone))?.values() ?? []) {
        const open = (insight.subscriptions ?? []).find(isOpen);
        if (open) return open;
      }
      return undefined;
    },
  };
}
