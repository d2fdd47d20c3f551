import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/control-plane.js';
import { startNpm } from '../helpers/process.js';

const N = 100;

const put = (port: number, i: number) =>
  fetch(`http://127.0.0.1:${port}/meshes/default/dataplanes/dp-${i}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'Dataplane',
      mesh: 'default',
      name: `dp-${i}`,
      networking: {
        address: '10.0.0.1',
        inbound: [{ port: 2000 + i, tags: { 'mesh.io/service': `svc-${i % 7}` } }],
      },
    }),
  });

describe('npm start as a process: crash with SIGKILL loses no answered write', () => {
  const dir = tempDir();
  afterAll(() => dir.cleanup());

  it('writes 100 resources concurrently, survives kill -9 with the same revisions, stops on SIGTERM', async () => {
    const first = startNpm({ MESH_STORE_LEVEL_PATH: dir.path });
    const r1 = await first.ready;
    const answers = await Promise.all(Array.from({ length: N }, (_, i) => put(r1.apiPort, i)));
    const revisions = new Map<string, string>();
    answers.forEach((res, i) => {
      expect(res.status).toBe(201);
      revisions.set(`dp-${i}`, res.headers.get('etag') as string);
    });
    expect(new Set(revisions.values()).size).toBe(N);

    process.kill(r1.pid, 'SIGKILL');
    await first.exited;

    const second = startNpm({ MESH_STORE_LEVEL_PATH: dir.path });
    const r2 = await second.ready;
    for (let i = 0; i < N; i++) {
      const res = await fetch(`http://127.0.0.1:${r2.apiPort}/meshes/default/dataplanes/dp-${i}`);
      expect(res.status).toBe(200);
      expect(res.headers.get('etag')).toBe(revisions.get(`dp-${i}`));
    }
    const list = (await (
      await fetch(`http://127.0.0.1:${r2.apiPort}/meshes/default/dataplanes?size=1000`)
    ).json()) as {
      total: number;
    };
    expect(list.total).toBe(N);

    // A second process on the same data dir is refused with a message that says why.
    const third = startNpm({ MESH_STORE_LEVEL_PATH: dir.path });
    const exit3 = await third.exited;
    expect(exit3.code).not.toBe(0);
    expect(JSON.stringify(third.lines)).toContain('in use by another mesh-cp process');

    const t0 = Date.now();
    process.kill(r2.pid, 'SIGTERM');
    const exit = await second.exited;
    expect(exit.code).toBe(0);
    expect(Date.now() - t0).toBeLessThan(5000);
    expect(second.lines.map((l) => l.msg)).toContain('stopped');
  }, 60_000);

  it('stops on SIGINT too, and a bad setting stops start-up naming the key', async () => {
    const bad = startNpm({ MESH_STORE_LEVEL_PATH: dir.path, MESH_API_SERVER_PORT: 'eighty' });
    const exit = await bad.exited;
    expect(exit.code).not.toBe(0);
    expect(bad.stderr()).toContain('MESH_API_SERVER_PORT');

    const p = startNpm({ MESH_STORE_LEVEL_PATH: dir.path });
    const r = await p.ready;
    process.kill(r.pid, 'SIGINT');
    expect((await p.exited).code).toBe(0);
  }, 60_000);

  it('a data dir that is a file stops start-up saying so', async () => {
    const file = join(dir.path, 'not-a-dir');
    writeFileSync(file, 'x');
    for (const path of [file, join(file, 'data')]) {
      const p = startNpm({ MESH_STORE_LEVEL_PATH: path });
      const exit = await p.exited;
      expect(exit.code).not.toBe(0);
      expect(JSON.stringify(p.lines)).toContain(
        `cannot open the event log at ${path}: it (or a parent) is a file`,
      );
    }
  }, 60_000);
});
