import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { GENESIS_HASH, sealEntry } from '../../src/events/hash.js';
import { tempDir } from '../helpers/control-plane.js';
import { createTestDatabase, onDatabase, pgStoreEnv, TEST_PG } from '../helpers/postgres.js';
import type { TestDatabase } from '../helpers/postgres.js';
import { meshCp, startMeshCp } from '../helpers/process.js';
import type { CpProcess } from '../helpers/process.js';

const SERVER_ENV = { MESH_API_SERVER_HTTPS_ENABLED: 'false' };

/** The env that points `run` and the log tools at the PostgreSQL log of `database`. */
const pgEnv = pgStoreEnv;

function putPermission(port: number, service: string): Promise<Response> {
  const all = [{ match: { 'mesh.io/service': '*' } }];
  return fetch(`http://127.0.0.1:${port}/meshes/default/traffic-permissions/tp-1`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({
      type: 'TrafficPermission',
      mesh: 'default',
      name: 'tp-1',
      sources: all,
      destinations: [{ match: { 'mesh.io/service': service } }],
    }),
  });
}

async function countEntries(database: string): Promise<number> {
  const { rows } = await onDatabase(database, (client) =>
    client.query<{ n: number }>('SELECT count(*)::int AS n FROM mesh_log_entries'),
  );
  return rows[0].n;
}

