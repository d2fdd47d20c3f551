import { afterAll, describe, expect, it } from 'vitest';
import { startTestPlane, tempDir } from '../helpers/control-plane.js';
import { observe, randomWrites } from '../helpers/history.js';

/**
 * Replay equality: for random sequences of writes, the state rebuilt at every revision
 * (`?revision=R` reads) equals the state the API showed right after that revision.
 */
describe('point-in-time reads equal what the API showed at each revision', () => {
  const dirs: Array<{ cleanup: () => void }> = [];
  afterAll(() => dirs.forEach((d) => d.cleanup()));

  const check = async (seed: number, env: Record<string, string>) => {
    const cp = await startTestPlane(env);
    try {
      const seen = new Map<number, Awaited<ReturnType<typeof observe>>>();
      seen.set(cp.log.head(), await observe(cp.app));
      // Recorded at the head: a new mesh's PUT answers with the mesh's revision, its defaults follow.
      await randomWrites(cp.app, seed, 80, async () => {
        seen.set(cp.log.head(), await observe(cp.app));
      });
      expect(seen.size).toBeGreaterThan(25);
      for (const [revision, live] of seen) {
        const past = await observe(cp.app, revision);
        for (const url of Object.keys(live)) {
          expect(past[url], `seed ${seed}, revision ${revision}, ${url}`).toEqual(live[url]);
        }
      }
    } finally {
      await cp.close();
    }
  };

  for (const seed of [1, 2, 3]) {
    it(`memory store, seed ${seed}`, () => check(seed, {}), 30_000);
  }

  it('LevelDB store with a snapshot every 5 entries (past states start from the nearest snapshot)', async () => {
    const dir = tempDir();
    dirs.push(dir);
    await check(4, {
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: dir.path,
      MESH_STORE_SNAPSHOT_EVERY: '5',
    });
  }, 30_000);
});
