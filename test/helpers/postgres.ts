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

async function admin<T>(run: (client: pg.Client) => Promise<T>, needs = 'These tests'): Promise<T> {
  const client = new pg.Client({ ...TEST_PG, database: 'postgres', connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new Error(
      `PostgreSQL at ${TEST_PG.host}:${TEST_PG.port} (user ${TEST_PG.user}) cannot be reached: ` +
        `${(error as Error).message}. ${needs} need it: start it (pg_ctlcluster 15 main start, ` +
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

/**
 * Creates an empty database `<prefix><random>` (`mesh_cp_test_` unless told); fails with a clear
 * message, naming who `needs` it, when PostgreSQL is down. `drop` may be called more than once.
 */
export async function createTestDatabase(
  opts: { prefix?: string; needs?: string } = {},
): Promise<TestDatabase> {
  const name = `${opts.prefix ?? 'mesh_cp_test_'}${randomBytes(6).toString('hex')}`;
  await admin((client) => client.query(`CREATE DATABASE ${name}`), opts.needs);
  let dropped: Promise<void> | undefined;
  return {
    name,
    drop: () =>
      (dropped ??= admin(
        (client) => client.query(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`),
        opts.needs,
      ).then(() => undefined)),
  };
}

/** The env of `mesh-cp run` (or `testConfig`) with its event log in database `name`. */
export function pgStoreEnv(name: string): Record<string, string> {
  return {
    MESH_STORE_TYPE: 'postgres',
    MESH_STORE_POSTGRES_HOST: TEST_PG.host,
    MESH_STORE_POSTGRES_PORT: String(TEST_PG.port),
    MESH_STORE_POSTGRES_USER: TEST_PG.user,
    ...(TEST_PG.password === undefined ? {} : { MESH_STORE_POSTGRES_PASSWORD: TEST_PG.password }),
    MESH_STORE_POSTGRES_DB_NAME: name,
  };
}

/** A client connected to database `name`, for a test that asks it many times (it ends the client). */
export async function connectTo(name: string): Promise<pg.Client> {
  const client = new pg.Client({ ...TEST_PG, database: name });
  await client.connect();
  return client;
}

/** Runs `run` with a client connected to database `name`, and disconnects it. */
export async function onDatabase<T>(name: string, run: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = await connectTo(name);
  try {
    return await run(client);
  } finally {
    await client.end();
  }
}
