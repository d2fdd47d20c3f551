import { performance } from 'node:perf_hooks';

import type { Snapshot, SnapshotItem, SnapshotStore } from '../events/snapshot-store.js';
import { SnapshotDamaged } from '../events/snapshot-store.js';
import type { EventLog } from '../events/event-log.js';
import type { Actor, LogEntry } from '../events/types.js';
import type { Registry } from '../resources/registry.js';
import { loadLatest } from './load-latest.js';
import type { ResourceViews } from './resource-views.js';

/** What the views are loaded from: the log's entries in order and, when it has them, its snapshots. */
export type LogSource = Pick<EventLog, 'read'> &
  Partial<Pick<EventLog, 'readRawChunks' | 'head'>> & { snapshots?: SnapshotStore };

/** Where structured warnings and notes go (a pino logger fits). */
export interface SnapshotLogger {
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
}

/** Follows what the views applied, so that their state can be captured as a snapshot at any turn. */
export interface SnapshotSource {
  /** Revision, hash and time of the last entry applied. */
  head(): { revision: number; hash: string; time: string };
  /** The views' state now, as a snapshot (synchronous, so it is the state of one revision). */
  capture(): Snapshot;
  /** Continues from a restored snapshot. */
  reset(snapshot: Snapshot): void;
}

const REPLAY_CHUNK = 1000;
/** The actor of the entries a restore feeds the views: never stored, never shown. */
const SNAPSHOT_ACTOR: Actor = { name: 'mesh-cp', groups: ['mesh-system'], address: 'snapshot' };

/** The mesh an entry belongs to (a Mesh belongs to itself), as mesh insights count changes. */
const meshOf = (e: Pick<LogEntry, 'kind' | 'mesh' | 'name'>): string | undefined =>
  e.kind === 'Mesh' ? e.name : e.mesh;

/**
 * Starts following `views`; create it before the views are loaded. It keeps the entry with the
 * highest revision (and, per mesh, the time of its highest revision), so it holds whatever the order
 * entries are applied in (start-up may apply them newest first).
 */
export function trackSnapshotSource(registry: Registry, views: ResourceViews): SnapshotSource {
  let revision = 0;
  let hash = '';
  let time = '';
  let meshTimes = new Map<string, { revision: number; time: string }>();
  views.onChange((e) => {
    if (e.revision >= revision) {
      revision = e.revision;
      hash = e.hash;
      time = e.time;
    }
    const mesh = meshOf(e);
    const last = mesh === undefined ? undefined : meshTimes.get(mesh);
    if (mesh !== undefined && (!last || e.revision >= last.revision)) {
      meshTimes.set(mesh, { revision: e.revision, time: e.time });
    }
  });
  return {
    head: () => ({ revision: Math.max(revision, views.revision()), hash, time }),
    capture() {
      const items: SnapshotItem[] = [];
      for (const d of registry.stored) {
        views.each(d.kind, undefined, (item) => {
          const out: SnapshotItem = {
            kind: item.kind,
            name: item.name,
            revision: item.revision,
            origin: item.origin,
            resource: item.resource,
          };
          if (item.mesh !== undefined) out.mesh = item.mesh;
          items.push(out);
        });
      }
      items.sort((a, b) => a.revision - b.revision);
      return {
        // The revision whose hash we hold: views moved past it without a change hold the same state.
        revision,
        hash,
        time,
        meshTimes: Object.fromEntries([...meshTimes].map(([mesh, t]) => [mesh, t.time])),
        resources: items.length,
        chunks: 0,
        items,
      };
    },
    reset(snapshot) {
      revision = snapshot.revision;
      hash = snapshot.hash;
      time = snapshot.time;
      meshTimes = new Map(
        Object.entries(snapshot.meshTimes).map(([mesh, t]) => [
          mesh,
          { revision: snapshot.revision, time: t },
        ]),
      );
    },
  };
}

/**
 * Puts a snapshot's resources into empty views as creates in revision order. Each carries the time
 * of its mesh's last change, so mesh insights read the same `modificationTime` as after a full replay.
 */
export function restoreSnapshot(views: ResourceViews, source: SnapshotSource, snapshot: Snapshot): void {
  const items = [...snapshot.items].sort((a, b) => a.revision - b.revision);
  for (let i = 0; i < items.length; i += REPLAY_CHUNK) {
    views.apply(
      items.slice(i, i + REPLAY_CHUNK).map((item) => {
        const mesh = meshOf(item);
        return {
          revision: item.revision,
          time: (mesh !== undefined ? snapshot.meshTimes[mesh] : undefined) ?? item.resource.modificationTime,
          kind: item.kind,
          ...(item.mesh === undefined ? {} : { mesh: item.mesh }),
          name: item.name,
          operation: 'create' as const,
          resource: item.resource,
          actor: SNAPSHOT_ACTOR,
          origin: item.origin,
          prevHash: '',
          hash: '',
        };
      }),
    );
  }
  views.advance(snapshot.revision);
  source.reset(snapshot);
}

