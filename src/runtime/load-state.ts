import { createBus, type Bus } from '../events/bus.js';
import type { SnapshotStore } from '../events/snapshot-store.js';
import { createMeshSummaries, type MeshSummaries } from '../projections/mesh-summaries.js';
import { createResourceViews, type ResourceViews } from '../projections/resource-views.js';
import {
  createSnapshotter,
  loadViews,
  trackSnapshotSource,
  type LoadResult,
  type LogSource,
  type Snapshotter,
} from '../projections/snapshot.js';
import { registry } from '../resources/registry.js';
import { createMergedStatus, type MergedStatus } from '../status/merged-status.js';
import { createStatusStore, type StatusStore } from '../status/status-store.js';
import type { OpenedLog } from './open-log.js';
import type { StartContext } from './start-context.js';

/** What a plane serves from: the views, kept current by the log's commits, and the runtime status. */
export interface LoadedState {
  views: ResourceViews;
  status: StatusStore;
  /** On a PostgreSQL log: this instance's status merged with the other instances'. */
  merged?: MergedStatus;
  summaries: MeshSummaries;
  /** Durable batches, in revision order, as the views applied them. */
  bus: Bus;
  /** The snapshots start-up and point-in-time reads use (none when `store.snapshot.every` is 0). */
  snapshots?: SnapshotStore;
  /** What point-in-time reads replay from: the log, and its snapshots when used. */
  replaySource: LogSource;
  /** Writes a snapshot when one is due, when the store keeps them. */
  snapshotter?: Snapshotter;
  /** Entries replayed at start and the snapshot they followed. */
  loaded: LoadResult;
}

/**
 * The start-up step that loads the views: from the newest sound snapshot, then the log's tail (a
 * damaged snapshot is logged and skipped); then the log's commits reach them through the bus, and
 * a log shared with other instances applies what they appended meanwhile and starts following them.
 */
export async function loadState(ctx: StartContext, opened: OpenedLog): Promise<LoadedState> {
  const { log } = opened;
  const { config, logger } = ctx;
  const views = createResourceViews(registry);
  // On a PostgreSQL log several instances serve one cluster: reads of runtime status merge theirs.
  const merged =
    config.store.type === 'postgres' ? createMergedStatus(createStatusStore(), ctx.instanceId) : undefined;
  const status = merged?.store ?? createStatusStore();
  const summaries = createMeshSummaries({ registry, views, status });
  // From the newest sound snapshot, then the tail; a damaged one is logged and skipped.
  const snapshots = config.store.snapshot.every > 0 ? opened.snapshots : undefined;
  const source = trackSnapshotSource(registry, views);
  const replaySource: LogSource = {
    read: (from, to) => log.read(from, to),
    readRawChunks: (o) => log.readRawChunks(o),
    head: () => log.head(),
    snapshots,
  };
  const loaded = await loadViews({
    log: replaySource,
    views,
    source,
    useSnapshots: !!snapshots,
    every: config.store.snapshot.every,
    logger,
  });

  const bus = createBus();
  log.onCommit((entries) => bus.emit('committed', entries));
  bus.on('committed', (entries) => views.apply(entries));
  // A log shared with other instances (PostgreSQL): what they appended during the load, then follow.
  await log.catchUp();
  const snapshotter = snapshots
    ? createSnapshotter({
        store: snapshots,
        source,
        every: config.store.snapshot.every,
        last: loaded.snapshot,
        resources: loaded.snapshotResources,
        logger,
      })
    : undefined;
  if (snapshotter) bus.on('committed', () => snapshotter.committed());
  return { views, status, merged, summaries, bus, snapshots, replaySource, snapshotter, loaded };
}
