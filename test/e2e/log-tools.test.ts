import { spawn } from 'node:child_process';
import { cpSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Level } from 'level';
import { afterAll, describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { tempDir } from '../helpers/control-plane.js';
import { REPO_ROOT, meshCp, startNpm } from '../helpers/process.js';

const SERVER_ENV = { MESH_API_SERVER_HTTPS_ENABLED: 'false' };
const all = [{ match: { 'mesh.io/service': '*' } }];
const tp = (service: string) => ({
  type: 'TrafficPermission',
  mesh: 'default',
  name: 'tp-1',
  sources: all,
  destinations: [{ match: { 'mesh.io/service': service } }],
});

describe('mesh-cp log verify | replay | export | import as processes', () => {
  const dirs = [tempDir(), tempDir()];
  const [data, work] = dirs.map((d) => d.path);
  afterAll(() => dirs.forEach((d) => d.cleanup()));

  /** What the server showed before it stopped: the list and the ETag of tp-1, and the head. */
  let shown: { list: unknown; etag: string | null; head: number; created: number } | undefined;

  it('refuses a data dir a running mesh-cp holds, then verifies it once stopped', async () => {
    const server = startNpm({ ...SERVER_ENV, MESH_STORE_LEVEL_PATH: data });
    const { apiPort, pid } = await server.ready;
    const base = `http://127.0.0.1:${apiPort}`;
    // The signing keys of a first start are written just after ready; a token request waits for
    // them, so that the head read below is the last write of this test's server.
    const token = await fetch(`${base}/tokens/user`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ops', validFor: '1h' }),
    });
    expect(token.status).toBe(200);
    const put = (service: string) =>
      fetch(`${base}/meshes/default/traffic-permissions/tp-1`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(tp(service)),
      });
    const created = Number((await put('a')).headers.get('etag')?.replace(/"/g, ''));
    await put('b');
    const gone = await fetch(`${base}/meshes/default/traffic-permissions/allow-all-default`, {
      method: 'DELETE',
    });
    expect(gone.status).toBe(200);

    const busy = await meshCp(['log', 'verify', '--data', data]);
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain('is in use by a running mesh-cp; stop it or copy the dir');

    const list = await (await fetch(`${base}/meshes/default/traffic-permissions`)).json();
    const one = await fetch(`${base}/meshes/default/traffic-permissions/tp-1`);
    const head = Number(one.headers.get('x-mesh-revision'));
    shown = { list, etag: one.headers.get('etag'), head, created };
    process.kill(pid, 'SIGTERM');
    expect((await server.exited).code).toBe(0);

    const ok = await meshCp(['log', 'verify', '--data', data]);
    expect(ok.code).toBe(0);
    expect(ok.stdout).toContain(`head: ${head}\n`);
    expect(ok.stdout).toContain(`OK: ${head} entries, hash chain and history index sound`);
    // The data dir defaults to store.level.path of the config, as for `run` (file, then MESH_* env).
    const config = join(work, 'mesh-cp.yaml');
    writeFileSync(config, `store:\n  level:\n    path: ${data}\n`);
    expect((await meshCp(['log', 'verify', '--config', config])).code).toBe(0);
    expect((await meshCp(['log', 'verify'], { MESH_STORE_LEVEL_PATH: data })).code).toBe(0);
    const nothing = await meshCp(['log', 'verify', '--data', join(work, 'nothing-here')]);
    expect(nothing.code).toBe(2);
    expect(nothing.stderr).toContain('there is no mesh-cp data in');
  }, 30_000);

  it('replay prints the state at a revision as YAML, one document per resource', async () => {
    const { created, head } = shown as NonNullable<typeof shown>;
    const at = await meshCp(['log', 'replay', '--to-revision', String(created), '--data', data]);
    expect(at.code, at.stderr).toBe(0);
    const docs = parseAllDocuments(at.stdout).map((d) => d.toJS() as Record<string, unknown>);
    const tp1 = docs.find((d) => d.name === 'tp-1');
    expect(tp1?.destinations).toEqual([{ match: { 'mesh.io/service': 'a' } }]);
    expect(docs[0]).toMatchObject({ type: 'Mesh', name: 'default' });
    expect(docs.some((d) => d.name === 'allow-all-default')).toBe(true);
    expect(at.stderr).toContain(`state at revision ${created} (head ${head})`);

    const now = await meshCp(['log', 'replay', '--data', data]);
    const latest = parseAllDocuments(now.stdout).map((d) => d.toJS() as Record<string, unknown>);
    expect(latest.find((d) => d.name === 'tp-1')?.destinations).toEqual([
      { match: { 'mesh.io/service': 'b' } },
    ]);
    expect(latest.some((d) => d.name === 'allow-all-default')).toBe(false);

    const bad = await meshCp(['log', 'replay', '--to-revision', String(head + 1), '--data', data]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain(`--to-revision must be a revision between 1 and the head ${head}`);
  }, 30_000);

  it('stops quietly when its reader goes away (`mesh-cp log replay | head`)', async () => {
    const result = await new Promise<{ code: number | null; stderr: string }>((resolve) => {
      const proc = spawn('node', ['dist/bin/mesh-cp.cjs', 'log', 'replay', '--data', data], {
        cwd: REPO_ROOT,
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      // The read end is closed before the tool writes: its first write fails with EPIPE.
      proc.stdout.destroy();
      let stderr = '';
      proc.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
      proc.on('close', (code) => resolve({ code, stderr }));
    });
    expect(result.stderr).toBe('');
    expect(result.code).toBe(0);
  }, 30_000);

  it('verify and export catch one changed byte in a copy of the data dir, naming the revision', async () => {
    const { created } = shown as NonNullable<typeof shown>;
    const copy = join(work, 'damaged');
    cpSync(data, copy, { recursive: true });
    const db = new Level<string, string>(copy, { valueEncoding: 'utf8' });
    await db.open();
    const key = `e!${String(created).padStart(16, '0')}`;
    const value = (await db.get(key)) as string;
    await db.put(key, value.replace('"mesh.io/service":"a"', '"mesh.io/service":"A"'));
    await db.close();

    const res = await meshCp(['log', 'verify', '--data', copy]);
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(`DAMAGED at revision ${created}: hash does not match the entry`);
    expect(res.stdout).toContain(`entries 1..${created - 1} are sound`);
    const exp = await meshCp(['log', 'export', '--data', copy, '--out', join(work, 'damaged.ndjson')]);
    expect(exp.code).toBe(1);
    expect(exp.stderr).toContain(`DAMAGED at revision ${created}`);
    expect(existsSync(join(work, 'damaged.ndjson'))).toBe(false);
  }, 30_000);

  it('export, import into a fresh dir, verify: a server started on it shows the same resources and revisions', async () => {
    const { list, etag, head } = shown as NonNullable<typeof shown>;
    const file = join(work, 'log.ndjson');
    const exp = await meshCp(['log', 'export', '--data', data, '--out', file]);
    expect(exp.code).toBe(0);
    expect(exp.stderr).toContain(`exported ${head} entries`);
    // It holds every secret's data (signing keys included): readable by its owner only.
    expect(statSync(file).mode & 0o777).toBe(0o600);
    // `--out -` is standard output (as `import -` reads standard input), not a file named "-".
    const toStdout = await meshCp(['log', 'export', '--data', data, '--out', '-']);
    expect(toStdout.code).toBe(0);
    expect(toStdout.stdout).toBe(readFileSync(file, 'utf8'));
    expect(existsSync(join(REPO_ROOT, '-'))).toBe(false);
    const fresh = join(work, 'imported');
    const imp = await meshCp(['log', 'import', '--data', fresh, file]);
    expect(imp.code).toBe(0);
    expect(imp.stderr).toContain(`imported ${head} entries (head ${head})`);
    expect(statSync(fresh).mode & 0o777).toBe(0o700);
    const again = await meshCp(['log', 'import', '--data', fresh, file]);
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('import only into an empty data dir');
    expect((await meshCp(['log', 'verify', '--data', fresh])).stdout).toContain(`OK: ${head} entries`);
    // Counts read as English: one snapshot is "1 snapshot".
    expect((await meshCp(['log', 'snapshot', '--data', fresh])).code).toBe(0);
    const deleted = await meshCp(['log', 'snapshot', '--delete', '--data', fresh]);
    expect(deleted.stderr).toContain('deleted 1 snapshot; the log is untouched');

    const server = startNpm({ ...SERVER_ENV, MESH_STORE_LEVEL_PATH: fresh });
    const ready = await server.ready;
    expect(ready.revision).toBe(head);
    const base = `http://127.0.0.1:${ready.apiPort}`;
    expect(await (await fetch(`${base}/meshes/default/traffic-permissions`)).json()).toEqual(list);
    const one = await fetch(`${base}/meshes/default/traffic-permissions/tp-1`);
    expect(one.headers.get('etag')).toBe(etag);
    const history = (await (
      await fetch(`${base}/meshes/default/traffic-permissions/tp-1/_history`)
    ).json()) as {
      total: number;
    };
    expect(history.total).toBe(2);
    process.kill(ready.pid, 'SIGTERM');
    expect((await server.exited).code).toBe(0);
  }, 30_000);
});