/** What {@link loadViews} did. */
export interface LoadResult {
  /** Revision of the snapshot the views started from, if one was used. */
  snapshot?: number;
  /** Resources that snapshot held (it sets the interval until the next one). */
  snapshotResources?: number;
  /** Entries replayed from the log (after the snapshot, if any). */
  replayed: number;
}

/**
 * Loads views from the newest sound snapshot at or below `toRevision`, then replays the log after it
 * up to `toRevision` (default: the end). A damaged snapshot is logged (warn) and skipped: the next
 * older one is tried, and without one the whole log is replayed.
 */
export async function loadViews(deps: {
  log: LogSource;
  views: ResourceViews;
  source: SnapshotSource;
  toRevision?: number;
  useSnapshots: boolean;
  /** Snapshot interval: with no usable snapshot on a log at least this long, the full replay is logged (warn). */
  every?: number;
  logger?: SnapshotLogger;
}): Promise<LoadResult> {
  const { log, views, source, logger } = deps;
  const to = deps.toRevision ?? Infinity;
  let snapshot: number | undefined;
  let snapshotResources: number | undefined;
  if (deps.useSnapshots && log.snapshots) {
    for (const listing of await log.snapshots.list()) {
      if (listing.revision > to) continue;
      try {
        if (listing.problem) throw new SnapshotDamaged(listing.revision, listing.problem);
        const read = await log.snapshots.read(listing.revision);
        restoreSnapshot(views, source, read);
        snapshot = listing.revision;
        snapshotResources = read.items.length;
        break;
      } catch (error) {
        if (!(error instanceof SnapshotDamaged)) throw error;
        logger?.warn(
          { snapshot: listing.revision, reason: error.message },
          'snapshot is damaged: ignoring it (an older snapshot or a full replay of the log is used)',
        );
      }
    }
  }
  let replayed = 0;
  if (log.readRawChunks && log.head) {
    // Only each resource's last change matters: read newest first, parse and apply just those.
    const last = Math.min(to, log.head());
    if (last > (snapshot ?? 0))
      replayed = await loadLatest(
        { readRawChunks: (o) => (log.readRawChunks as EventLog['readRawChunks'])(o) },
        views,
        { from: (snapshot ?? 0) + 1, to: last },
      );
    return finish(replayed);
  }
  let chunk: LogEntry[] = [];
  for await (const e of log.read((snapshot ?? 0) + 1, deps.toRevision)) {
    chunk.push(e);
    if (chunk.length >= REPLAY_CHUNK) {
      views.apply(chunk);
      replayed += chunk.length;
      chunk = [];
    }
  }
  views.apply(chunk);
  return finish(replayed + chunk.length);

  function finish(n: number): LoadResult {
    if (snapshot === undefined && deps.useSnapshots && deps.every !== undefined && n >= deps.every) {
      logger?.warn(
        { replayed: n },
        'no usable snapshot: replayed the whole log (a snapshot will be written)',
      );
    }
    return { snapshot, snapshotResources, replayed: n };
  }
}

/**
 * Writes a snapshot once the entries since the last one reach `every` or the number of resources
 * that snapshot held, whichever is more, after commits and off the write path. Writing a snapshot
 * costs one pass over every resource, so with more resources than `every` a fixed interval would
 * cost O(resources) per `every` entries (back-to-back snapshots under sustained writes at 100k
 * resources); this keeps the cost O(1) per entry, and start-up at one snapshot plus at most twice
 * the interval (docs/running.md, "Replay bound").
 *
 * A due snapshot waits for a quiet moment: `quietMs` with no commit and the event loop less than
 * half busy (serving reads, streaming to zones). Writing one is a pass over every resource on the
 * event loop, and written in the middle of a burst of writes (a CI pipeline, a zone catching up) it
 * slowed that burst by a third. Under a load that never pauses, it is written anyway once the
 * entries since the last reach twice the interval, so a replay stays bounded.
 */
export interface Snapshotter {
  /** Call after each durable batch is applied: schedules a snapshot when one is due. */
  committed(): void;
  /** Writes a snapshot of the views now; resolves with its revision (undefined when cut short). */
  snapshotNow(): Promise<number | undefined>;
  /** Stops: a snapshot being written is abandoned (it has no meta record, so it is never read). */
  close(): Promise<void>;
}

