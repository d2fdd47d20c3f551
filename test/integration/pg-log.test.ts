import { createServer } from 'node:net';

import { afterEach, describe, expect, it } from 'vitest';

import { verifyEntries } from '../../src/events/hash.js';
import { createPgLog } from '../../src/events/pg-log.js';
import { PG_LOCK, PG_LOCK_SPACE, migratePgSchema } from '../../src/events/pg-schema.js';
import type { EventInput, EventLog, LogEntry } from '../../src/events/types.js';
import { AppError } from '../../src/util/errors.js';
import { createTestDatabase, onDatabase, TEST_PG } from '../helpers/postgres.js';
import type { TestDatabase } from '../helpers/postgres.js';

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

/** Waits (polling) until `check` holds; the test's own timeout bounds it. */
async function until(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 20));
}

describe('PostgreSQL event log: what the contract suite does not cover', () => {
  const databases: TestDatabase[] = [];
  const logs: EventLog[] = [];

  async function database(): Promise<TestDatabase> {
    const db = await createTestDatabase();
    databases.push(db);
    return db;
  }

  function log(name: string, retry?: { firstMs: number; maxMs: number }): EventLog {
    const made = createPgLog({ connection: { ...TEST_PG, database: name }, retry });
    logs.push(made);
    return made;
  }

  afterEach(async () => {
    for (const made of logs.splice(0)) await made.close();
    for (const db of databases.splice(0)) await db.drop();
  });

  it('lets one instance write a database and refuses a second one, naming the database', async () => {
    const { name } = await database();
    const first = log(name);
    await first.open();
    await first.append([change('a')]).durable;
    const second = log(name);
    const refused = await second.open().then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(refused).toBeInstanceOf(AppError);
    expect(refused).toMatchObject({ code: 'UNAVAILABLE' });
    expect((refused as Error).message).toContain(`database "${name}" on ${TEST_PG.host}:${TEST_PG.port}`);
    expect((refused as Error).message).toContain('in use by another mesh-cp instance');
    expect((refused as Error).message).toContain('next step of issue 19');
    await first.close();
    await second.open();
    expect(second.head()).toBe(1);
  });

  it('migrates once when several instances start at once, and again finds nothing to do', async () => {
    const { name } = await database();
    const applied = await Promise.all(
      Array.from({ length: 4 }, () => onDatabase(name, (client) => migratePgSchema(client))),
    );
    expect(applied.flat()).toEqual([1]);
    expect(await onDatabase(name, (client) => migratePgSchema(client))).toEqual([]);
    const rows = await onDatabase(name, async (client) => {
      const result = await client.query<{ version: number }>('SELECT version FROM mesh_schema_migrations');
      return result.rows;
    });
    expect(rows).toEqual([{ version: 1 }]);
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
         WHERE locktype = 'advisory' AND classid = $1 AND objid = $2`,
        [PG_LOCK_SPACE, PG_LOCK.writer],
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

  it('drops a batch that committed but was answered with a failure, once it reconnects', async () => {
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
    const answered503 = writes.append([change('landed'), change('also landed')]);
    await expect(answered503.durable).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    // The batch is in the database, though its appenders were told it failed.
    const stored = () =>
      onDatabase(name, async (client) => {
        const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM mesh_log_entries');
        return rows[0].n;
      });
    expect(await stored()).toBe(3);
    expect(await collect(writes.read(1))).toEqual(kept.entries);
    fault = undefined;
    await until(() => writes.writeFailure() === undefined);
    expect(await stored()).toBe(1);
    const next = writes.append([change('b')]);
    expect(next.entries[0]).toMatchObject({ revision: 2, prevHash: kept.entries[0].hash });
    await next.durable;
    expect(await verifyEntries(writes.read(1))).toEqual({ ok: true, head: 2 });
    await writes.close();
    const reopened = log(name);
    await reopened.open();
    expect(await collect(reopened.read(1))).toEqual([...kept.entries, ...next.entries]);
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
