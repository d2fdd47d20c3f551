import { randomBytes } from 'node:crypto';

import pg from 'pg';

/** Where the tests find PostgreSQL: the machine's (127.0.0.1:5432, user postgres), or PGHOST/PGPORT/PGUSER. */
export const TEST_PG = {
  host: process.env.PGHOST ?? '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  user: process.env.PGUSER ?? 'postgres',
  password: process.env.PGPASSWORD,
};

/** A database made for one test, and its removal. */
export interface TestDatabase {
  name: string;
  drop(): Promise<void>;
}

async function admin<T>(run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ ...TEST_PG, database: 'postgres', connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new Error(
      `PostgreSQL at ${TEST_PG.host}:${TEST_PG.port} (user ${TEST_PG.user}) cannot be reached: ` +
        `${(error as Error).message}. These tests need it: start it (pg_ctlcluster 15 main start, ` +
        `see docs/postgres.md) or point PGHOST/PGPORT/PGUSER at one`,
      { cause: error },
    );
  }
  try {
    return await run(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates an empty database `mesh_cp_test_<random>`; fails with a clear message when PostgreSQL is down. */
export async function createTestDatabase(): Promise<TestDatabase> {
  const name = `mesh_cp_test_${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`));
  return {
    name,
    drop: () =>
      admin((client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)).then(() => undefined),
  };
}

/** Runs `run` with a client connected to database `name`, and disconnects it. */
export async function onDatabase<T>(name: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ ...TEST_PG, database: name });
  await client.connect();
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