/** How long a due snapshot waits for the log to be quiet (no commit) before it is written. */
export const QUIET_MS = 250;

/** The event loop's utilisation between calls (Node's ELU, as `performance` measures it). */
function eventLoopBusy(): () => number {
  let prev = performance.eventLoopUtilization();
  return () => {
    const now = performance.eventLoopUtilization();
    const delta = performance.eventLoopUtilization(now, prev);
    prev = now;
    return delta.utilization;
  };
}

/**
 * Creates the snapshotter; `last` is the revision of the snapshot the views were loaded from. Call
 * `committed()` once start-up is over: a tail already past the interval is then due (at once past
 * twice the interval), so a process killed before each quiet moment does not let the replay grow.
 */
export function createSnapshotter(deps: {
  store: SnapshotStore;
  source: SnapshotSource;
  /** Entries between snapshots at least (config `store.snapshot.every`); 0 writes none. */
  every: number;
  last?: number;
  /**
   * Resources the snapshot at `last` held: the interval until the next one is at least this. Not the
   * views' count at start, which includes what the tail created: under steady writes that moved the
   * first forced snapshot past each crash, and the replay grew at every restart.
   */
  resources?: number;
  logger?: SnapshotLogger;
  /** Milliseconds without a commit that a due snapshot waits for (default {@link QUIET_MS}). */
  quietMs?: number;
  /** The event loop's utilisation (0..1) since the previous call; default: `performance`'s. */
  loopBusy?: () => number;
}): Snapshotter {
  const { store, source, every, logger } = deps;
  const quietMs = deps.quietMs ?? QUIET_MS;
  const loopBusy = deps.loopBusy ?? eventLoopBusy();
  let last = deps.last ?? 0;
  let interval = Math.max(every, deps.resources ?? 0);
  let kept = deps.last === undefined ? [] : [deps.last];
  let running: Promise<number | undefined> | undefined;
  let closed = false;
  /** When the last commit was seen, and the timer of a due snapshot waiting for quiet. */
  let lastCommit = 0;
  let waiting: NodeJS.Timeout | undefined;

  const write = async (): Promise<number | undefined> => {
    const started = Date.now();
    const snapshot = source.capture();
    try {
      if (!(await store.write(snapshot, () => closed))) return undefined;
      last = snapshot.revision;
      interval = Math.max(every, snapshot.items.length);
      // Two are kept: should the newest be damaged, start-up still has the one before.
      kept = [snapshot.revision, ...kept.filter((r) => r !== snapshot.revision)].slice(0, 2);
      await store.retain(kept);
      logger?.info(
        { revision: snapshot.revision, resources: snapshot.items.length, ms: Date.now() - started },
        'snapshot written',
      );
      return snapshot.revision;
    } catch (err) {
      // Not retried before the next interval: a failing disk must not turn every commit into a write.
      last = snapshot.revision;
      interval = Math.max(every, snapshot.items.length);
      if (!closed) logger?.warn({ err, revision: snapshot.revision }, 'writing a snapshot failed');
      return undefined;
    }
  };

  const start = (): Promise<number | undefined> => {
    running ??= new Promise<void>((resolve) => setImmediate(resolve))
      .then(() => (closed ? undefined : write()))
      .finally(() => {
        running = undefined;
      });
    return running;
  };

  const stopWaiting = (): void => {
    clearTimeout(waiting);
    waiting = undefined;
  };
  /**
   * Starts the due snapshot once the log has been quiet for `quietMs` and the loop is not busy. An
   * overdue one needs no check here: the head only moves by commits, and `committed` starts it.
   */
  const whenQuiet = (): void => {
    waiting = undefined;
    if (closed || running) return;
    const quietFor = Date.now() - lastCommit;
    // Measured at every check, so that each measures the loop since the one before.
    const busy = loopBusy();
    if (quietFor >= quietMs && busy < 0.5) void start();
    else waiting = setTimeout(whenQuiet, Math.max(quietMs - quietFor, quietMs / 5)).unref();
  };

  return {
    committed() {
      if (closed || running || every <= 0) return;
      lastCommit = Date.now();
      const since = source.head().revision - last;
      if (since >= 2 * interval) {
        stopWaiting();
        void start();
      } else if (since >= interval && waiting === undefined) {
        loopBusy();
        waiting = setTimeout(whenQuiet, quietMs).unref();
      }
    },
    snapshotNow: async () => {
      stopWaiting();
      if (running) await running;
      return start();
    },
    async close() {
      closed = true;
      stopWaiting();
      await running;
    },
  };
}
