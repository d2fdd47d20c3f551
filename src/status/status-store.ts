import { EventEmitter } from 'eventemitter3';

/** A proxy or zone subscription (spec 2.5, 2.12). */
export type Subscription = Record<string, unknown> & {
  id: string;
  connectTime?: string;
  disconnectTime?: string;
};

/** Runtime insight of one proxy or zone. */
export type Insight = Record<string, unknown> & { subscriptions?: Subscription[] };

/**
 * Last-value-wins store of runtime status (architecture: runtime status is not configuration and
 * never enters the audit log). Data plane connections and zone sync fill it in later issues.
 */
export interface StatusStore {
  dataplaneInsight(mesh: string, name: string): Insight | undefined;
  zoneInsight(name: string): Insight | undefined;
  zoneIngressInsight(name: string): Insight | undefined;
  zoneEgressInsight(name: string): Insight | undefined;
  setDataplaneInsight(mesh: string, name: string, insight: Insight | undefined): void;
  setZoneInsight(name: string, insight: Insight | undefined): void;
  onChange(listener: (mesh: string, name?: string) => void): void;
}

/** Whether an insight has a subscription with a connect time and no disconnect time. */
export const connected = (insight: Insight | undefined): boolean =>
  (insight?.subscriptions ?? []).some((s) => s.connectTime !== undefined && s.disconnectTime === undefined);

/** Creates an empty in-memory status store. */
export function createStatusStore(): StatusStore {
  /**
   * Mesh → proxy → insight: no `mesh/name` key is made per read or write (a proxy's insight is
   * published every few hundred ms while its stream's counters change, for thousands of proxies).
   */
  const dataplanes = new Map<string, Map<string, Insight>>();
  const zones = new Map<string, Insight>();
  const ingresses = new Map<string, Insight>();
  const egresses = new Map<string, Insight>();
  const events = new EventEmitter<{ change: [string, string | undefined] }>();
  const set = (map: Map<string, Insight>, key: string, v: Insight | undefined): void => {
    if (v === undefined) map.delete(key);
    else map.set(key, v);
  };
  return {
    dataplaneInsight: (mesh, name) => dataplanes.get(mesh)?.get(name),
    zoneInsight: (name) => zones.get(name),
    zoneIngressInsight: (name) => ingresses.get(name),
    zoneEgressInsight: (name) => egresses.get(name),
    setDataplaneInsight(mesh, name, insight) {
      let byName = dataplanes.get(mesh);
      if (insight !== undefined) {
        if (!byName) dataplanes.set(mesh, (byName = new Map()));
        byName.set(name, insight);
      } else if (byName?.delete(name) && byName.size === 0) dataplanes.delete(mesh);
      events.emit('change', mesh, name);
    },
    setZoneInsight(name, insight) {
      const before = connected(zones.get(name));
      set(zones, name, insight);
      // Sync counters change many times a second; only a zone connecting or leaving re-counts meshes.
      if (connected(insight) !== before) events.emit('change', '', undefined);
    },
    onChange(listener) {
      events.on('change', listener);
    },
  };
}
