import { createServer } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { sealEntry, verifyEntries } from '../../src/events/hash.js';
import { createPgLog, type PgLog } from '../../src/events/pg-log.js';
import { PG_LOCK, PG_LOCK_SPACE, migratePgSchema } from '../../src/events/pg-schema.js';
import type { EventInput, LogEntry } from '../../src/events/types.js';
import { resourceKey } from '../../src/resources/keys.js';
import { createTestDatabase, onDatabase, TEST_PG } from '../helpers/postgres.js';
import type { TestDatabase } from '../helpers/postgres.js';
import { eventually } from '../helpers/eventually.js';

const actor = { name: 'alice', groups: ['mesh-system:admin'], address: '127.0.0.1' };

function change(name: string): EventInput {
  const resource = {
    type: 'Mesh',
    name,
    creationTime: '2024-01-01T00:00:00.000Z',
    modificationTime: '2024-01-01T00:00:00.000Z',
  };
  return { kind: 'Mesh', name, operation: 'create', resource, actor, origin: 'local' };
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

/** A port nothing listens on: bound, read and closed again. */
async function closedPort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Waits until `check` holds (polling), for up to 20 s: write retries and notifications here take well under a second. */
const until = (check: () => boolean | Promise<boolean>): Promise<true> => eventually(check, 20_000);

describe('PostgreSQL event log: what the contract suite does not cover', () => {
  const databases: TestDatabase[] = [];
  const logs: PgLog[] = [];

  async function database(): Promise<TestDatabase> {
    const db = await createTestDatabase();
    databases.push(db);
    return db;
  }

  function log(name: string, retry?: { firstMs: number; maxMs: number }): PgLog {
    const made = createPgLog({ connection: { ...TEST_PG, database: name }, retry });
    logs.push(made);
    return made;
  }

  afterEach(async () => {
    for (const made of logs.splice(0)) await made.close();
    for (const db of databases.splice(0)) await db.drop();
  });

  it('lets several instances append to one database: each applies every entry once, in order, chained', async () => {
    const { name } = await database();
    const [a, b, c] = [log(name), log(name), log(name)];
    await Promise.all([a.open(), b.open(), c.open()]);
    const seen = new Map<PgLog, number[]>([
      [a, []],
      [b, []],
      [c, []],
    ]);
    for (const [each, revisions] of seen)
      each.onCommit((entries) => revisions.push(...entries.map((e) => e.revision)));
    // Interleaved appends: each instance's batches race the others' for the head row.
    const appended = await Promise.all(
      Array.from({ length: 60 }, async (_, i) => {
        const { entries, durable } = [a, b, c][i % 3].append([change(`m${i}`), change(`n${i}`)]);
        await durable;
        return entries;
      }),
    );
    const revisions = appended.flat().map((entry) => entry.revision);
    expect(new Set(revisions).size).toBe(120);
    expect(Math.max(...revisions)).toBe(120);
    for (const each of [a, b, c]) {
      await each.catchUp();
      expect(each.head()).toBe(120);
      expect(seen.get(each)).toEqual(Array.from({ length: 120 }, (_, i) => i + 1));
      expect(await verifyEntries(each.read(1))).toEqual({ ok: true, head: 120 });
    }
    // What each appender was answered is what every instance reads.
    const stored = new Map((await collect(c.read(1))).map((entry) => [entry.revision, entry]));
    for (const entry of appended.flat()) expect(stored.get(entry.revision)).toEqual(entry);
  });

  it('refuses a group decided on what another instance changed first, and lets the others through', async () => {
    const { name } = await database();
    const [a, b] = [log(name), log(name)];
    await Promise.all([a.open(), b.open()]);
    await a.append([change('x')]).durable;
    await b.catchUp();
    // b changes x; a, which has not read that yet, appends a group decided on x, and one that is not.
    await b.append([{ ...change('x'), operation: 'update' }]).durable;
    expect(a.head()).toBe(1);
    const reads = (key: string) => ({ keys: new Set([key]), meshes: new Set<string>(), all: false });
    const onX = a.append(
      [{ ...change('x'), operation: 'update' }],
      undefined,
      reads(resourceKey('Mesh', undefined, 'x')),
    );
    const onY = a.append([change('y')], undefined, reads(resourceKey('Mesh', undefined, 'y')));
    const refused = await onX.durable.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toMatchObject({ name: 'AppendConflict' });
    await onY.durable;
    // By the time the conflict is reported, a has applied b's change (deciding again sees it).
    expect(onY.entries[0].revision).toBe(3);
    expect((await collect(a.read(1))).map((e) => [e.revision, e.name, e.operation])).toEqual([
      [1, 'x', 'create'],
      [2, 'x', 'update'],
      [3, 'y', 'create'],
    ]);
    await b.catchUp();
    expect(await verifyEntries(b.read(1))).toEqual({ ok: true, head: 3 });
  });

  it('wakes the other instances on each append (LISTEN/NOTIFY), and still finds entries without a notification', async () => {
    const { name } = await database();
    const a = log(name);
    // A poll far longer than the test: only the notification can wake it.
    const b = createPgLog({ connection: { ...TEST_PG, database: name }, pollMs: 3_600_000 });
    logs.push(b);
    await Promise.all([a.open(), b.open()]);
    // An instance follows the others from its first catch-up (start-up makes it once loaded).
    await b.catchUp();
    await a.append([change('p')]).durable;
    await until(() => b.head() === 1);
    // An entry written behind every instance's back (no NOTIFY): the poll finds it.
    const c = createPgLog({ connection: { ...TEST_PG, database: name }, pollMs: 20 });
    logs.push(c);
    await c.open();
    await c.catchUp();
    const sealed = (await collect(a.read(1)))[0];
    const next = sealEntry(change('q'), 2, sealed.time, sealed.hash);
    await onDatabase(name, async (client) => {
      await client.query('BEGIN');
      await client.query("INSERT INTO mesh_log_entries VALUES (2, 'Mesh', '', 'q', $1)", [next.json]);
      await client.query('UPDATE mesh_log_head SET revision = 2, hash = $1', [next.entry.hash]);
      await client.query('COMMIT');
    });
    await until(() => c.head() === 2);
    expect(b.head()).toBe(1);
    await b.catchUp();
    expect(b.head()).toBe(2);
  });

  it('migrates once when several instances start at once, and again finds nothing to do', async () => {
    const { name } = await database();
    const applied = await Promise.all(
      Array.from({ length: 4 }, () => onDatabase(name, (client) => migratePgSchema(client))),
    );
    expect(applied.flat().sort()).toEqual([1, 2]);
    expect(await onDatabase(name, (client) => migratePgSchema(client))).toEqual([]);
    const rows = await onDatabase(name, async (client) => {
      const result = await client.query<{ version: number }>(
        'SELECT version FROM mesh_schema_migrations ORDER BY version',
      );
      return result.rows;
    });
    expect(rows).toEqual([{ version: 1 }, { version: 2 }]);
  });

  it('fails the appends of a batch whose connection is lost with a reason, then reconnects', async () => {
    const { name } = await database();
    const writes = log(name, { firstMs: 10, maxMs: 50 });
    await writes.open();
    const kept = writes.append([change('a'), change('b')]).entries;
    await writes.append([]).durable;
    // The writer is the backend holding the session lock; an operator (or a failover) ends it.
    await onDatabase(name, (client) =>
      client.query(
        `SELECT pg_terminate_backend(pid) FROM pg_locks
         WHERE locktype = 'advisory' AND classid = $1 AND objid = $2
           AND database = (SELECT oid FROM pg_database WHERE datname = current_database())`,
        [PG_LOCK_SPACE, PG_LOCK.log],
      ),
    );
    const lost = writes.append([change('lost')]);
    const failure = await lost.durable.then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toMatchObject({ code: 'UNAVAILABLE' });
    expect((failure as Error).message).toContain('event log cannot write');
    expect(writes.head()).toBe(2);
    await until(() => writes.writeFailure() === undefined);
    const next = writes.append([change('c')]);
    expect(next.entries[0].revision).toBe(3);
    await next.durable;
    const entries: LogEntry[] = await collect(writes.read(1));
    expect(entries).toEqual([...kept, ...next.entries]);
    expect(await verifyEntries(writes.read(1))).toEqual({ ok: true, head: 3 });
  });

  it('tells the appenders of a batch whose commit reply was lost that its outcome is unknown, and reads it back once it reconnects', async () => {
    const { name } = await database();
    let fault: Error | undefined;
    const writes = createPgLog({
      connection: { ...TEST_PG, database: name },
      retry: { firstMs: 10, maxMs: 20 },
      fault: () => fault,
    });
    logs.push(writes);
    await writes.open();
    const kept = writes.append([change('a')]);
    await kept.durable;
    fault = new Error('connection lost before the reply');
    const unknown = writes.append([change('landed'), change('also landed')]);
    await expect(unknown.durable).rejects.toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      title: 'Write outcome unknown',
      message: expect.stringContaining('connection lost before the reply') as unknown,
    });
    // The batch is in the database, though its appenders could not be told it was stored.
    const stored = () =>
      onDatabase(name, async (client) => {
        const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM mesh_log_entries');
        return rows[0].n;
      });
    expect(await stored()).toBe(3);
    fault = undefined;
    await until(() => writes.writeFailure() === undefined);
    await writes.catchUp();
    expect(writes.head()).toBe(3);
    const next = writes.append([change('b')]);
    await next.durable;
    expect(next.entries[0]).toMatchObject({ revision: 4 });
    expect((await collect(writes.read(1))).map((e) => e.name)).toEqual(['a', 'landed', 'also landed', 'b']);
    expect(await verifyEntries(writes.read(1))).toEqual({ ok: true, head: 4 });
  });

  it('says which database it cannot reach', async () => {
    const port = await closedPort();
    const unreachable = createPgLog({
      connection: {
        host: '127.0.0.1',
        port,
        user: 'postgres',
        database: 'nowhere',
        connectionTimeoutMillis: 2000,
      },
    });
    await expect(unreachable.open()).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      message: expect.stringContaining(
        `cannot connect to PostgreSQL database "nowhere" on 127.0.0.1:${port}`,
      ) as unknown,
    });
  });
});
