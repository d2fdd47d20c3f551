import { writeSnapshotAt } from '../src/app/log-state.js';
import { createLogReader, openLevelStore } from '../src/events/level-tools.js';
import { registry } from '../src/resources/registry.js';

/**
 * Writes a snapshot of the state at the head of the store at `path` (as `mesh-cp log snapshot`
 * does), so that a start replays only what comes after it. For the `startup-snapshot` scenario:
 * `buildStore(dir, ...)`, then `writeSnapshot(dir)`, then `startMeshCp(dir)`; start with
 * `MESH_STORE_SNAPSHOT_EVERY=0` to measure the same store without it (0 neither reads nor writes one).
 */
export async function writeSnapshot(
  path: string,
): Promise<{ revision: number; resources: number; ms: number }> {
  const started = performance.now();
  const store = await openLevelStore(path, { existing: true });
  try {
    const reader = await createLogReader(store);
    const resources = await writeSnapshotAt(registry, reader, reader.head());
    return { revision: reader.head(), resources, ms: performance.now() - started };
  } finally {
    await store.close();
  }
}
