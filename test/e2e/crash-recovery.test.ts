import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/control-plane.js';
import { tp } from '../helpers/multizone.js';
import { REPO_ROOT, startNpm } from '../helpers/process.js';

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
    expect(JSON.stringify(third.lines)).toContain(
      'in use by another mesh-cp process (LevelDB lock held); stop that process, or point store.level.path (MESH_STORE_LEVEL_PATH) at another directory',
    );

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

  it('a SIGTERM to the npm process reaches the control plane, which stops cleanly', async () => {
    // What a supervisor or a container runtime does with `npm start` as its command.
    const p = startNpm({ MESH_STORE_LEVEL_PATH: dir.path });
    const r = await p.ready;
    expect(r.pid).not.toBe(p.proc.pid);
    p.proc.kill('SIGTERM');
    await p.exited;
    const alive = (): boolean => {
      try {
        process.kill(r.pid, 0);
        return true;
      } catch {
        return false;
      }
    };
    const end = Date.now() + 5000;
    while (alive() && Date.now() < end) await new Promise((res) => setTimeout(res, 50));
    expect(alive()).toBe(false);
    expect(p.lines.map((l) => l.msg)).toEqual(expect.arrayContaining(['shutting down', 'stopped']));
  }, 60_000);

  it('a data dir that is a file stops start-up saying so', async () => {
    const file = join(dir.path, 'not-a-dir');
    writeFileSync(file, 'x');
    for (const path of [file, join(file, 'data')]) {
      const p = startNpm({ MESH_STORE_LEVEL_PATH: path });
      const exit = await p.exited;
      expect(exit.code).not.toBe(0);
      expect(JSON.stringify(p.lines)).toContain(
        `cannot create the data dir ${path}: it (or a parent) is a file`,
      );
    }
  }, 60_000);

  it.each([
    // `sed` quits after the ready line; `head` after the first line, while start-up still logs.
    ['after the ready line, with a log line waiting in the buffer', "sed -u '/mesh-cp ready/q'"],
    ['during start-up, after its first line', 'head -1'],
  ])(
    'stops on SIGTERM when the reader of its output went away %s',
    async (what, reader) => {
      const data = join(dir.path, `gone-${reader.length}`);
      const bin = join(REPO_ROOT, 'dist', 'bin', 'mesh-cp.cjs');
      const proc = spawn('sh', ['-c', `"${process.execPath}" "${bin}" run | ${reader}`], {
        cwd: REPO_ROOT,
        env: {
          ...process.env,
          MESH_STORE_LEVEL_PATH: data,
          MESH_API_SERVER_PORT: '0',
          MESH_API_SERVER_HTTPS_ENABLED: 'false',
          MESH_DIAGNOSTICS_PORT: '0',
          MESH_XDS_SERVER_GRPC_PORT: '0',
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // What the reader passed on before it quit (the pipeline runs on until the server stops).
      const lines = await new Promise<Array<Record<string, unknown>>>((resolve) => {
        let out = '';
        proc.stdout.on('data', (c: Buffer) => {
          out += c.toString();
          const got = out
            .split('\n')
            .filter((l) => l.startsWith('{') && l.endsWith('}'))
            .map((l) => JSON.parse(l) as Record<string, unknown>);
          if (what.startsWith('after') ? got.some((l) => l.msg === 'mesh-cp ready') : got.length > 0)
            resolve(got);
        });
      });
      const pid = lines[0].pid as number;
      const port = Number(
        /:(\d+)$/.exec(String(lines.find((l) => /listening/.test(String(l.msg)))?.msg))?.[1],
      );
      const alive = (): boolean => {
        try {
          process.kill(pid, 0);
          return true;
        } catch {
          return false;
        }
      };
      // Ready (the reader of the first line saw only that line): the API answers.
      for (
        let i = 0;
        i < 100 && (await fetch(`http://127.0.0.1:${port}/`).catch(() => undefined))?.status !== 200;
        i++
      )
        await new Promise((r) => setTimeout(r, 50));
      if (what.startsWith('after')) {
        // A write logs a line, held in the buffer (up to 100 ms) when the signal comes.
        const res = await fetch(`http://127.0.0.1:${port}/meshes/default/traffic-permissions/tp-gone`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(tp('tp-gone')),
        });
        expect(res.status).toBe(201);
      }
      // Idle for a moment (start-up work done), so the stop is quick: it ends before the buffer's next
      // periodic write would have found the reader gone.
      await new Promise((r) => setTimeout(r, what.startsWith('after') ? 50 : 2000));
      const t0 = Date.now();
      process.kill(pid, 'SIGTERM');
      while (alive() && Date.now() - t0 < 8000) await new Promise((r) => setTimeout(r, 50));
      const stillAlive = alive();
      if (stillAlive) process.kill(pid, 'SIGKILL');
      expect(stillAlive).toBe(false);
      expect(Date.now() - t0).toBeLessThan(5000);
    },
    30_000,
  );
});
