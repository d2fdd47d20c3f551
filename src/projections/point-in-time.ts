import type { Registry } from '../resources/registry.js';
import type { DerivedReader } from './derived-views.js';
import { createDerivedViews } from './derived-views.js';
import { createMeshSummaries } from './mesh-summaries.js';
import type { ResourceViews } from './resource-views.js';
import { createResourceViews } from './resource-views.js';
import type { LoadResult, LogSource, SnapshotSource } from './snapshot.js';
import { loadViews, trackSnapshotSource } from './snapshot.js';
import type { StatusReader } from './status-reader.js';

/**
 * The projections as they were at one revision (decisions §8: point-in-time reads). Runtime status
 * is not in the log, so the past has none: overviews show no subscriptions and every proxy offline.
 */
export interface PastState {
  revision: number;
  /** Time of the entry at `revision`; GlobalInsights at R is "created" then. */
  time: string;
  views: ResourceViews;
  derived: Record<string, DerivedReader>;
  status: StatusReader;
  load: LoadResult;
  /** Captures this state as a snapshot (`mesh-cp log snapshot`). */
  source: SnapshotSource;
}

/** Builds past states and keeps the few most recently used, so paging a past list replays once. */
export interface PointInTime {
  at(revision: number): Promise<PastState>;
}

/** The status of the past: nothing is known, nothing changes. */
export const NO_STATUS: StatusReader = {
  dataplaneInsight: () => undefined,
  zoneInsight: () => undefined,
  zoneIngressInsight: () => undefined,
  zoneEgressInsight: () => undefined,
  onChange: () => undefined,
};

/** Replays the log up to `revision` (from the nearest snapshot at or below it) into fresh projections. */
export async function buildPastState(deps: {
  registry: Registry;
  log: LogSource;
  revision: number;
  useSnapshots: boolean;
}): Promise<PastState> {
  const { registry } = deps;
  const views = createResourceViews(registry);
  const summaries = createMeshSummaries({ registry, views, status: NO_STATUS });
  const source = trackSnapshotSource(registry, views);
  const load = await loadViews({
    log: deps.log,
    views,
    source,
    toRevision: deps.revision,
    useSnapshots: deps.useSnapshots,
  });
  const time = source.head().time;
  const derived = createDerivedViews({
    registry,
    views,
    status: NO_STATUS,
    summaries,
    now: () => new Date(time),
  });
  return { revision: views.revision(), time, views, derived, status: NO_STATUS, load, source };
}

/** Creates the point-in-time reader with an LRU of `cacheSize` past states (default 4). */
export function createPointInTime(deps: {
  registry: Registry;
  log: LogSource;
  useSnapshots: boolean;
  cacheSize?: number;
}): PointInTime {
  const size = Math.max(1, deps.cacheSize ?? 4);
  // Insertion order is recency: a hit is moved to the end, the first key is evicted.
  const cache = new Map<number, Promise<PastState>>();
  return {
    at(revision) {
      const hit = cache.get(revision);
      if (hit) {
        cache.delete(revision);
        cache.set(revision, hit);
        return hit;
      }
      const built = buildPastState({ ...deps, revision });
      cache.set(revision, built);
      built.catch(() => {
        if (cache.get(revision) === built) cache.delete(revision);
      });
      while (cache.size > size) cache.delete(cache.keys().next().value as number);
      return built;
    },
  };
}
