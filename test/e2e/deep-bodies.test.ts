import { afterAll, describe, expect, it } from 'vitest';
import { type CpProcess, startMeshCp } from '../helpers/process.js';

// Four 1 MB bodies of `[` sent at once to the built control plane: before the structure bounds,
// the process died (`FATAL ERROR: RegExpCompiler Allocation failed - process out of memory`).
describe('deep YAML bodies against the built control plane', () => {
  let cp: CpProcess | undefined;
  afterAll(async () => {
    if (cp && cp.proc.exitCode === null) {
      cp.proc.kill('SIGTERM');
      await cp.exited;
    }
  });

  it('four 1 MB bodies of "[" at once are each 400, and the process lives on', async () => {
    cp = startMeshCp({ MESH_STORE_TYPE: 'memory', MESH_API_SERVER_HTTPS_ENABLED: 'false' });
    const { apiPort } = await cp.ready;
    const base = `http://127.0.0.1:${apiPort}`;
    const body = '['.repeat(1_000_000);
    const answers = await Promise.all(
      Array.from({ length: 4 }, () =>
        fetch(`${base}/meshes/deep`, {
          method: 'PUT',
          headers: { 'content-type': 'application/yaml' },
          body,
        }).then(async (res) => ({ status: res.status, body: (await res.json()) as Record<string, unknown> })),
      ),
    );
    for (const answer of answers) {
      expect(answer.status).toBe(400);
      expect(answer.body).toEqual({
        title: 'Invalid request body',
        details:
          'the YAML body is too deep at line 1, column 65: it nests more than 64 levels of arrays and objects; ' +
          'no resource comes near this: check what generated the body',
      });
    }
    expect((await fetch(`${base}/`)).status).toBe(200);
    expect(cp.proc.exitCode).toBeNull();
    expect(cp.stderr()).not.toContain('FATAL');
  }, 60_000);
});
