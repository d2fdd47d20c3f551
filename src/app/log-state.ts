import type { OfflineLog } from '../events/log-admin.js';
import type { WireResource } from '../events/types.js';
import { buildPastState } from '../projections/point-in-time.js';
import type { Registry } from '../resources/registry.js';

/** What these replays read of an offline log: entries in order and the snapshots beside them. */
type ReplaySource = Pick<OfflineLog, 'read' | 'snapshots'>;

/**
 * The stored resources as of `revision` (`mesh-cp log replay`), replayed from the nearest snapshot:
 * kind by kind in registry order (meshes first), each kind in (mesh, name) order.
 */
export async function resourcesAt(
  registry: Registry,
  log: ReplaySource,
  revision: number,
): Promise<WireResource[]> {
  const past = await buildPastState({ registry, log, revision, useSnapshots: true });
  const out: WireResource[] = [];
  for (const d of registry.stored) past.views.each(d.kind, undefined, (item) => out.push(item.resource));
  return out;
}

/**
 * Writes a snapshot of the state at `revision` without a server (`mesh-cp log snapshot`), keeping
 * the newest older one; resolves with the number of resources in it.
 */
export async function writeSnapshotAt(
  registry: Registry,
  log: ReplaySource,
  revision: number,
): Promise<number> {
  const past = await buildPastState({ registry, log, revision, useSnapshots: true });
  const snapshot = past.source.capture();
  await log.snapshots.write(snapshot);
  const older = (await log.snapshots.list()).find((s) => s.revision < snapshot.revision && s.info);
  await log.snapshots.retain(older ? [snapshot.revision, older.revision] : [snapshot.revision]);
  return snapshot.items.length;
}
