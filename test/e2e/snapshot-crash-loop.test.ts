import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/control-plane.js';
import { startNpm } from '../helpers/process.js';

const EVERY = 50;
const ROUNDS = 6;
const PER_ROUND = 120;
/**
 * Entries that may be committed while a snapshot is being written, when the kill falls in that
 * window (a pass over a few hundred resources: milliseconds, a few sequential PUTs).
 */
const IN_FLIGHT = 20;

describe('npm start as a process: crash loop under steady writes', () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  it('keeps the start-up replay within twice the interval past the snapshot it loads', async () => {
    const env = { MESH_STORE_LEVEL_PATH: dir.path, MESH_STORE_SNAPSHOT_EVERY: String(EVERY) };
    const starts: Array<{ replayed: number; snapshot?: number; snapshotResources?: number }> = [];
    /** Resources of each snapshot, from the `snapshot written` lines of the processes that wrote them. */
    const held = new Map<number, number>();
    let n = 0;
    for (let round = 0; round <= ROUNDS; round++) {
      const cp = startNpm(env);
      const { apiPort, pid } = await cp.ready;
      const line = cp.lines.find((l) => l.msg === 'mesh-cp ready') as Record<string, number>;
      starts.push({
        replayed: line.replayed,
        snapshot: line.snapshot,
        snapshotResources: line.snapshotResources,
      });
      if (round === ROUNDS) {
        process.kill(pid, 'SIGKILL');
        await cp.exited;
        break;
      }
      // Creates back to back: the log is never quiet for 250 ms, and the store grows with the tail.
      for (let i = 0; i < PER_ROUND; i++, n++) {
        const res = await fetch(`http://127.0.0.1:${apiPort}/meshes/default/dataplanes/dp-${n}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({
            type: 'Dataplane',
            mesh: 'default',
            name: `dp-${n}`,
            networking: { address: '10.0.0.1', inbound: [{ port: 2000, tags: { 'mesh.io/service': 's' } }] },
          }),
        });
        expect(res.status).toBe(201);
      }
      process.kill(pid, 'SIGKILL');
      await cp.exited;
      for (const l of cp.lines)
        if (l.msg === 'snapshot written') held.set(l.revision as number, l.resources as number);
    }
    for (const s of starts) {
      const interval = Math.max(EVERY, held.get(s.snapshot ?? 0) ?? 0);
      expect(s.replayed, JSON.stringify(starts)).toBeLessThanOrEqual(2 * interval + IN_FLIGHT);
    }
    // The ready line says what the interval is: the resources that snapshot held.
    for (const s of starts) expect(s.snapshotResources).toBe(held.get(s.snapshot ?? 0));
    // Snapshots were written within the loop, by processes that were each killed mid-load.
    expect(starts[ROUNDS]?.snapshot ?? 0).toBeGreaterThan(starts[1]?.snapshot ?? 0);
  }, 30_000);
});
