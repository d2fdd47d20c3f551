import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { PG_LOCK, PG_LOCK_SPACE } from '../../src/events/pg-schema.js';
import { createTestDatabase, onDatabase, pgStoreEnv, TEST_PG } from '../helpers/postgres.js';
import type { TestDatabase } from '../helpers/postgres.js';
import { startMeshCp } from '../helpers/process.js';
import type { CpProcess } from '../helpers/process.js';

const json = { 'content-type': 'application/json' };

function putRoute(port: number, name: string, weight: number): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}/meshes/default/traffic-routes/${name}`, {
    method: 'PUT',
    headers: json,
    body: JSON.stringify({
      type: 'TrafficRoute',
      mesh: 'default',
      name,
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': 'backend' } }],
      conf: { split: [{ weight, destination: { 'mesh.io/service': 'backend' } }] },
    }),
  });
}

async function getJson(
  port: number,
  path: string,
): Promise<{ status: number; body: unknown; etag: string | null }> {
  const res = await fetch(`http://127.0.0.1:${port}${path}`);
  return { status: res.status, body: await res.json(), etag: res.headers.get('etag') };
}

async function stop(cp: CpProcess): Promise<void> {
  cp.proc.kill('SIGTERM');
  const exit = await cp.exited;
  expect(exit.code, cp.stderr()).toBe(0);
}

describe('mesh-cp run on PostgreSQL', () => {
  let database: TestDatabase;
  const started: CpProcess[] = [];
  beforeAll(async () => {
    database = await createTestDatabase();
  });
  afterEach(() => {
    for (const cp of started.splice(0)) if (cp.proc.exitCode === null) cp.proc.kill('SIGKILL');
  });
  afterAll(() => database?.drop());

  /** `node dist/bin/mesh-cp.cjs run` on the PostgreSQL store of `name`. */
  function start(name: string): CpProcess {
    const cp = startMeshCp(pgStoreEnv(name));
    started.push(cp);
    return cp;
  }

  it('keeps writes in PostgreSQL: a restart replays them, with history and point-in-time reads', async () => {
    const first = start(database.name);
    const { apiPort } = await first.ready;
    expect(first.lines.find((line) => line.msg === 'mesh-cp ready')?.store).toBe(
      `postgres:${database.name}@${TEST_PG.host}:${TEST_PG.port}`,
    );
    const created = await putRoute(apiPort, 'web', 1);
    expect(created.status).toBe(201);
    const createdAt = Number(JSON.parse(created.headers.get('etag') as string));
    const updated = await putRoute(apiPort, 'web', 2);
    expect(updated.status).toBe(200);
    const before = await getJson(apiPort, '/meshes/default/traffic-routes/web');

    // A second instance on the same database serves the same log (multi-instance: postgres-cluster).
    const second = start(database.name);
    const secondReady = await second.ready;
    expect(await getJson(secondReady.apiPort, '/meshes/default/traffic-routes/web')).toEqual(before);
    await stop(second);
    await stop(first);

    const rows = await onDatabase(database.name, (client) =>
      client.query<{ n: number }>(
        "SELECT count(*)::int AS n FROM mesh_log_entries WHERE kind = 'TrafficRoute' AND name = 'web'",
      ),
    );
    expect(rows.rows[0].n).toBe(2);

    const again = start(database.name);
    const ready = await again.ready;
    expect(ready.revision).toBeGreaterThanOrEqual(createdAt + 1);
    const after = await getJson(ready.apiPort, '/meshes/default/traffic-routes/web');
    expect(after).toEqual(before);
    const history = await getJson(ready.apiPort, '/meshes/default/traffic-routes/web/_history');
    expect(history.status).toBe(200);
    const items = (history.body as { items: { revision: number; operation: string }[] }).items;
    expect(items.map((item) => item.operation)).toEqual(['create', 'update']);
    expect(items[0].revision).toBe(createdAt);
    const past = await getJson(ready.apiPort, `/meshes/default/traffic-routes/web?revision=${createdAt}`);
    expect(past.status).toBe(200);
    expect(past.body).toMatchObject({ conf: { split: [{ weight: 1 }] } });
    await stop(again);
  }, 60_000);

  it('answers 503 with a reason when the connection of a write is lost, then writes again', async () => {
    const cp = start(database.name);
    const { apiPort, diagnosticsPort } = await cp.ready;
    await onDatabase(database.name, (client) =>
      client.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks
         WHERE locktype = 'advisory' AND classid = $1 AND objid = $2
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [PG_LOCK_SPACE, PG_LOCK.log],
      ),
    );
    const lost = await putRoute(apiPort, 'lost', 3);
    expect(lost.status).toBe(503);
    expect(JSON.stringify(await lost.json())).toContain('event log cannot write');
    // The log reconnects by itself; /ready says when.
    for (;;) {
      const res = await fetch(`http://127.0.0.1:${diagnosticsPort}/ready`);
      await res.body?.cancel();
      if (res.status === 200) break;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    expect((await putRoute(apiPort, 'kept', 4)).status).toBe(201);
    expect((await getJson(apiPort, '/meshes/default/traffic-routes/lost')).status).toBe(404);
    expect((await getJson(apiPort, '/meshes/default/traffic-routes/kept')).status).toBe(200);
    await stop(cp);
  }, 60_000);
});