describe('mesh-cp log export | import | verify between LevelDB and PostgreSQL', () => {
  const dir = tempDir();
  const databases: TestDatabase[] = [];
  const started: CpProcess[] = [];
  let source: TestDatabase;
  let target: TestDatabase;
  beforeAll(async () => {
    source = await createTestDatabase();
    target = await createTestDatabase();
    databases.push(source, target);
  });
  afterEach(() => {
    for (const cp of started.splice(0)) if (cp.proc.exitCode === null) cp.proc.kill('SIGKILL');
  });
  afterAll(async () => {
    for (const db of databases) await db.drop();
    dir.cleanup();
  });

  async function serve(env: Record<string, string>): Promise<{ cp: CpProcess; base: string }> {
    const cp = startMeshCp({ ...SERVER_ENV, ...env });
    started.push(cp);
    const { apiPort } = await cp.ready;
    return { cp, base: `http://127.0.0.1:${apiPort}` };
  }

  async function stop(cp: CpProcess): Promise<void> {
    cp.proc.kill('SIGTERM');
    expect((await cp.exited).code, cp.stderr()).toBe(0);
  }

  it('carries a LevelDB log into PostgreSQL and back with its hash chain, byte for byte', async () => {
    const data = join(dir.path, 'level');
    const first = await serve({ MESH_STORE_TYPE: 'level', MESH_STORE_LEVEL_PATH: data });
    const token = await fetch(`${first.base}/tokens/user`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'ops', validFor: '1h' }),
    });
    expect(token.status).toBe(200);
    await putPermission(Number(new URL(first.base).port), 'a');
    await putPermission(Number(new URL(first.base).port), 'b');
    const list = await (await fetch(`${first.base}/meshes/default/traffic-permissions`)).json();
    const etag = (await fetch(`${first.base}/meshes/default/traffic-permissions/tp-1`)).headers.get('etag');
    await stop(first.cp);

    const fromLevel = join(dir.path, 'from-level.ndjson');
    const exported = await meshCp(['log', 'export', '--data', data, '--out', fromLevel]);
    expect(exported.code, exported.stderr).toBe(0);
    const head = readFileSync(fromLevel, 'utf8').trim().split('\n').length;

    const imported = await meshCp(['log', 'import', fromLevel], pgEnv(target.name));
    expect(imported.code, imported.stderr).toBe(0);
    expect(imported.stderr).toContain(
      `imported ${head} entries (head ${head}) into PostgreSQL database "${target.name}"`,
    );
    const again = await meshCp(['log', 'import', fromLevel], pgEnv(target.name));
    expect(again.code).toBe(2);
    expect(again.stderr).toContain('already holds a mesh-cp log: import only into an empty one');
    const verified = await meshCp(['log', 'verify'], pgEnv(target.name));
    expect(verified.code, verified.stderr).toBe(0);
    expect(verified.stdout).toContain(
      `PostgreSQL database "${target.name}" on ${TEST_PG.host}:${TEST_PG.port}`,
    );
    expect(verified.stdout).toContain(`OK: ${head} entries, hash chain and history index sound`);

    // A server on the imported log shows what the LevelDB one showed. Meanwhile the tools that read
    // work (instances share the database), and an import is refused.
    const second = await serve(pgEnv(target.name));
    expect(await (await fetch(`${second.base}/meshes/default/traffic-permissions`)).json()).toEqual(list);
    const one = await fetch(`${second.base}/meshes/default/traffic-permissions/tp-1`);
    expect(one.headers.get('etag')).toBe(etag);
    const live = await meshCp(['log', 'verify'], pgEnv(target.name));
    expect(live.code, live.stderr).toBe(0);
    expect(live.stdout).toContain(`OK: ${head} entries, hash chain and history index sound`);
    const busy = await meshCp(['log', 'import', fromLevel], pgEnv(target.name));
    expect(busy.code).toBe(2);
    expect(busy.stderr).toContain('is in use by a running mesh-cp; stop every instance first');
    await stop(second.cp);

    const fromPg = join(dir.path, 'from-pg.ndjson');
    const back = await meshCp(['log', 'export', '--out', fromPg], pgEnv(target.name));
    expect(back.code, back.stderr).toBe(0);
    const original = readFileSync(fromLevel, 'utf8');
    // The server added nothing (defaults exist), so the export is the same bytes.
    expect(readFileSync(fromPg, 'utf8')).toBe(original);
    const level = join(dir.path, 'level-again');
    expect((await meshCp(['log', 'import', '--data', level, fromPg])).code).toBe(0);
    expect((await meshCp(['log', 'verify', '--data', level])).stdout).toContain(`OK: ${head} entries`);
  }, 60_000);

  it('verify and export on PostgreSQL name the revision of a changed entry; a damaged import keeps nothing', async () => {
    const { cp, base } = await serve(pgEnv(source.name));
    const created = Number(
      (await putPermission(Number(new URL(base).port), 'a')).headers.get('etag')?.replace(/"/g, ''),
    );
    await stop(cp);

    await onDatabase(source.name, (client) =>
      client.query(
        `UPDATE mesh_log_entries SET entry = replace(entry, '"mesh.io/service":"a"', '"mesh.io/service":"A"')
         WHERE revision = $1`,
        [created],
      ),
    );
    const res = await meshCp(['log', 'verify'], pgEnv(source.name));
    expect(res.code).toBe(1);
    expect(res.stdout).toContain(`DAMAGED at revision ${created}: hash does not match the entry`);
    const exp = await meshCp(
      ['log', 'export', '--out', join(dir.path, 'damaged.ndjson')],
      pgEnv(source.name),
    );
    expect(exp.code).toBe(1);
    expect(exp.stderr).toContain(`DAMAGED at revision ${created}`);

    // 1500 sealed entries: the import inserts the first 1000 before it meets the damage at 1200.
    const fresh = await createTestDatabase();
    databases.push(fresh);
    const sealed: string[] = [];
    let prevHash = GENESIS_HASH;
    for (let revision = 1; revision <= 1500; revision += 1) {
      const name = `m${revision}`;
      const resource = {
        type: 'Mesh',
        name,
        creationTime: '2024-01-01T00:00:00.000Z',
        modificationTime: '2024-01-01T00:00:00.000Z',
      };
      const input = {
        kind: 'Mesh',
        name,
        operation: 'create' as const,
        resource,
        actor: { name: 'a', groups: [], address: '127.0.0.1' },
        origin: 'local',
      };
      const { entry, json } = sealEntry(input, revision, '2024-01-01T00:00:00.000Z', prevHash);
      sealed.push(json);
      prevHash = entry.hash;
    }
    const big = join(dir.path, 'big.ndjson');
    writeFileSync(big, `${sealed.join('\n')}\n`);
    const damaged = join(dir.path, 'damaged-import.ndjson');
    writeFileSync(
      damaged,
      `${sealed.map((line, i) => (i === 1199 ? line.replace('"m1200"', '"m1200x"') : line)).join('\n')}\n`,
    );
    const broken = await meshCp(['log', 'import', damaged], pgEnv(fresh.name));
    expect(broken.code).toBe(1);
    expect(broken.stderr).toContain('DAMAGED at line 1200 (revision 1200): hash does not match the entry');
    expect(await countEntries(fresh.name)).toBe(0);
    const ok = await meshCp(['log', 'import', big], pgEnv(fresh.name));
    expect(ok.code, ok.stderr).toBe(0);
    expect(await countEntries(fresh.name)).toBe(1500);
    expect((await meshCp(['log', 'verify'], pgEnv(fresh.name))).stdout).toContain('OK: 1500 entries');
    const snapshot = await meshCp(['log', 'snapshot'], pgEnv(fresh.name));
    expect(snapshot.code).toBe(2);
    expect(snapshot.stderr).toContain('snapshots are kept in LevelDB only for now');
  }, 60_000);
});
