import { afterEach, describe, expect, it } from 'vitest';

import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startPlane, testConfig } from '../helpers/control-plane.js';
import type pg from 'pg';
import { connectTo, createTestDatabase, onDatabase, pgStoreEnv } from '../helpers/postgres.js';
import type { TestDatabase } from '../helpers/postgres.js';
import { eventually } from '../helpers/eventually.js';

const json = { 'content-type': 'application/json' };

/** Waits until `check` holds (polling), for up to 20 s: the cluster timers of these tests are 1-2 s at most. */
const until = (check: () => boolean | Promise<boolean>): Promise<true> => eventually(check, 20_000);

function route(name: string, weight: number, mesh = 'default'): Record<string, unknown> {
  return {
    type: 'TrafficRoute',
    mesh,
    name,
    sources: [{ match: { 'mesh.io/service': '*' } }],
    destinations: [{ match: { 'mesh.io/service': 'backend' } }],
    conf: { split: [{ weight, destination: { 'mesh.io/service': 'backend' } }] },
  };
}

describe('several control planes on one PostgreSQL log (in process)', () => {
  const databases: TestDatabase[] = [];
  const planes: ControlPlane[] = [];
  /** Connections a test polls its database on. */
  const clients: pg.Client[] = [];

  afterEach(async () => {
    for (const client of clients.splice(0)) await client.end();
    for (const cp of planes.splice(0)) await cp.close();
    for (const db of databases.splice(0)) await db.drop();
  });

  async function cluster(n: number): Promise<ControlPlane[]> {
    const db = await createTestDatabase();
    databases.push(db);
    const env = pgStoreEnv(db.name);
    // Started together, as a rolling deploy or a restart of every pod would.
    const started = await Promise.all(
      Array.from({ length: n }, () => startPlane(testConfig(env), { listen: false })),
    );
    planes.push(...started);
    await Promise.all(started.map((cp) => cp.defaultsReady));
    return started;
  }

  const put = (cp: ControlPlane, path: string, body: unknown, headers: Record<string, string> = {}) =>
    cp.app.inject({
      method: 'PUT',
      url: path,
      headers: { ...json, ...headers },
      payload: JSON.stringify(body),
    });
  const get = (cp: ControlPlane, path: string) => cp.app.inject({ method: 'GET', url: path });

  it('starts several at once on one cluster id, one default mesh and one set of signing keys', async () => {
    const [a, b, c] = await cluster(3);
    for (const cp of [b, c]) await until(() => cp.log.head() === a.log.head());
    const ids = await Promise.all([a, b, c].map(async (cp) => (await get(cp, '/')).json()));
    expect(new Set(ids.map((id) => id.clusterId)).size).toBe(1);
    expect(new Set(ids.map((id) => id.instanceId)).size).toBe(3);
    const meshes = await get(a, '/meshes');
    expect(meshes.json().items.map((m: { name: string }) => m.name)).toEqual(['default']);
    const keys = await onDatabase(databases[0].name, async (client) => {
      const { rows } = await client.query<{ name: string; n: number }>(
        `SELECT name, count(*)::int AS n FROM mesh_log_entries
         WHERE kind IN ('GlobalSecret', 'Secret') GROUP BY name ORDER BY name`,
      );
      return rows;
    });
    // Each key written once: the instances that lost the race decided again and found it there.
    expect(keys.length).toBeGreaterThan(0);
    for (const key of keys) expect(key).toMatchObject({ n: 1 });
  });

  it('reads its own writes at once, and the others reflect them', async () => {
    const [a, b] = await cluster(2);
    const created = await put(a, '/meshes/default/traffic-routes/web', route('web', 1));
    expect(created.statusCode).toBe(201);
    const etag = created.headers.etag;
    expect((await get(a, '/meshes/default/traffic-routes/web')).headers.etag).toBe(etag);
    await until(async () => (await get(b, '/meshes/default/traffic-routes/web')).headers.etag === etag);
    expect((await get(b, '/meshes/default/traffic-routes/web')).json()).toEqual(
      (await get(a, '/meshes/default/traffic-routes/web')).json(),
    );
  });

  it("listens for the others' notifications only while another instance runs", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const env = pgStoreEnv(db.name);
    const cluster = { tickMs: 50, deadAfterMs: 1000 };
    // The last statement of each listener session (pg_stat_activity keeps it while idle), asked on
    // one connection of the test's (not one per poll; its own last statement is this SELECT).
    const watcher = await connectTo(db.name);
    clients.push(watcher);
    const listeners = async () => {
      const { rows } = await watcher.query<{ query: string }>(
        `SELECT query FROM pg_stat_activity
         WHERE datname = $1 AND query IN ('LISTEN mesh_log', 'UNLISTEN mesh_log') ORDER BY pid`,
        [db.name],
      );
      return rows.map((row) => row.query);
    };
    const a = await startPlane(testConfig(env), { listen: false, cluster });
    planes.push(a);
    // Alone: its own appends are all there is to hear, so it does not listen.
    await until(async () => (await listeners()).join() === 'UNLISTEN mesh_log');

    const b = await startPlane(testConfig(env), { listen: false, cluster });
    planes.push(b);
    await until(async () => (await listeners()).join() === 'LISTEN mesh_log,LISTEN mesh_log');
    // Each is woken by the other's writes, in both directions.
    for (const [from, to, name] of [
      [a, b, 'one'],
      [b, a, 'two'],
    ] as const) {
      const created = await put(from, `/meshes/default/traffic-routes/${name}`, route(name, 1));
      expect(created.statusCode).toBe(201);
      await until(
        async () =>
          (await get(to, `/meshes/default/traffic-routes/${name}`)).headers.etag === created.headers.etag,
      );
    }

    // B stops (its row goes with it): A is alone again.
    await b.close();
    planes.splice(planes.indexOf(b), 1);
    await until(async () => (await listeners()).join() === 'UNLISTEN mesh_log');
  });

  it('refuses with 412 a write whose If-Match another instance has made stale, even before it has read it', async () => {
    const [a, b] = await cluster(2);
    const created = await put(a, '/meshes/default/traffic-routes/web', route('web', 1));
    const etag = created.headers.etag as string;
    await until(async () => (await get(b, '/meshes/default/traffic-routes/web')).headers.etag === etag);
    // b changes it; a is asked to change the version it knows, at once (its tail may lag).
    const onB = await put(b, '/meshes/default/traffic-routes/web', route('web', 2), { 'if-match': etag });
    expect(onB.statusCode).toBe(200);
    const onA = await put(a, '/meshes/default/traffic-routes/web', route('web', 3), { 'if-match': etag });
    expect(onA.statusCode).toBe(412);
    expect((await get(a, '/meshes/default/traffic-routes/web')).json()).toMatchObject({
      conf: { split: [{ weight: 2 }] },
    });
  });

  it('loses no update when instances race on one resource: each write is in its history', async () => {
    const [a, b, c] = await cluster(3);
    await put(a, '/meshes/default/traffic-routes/web', route('web', 1));
    const writes = await Promise.all(
      Array.from({ length: 30 }, (_, i) =>
        put([a, b, c][i % 3], '/meshes/default/traffic-routes/web', route('web', i + 10)),
      ),
    );
    expect(writes.map((w) => w.statusCode).every((s) => s === 200)).toBe(true);
    for (const cp of [a, b, c]) await cp.log.catchUp();
    const history = (await get(a, '/meshes/default/traffic-routes/web/_history?size=100')).json();
    const weights = (history.items as { resource?: { conf: { split: { weight: number }[] } } }[])
      .map((item) => item.resource?.conf.split[0].weight)
      .filter((w): w is number => w !== undefined);
    expect(new Set(weights)).toEqual(new Set([1, ...Array.from({ length: 30 }, (_, i) => i + 10)]));
    // Every answered revision is the one that wrote that body, and all instances agree on the last.
    const last = (await get(a, '/meshes/default/traffic-routes/web')).json();
    for (const cp of [b, c])
      expect((await get(cp, '/meshes/default/traffic-routes/web')).json()).toEqual(last);
  });

  const postSet = (cp: ControlPlane, items: unknown[]) =>
    cp.app.inject({ method: 'POST', url: '/_changes', headers: json, payload: JSON.stringify({ items }) });

  it('writes a change set in one transaction, and a refused set writes no row', async () => {
    const [a] = await cluster(1);
    const res = await postSet(a, [
      { type: 'Mesh', name: 'shop' },
      route('r1', 1, 'shop'),
      route('r2', 1, 'shop'),
      route('r3', 1),
    ]);
    expect(res.statusCode, res.body).toBe(200);
    const { changeSet, revision } = res.json<{ changeSet: string; revision: number }>();
    const rows = await onDatabase(databases[0].name, async (client) => {
      const result = await client.query<{ revision: string; tx: string }>(
        `SELECT revision, xmin::text AS tx FROM mesh_log_entries
         WHERE (entry::jsonb)->>'changeSet' = $1 ORDER BY revision`,
        [changeSet],
      );
      return result.rows;
    });
    const revisions = rows.map((r) => Number(r.revision));
    expect(revisions.at(-1)).toBe(revision);
    expect(revisions).toEqual(revisions.map((_, i) => revisions[0] + i));
    // Rows inserted by one transaction share its id (xmin).
    expect(new Set(rows.map((r) => r.tx)).size).toBe(1);
    const count = async () =>
      onDatabase(databases[0].name, async (client) =>
        Number((await client.query<{ n: string }>('SELECT count(*) AS n FROM mesh_log_entries')).rows[0].n),
      );
    const before = await count();
    const refused = await postSet(a, [route('r4', 1, 'shop'), route('r5', 1, 'nowhere')]);
    expect(refused.statusCode).toBe(400);
    expect(refused.json().item.index).toBe(1);
    expect(await count()).toBe(before);
  });

  it('loses nothing when two instances race change sets on the same resources', async () => {
    const [a, b] = await cluster(2);
    expect((await postSet(a, [route('x', 1), route('y', 1)])).statusCode).toBe(200);
    await until(async () => (await get(b, '/meshes/default/traffic-routes/y')).statusCode === 200);
    const sets = await Promise.all(
      Array.from({ length: 20 }, (_, i) => postSet([a, b][i % 2], [route('x', i + 10), route('y', i + 10)])),
    );
    expect(sets.map((s) => s.statusCode).every((s) => s === 200)).toBe(true);
    for (const cp of [a, b]) await cp.log.catchUp();
    const weights = async (name: string): Promise<number[]> => {
      const history = (await get(a, `/meshes/default/traffic-routes/${name}/_history?size=100`)).json();
      return (history.items as { resource: { conf: { split: { weight: number }[] } } }[]).map(
        (item) => item.resource.conf.split[0].weight,
      );
    };
    const all = [1, ...Array.from({ length: 20 }, (_, i) => i + 10)];
    // Every set's write of each resource is in its history, in the same order for both resources:
    // the sets were decided one after the other, never interleaved.
    const [x, y] = [await weights('x'), await weights('y')];
    expect(new Set(x)).toEqual(new Set(all));
    expect(y).toEqual(x);
    for (const cp of [a, b]) {
      const [gx, gy] = [
        await get(cp, '/meshes/default/traffic-routes/x'),
        await get(cp, '/meshes/default/traffic-routes/y'),
      ];
      expect(gx.json().conf).toEqual(gy.json().conf);
    }
    // Sets with If-Match on the same revision: one wins, the other is 412 (decided on the newest state).
    const etag = (await get(a, '/meshes/default/traffic-routes/x')).headers.etag as string;
    const raced = await Promise.all(
      [a, b].map((cp, i) =>
        postSet(cp, [{ upsert: route('x', 100 + i), ifMatch: etag }, route('y', 100 + i)]),
      ),
    );
    expect(raced.map((r) => r.statusCode).sort()).toEqual([200, 412]);
  });

  it('leaves no resource in a deleted mesh when one instance deletes it while another writes into it', async () => {
    const [a, b] = await cluster(2);
    expect((await put(a, '/meshes/shop', { type: 'Mesh', name: 'shop' })).statusCode).toBe(201);
    await until(async () => (await get(b, '/meshes/shop')).statusCode === 200);
    const [removed, written] = await Promise.all([
      a.app.inject({ method: 'DELETE', url: '/meshes/shop' }),
      put(b, '/meshes/shop/traffic-routes/late', route('late', 1, 'shop')),
    ]);
    expect(removed.statusCode).toBe(200);
    // Either the route came first (and the mesh delete took it along) or it was refused (no mesh).
    expect([201, 400]).toContain(written.statusCode);
    for (const cp of [a, b]) {
      await cp.log.catchUp();
      expect((await get(cp, '/meshes/shop/traffic-routes/late')).statusCode).toBe(404);
    }
  });

  it("has the leader end a dead instance's proxy and zone subscriptions, and shares each instance's status", async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const env = pgStoreEnv(db.name);
    const cluster = { tickMs: 50, deadAfterMs: 1000 };
    const a = await startPlane(testConfig(env), { listen: false, cluster });
    planes.push(a);
    // What an instance killed with SIGKILL leaves: its last heartbeat and its open subscriptions.
    const open = {
      subscriptions: [
        { id: 'gone-1', connectTime: '2026-01-01T00:00:00.000Z', controlPlaneInstanceId: 'gone' },
      ],
    };
    // Both in one transaction: the leader (ticking every 50 ms) must not find the dead instance
    // before its rows are there, which a real instance's rows always are.
    await onDatabase(db.name, async (client) => {
      await client.query('BEGIN');
      await client.query(
        "INSERT INTO mesh_instances (id, seen) VALUES ('gone', now() - interval '1 minute')",
      );
      await client.query(
        `INSERT INTO mesh_status (kind, key, instance, value) VALUES
         ('dataplane', 'default/web-1', 'gone', $1), ('zone', 'east', 'gone', $1)`,
        [JSON.stringify(open)],
      );
      await client.query('COMMIT');
    });
    await until(
      () => a.status.dataplaneInsight('default', 'web-1')?.subscriptions?.[0]?.disconnectTime !== undefined,
    );
    expect(a.status.zoneInsight('east')?.subscriptions?.[0]).toMatchObject({
      id: 'gone-1',
      disconnectTime: expect.any(String),
    });
    const instances = await onDatabase(
      db.name,
      async (client) => (await client.query('SELECT id FROM mesh_instances')).rows,
    );
    expect(instances.map((row) => row.id)).not.toContain('gone');

    // A second instance sees what the first publishes of its own (here, a proxy it serves).
    const b = await startPlane(testConfig(env), { listen: false, cluster });
    planes.push(b);
    const mine = { subscriptions: [{ id: 'a-1', connectTime: '2026-01-02T00:00:00.000Z' }] };
    a.status.setDataplaneInsight('default', 'api-1', mine);
    await until(() => b.status.dataplaneInsight('default', 'api-1') !== undefined);
    expect(b.status.dataplaneInsight('default', 'api-1')).toEqual(mine);
  });

  it('has the leader remove the status of instances gone for longer than the retention, on every instance', async () => {
    const db = await createTestDatabase();
    databases.push(db);
    const env = pgStoreEnv(db.name);
    const cluster = { tickMs: 50, deadAfterMs: 1000, statusRetentionMs: 1500 };
    const a = await startPlane(testConfig(env), { listen: false, cluster });
    planes.push(a);
    // A started alone: it took the leader lock at its first tick.
    const aId = (JSON.parse((await get(a, '/')).body) as { instanceId: string }).instanceId;
    const ended = (id: string) => ({
      subscriptions: [
        { id, connectTime: '2026-01-01T00:00:00.000Z', disconnectTime: '2026-01-01T01:00:00.000Z' },
      ],
    });
    const open = { subscriptions: [{ id: 'o-1', connectTime: '2026-01-01T00:00:00.000Z' }] };
    // Rows of instances that are gone (no heartbeat row): ended subscriptions, one still open (an
    // instance cut off from PostgreSQL for a while, alive): only the ended ones may go.
    await onDatabase(db.name, async (client) => {
      await client.query(
        `INSERT INTO mesh_status (kind, key, instance, value) VALUES
         ('dataplane', 'default/old-1', 'gone-1', $1), ('zone', 'north', 'gone-1', $2),
         ('dataplane', 'default/open-1', 'gone-2', $3)`,
        [JSON.stringify(ended('g-1')), JSON.stringify(ended('g-2')), JSON.stringify(open)],
      );
    });
    // A's own status with an ended subscription: a running instance's rows are never removed.
    a.status.setDataplaneInsight('default', 'api-1', ended('a-1'));
    // B starts while the rows are within the retention, and reads them all.
    const b = await startPlane(testConfig(env), { listen: false, cluster });
    planes.push(b);
    expect(b.status.zoneInsight('north')?.subscriptions?.[0]?.id).toBe('g-2');
    expect(b.status.dataplaneInsight('default', 'old-1')).toBeDefined();
    await until(() => b.status.dataplaneInsight('default', 'api-1') !== undefined);

    // Past the retention the leader turns them into removals, which both instances apply...
    await until(
      () =>
        b.status.dataplaneInsight('default', 'old-1') === undefined &&
        b.status.zoneInsight('north') === undefined,
    );
    const reader = await connectTo(db.name);
    clients.push(reader);
    const rows = async () =>
      (await reader.query('SELECT key, instance, value FROM mesh_status ORDER BY key')).rows as Array<{
        key: string;
        instance: string;
        value: string | null;
      }>;
    // ...and deletes the removals once they are older than the retention too.
    await until(async () => !(await rows()).some((row) => row.instance === 'gone-1'));
    const left = await rows();
    expect(left.map((row) => [row.key, row.instance, row.value !== null])).toEqual(
      expect.arrayContaining([
        ['default/api-1', aId, true],
        ['default/open-1', 'gone-2', true],
      ]),
    );
    expect(b.status.dataplaneInsight('default', 'open-1')).toEqual(open);
    expect(b.status.dataplaneInsight('default', 'api-1')).toEqual(ended('a-1'));
    expect(a.status.zoneInsight('north')).toBeUndefined();
  });
});
