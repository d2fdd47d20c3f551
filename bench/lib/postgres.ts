// The machine's PostgreSQL for the bench's PostgreSQL figures: a database of its own per server,
// created and dropped by the bench, and the env that puts mesh-cp's log in it.
import { randomBytes } from 'node:crypto';

import pg from 'pg';

/** Where the bench finds PostgreSQL: the machine's (127.0.0.1:5432, user postgres), or PGHOST/PGPORT/PGUSER. */
export const BENCH_PG = {
  host: process.env.PGHOST ?? '127.0.0.1',
  port: Number(process.env.PGPORT ?? 5432),
  user: process.env.PGUSER ?? 'postgres',
  password: process.env.PGPASSWORD,
};

/** A database made for the bench, and its removal. */
export interface BenchDatabase {
  name: string;
  drop(): Promise<void>;
}

async function admin(sql: string): Promise<void> {
  const client = new pg.Client({ ...BENCH_PG, database: 'postgres', connectionTimeoutMillis: 5000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new Error(
      `PostgreSQL at ${BENCH_PG.host}:${BENCH_PG.port} (user ${BENCH_PG.user}) cannot be reached: ` +
        `${(error as Error).message}. The PostgreSQL figures need it: start it (pg_ctlcluster 15 main ` +
        `start, see docs/postgres.md) or point PGHOST/PGPORT/PGUSER at one`,
      { cause: error },
    );
  }
  try {
    await client.query(sql);
  } finally {
    await client.end().catch(() => undefined);
  }
}

/** Creates an empty database `mesh_cp_bench_<random>`; fails saying so when PostgreSQL is down. */
export async function createBenchDatabase(): Promise<BenchDatabase> {
  const name = `mesh_cp_bench_${randomBytes(6).toString('hex')}`;
  await admin(`CREATE DATABASE ${name}`);
  let dropped: Promise<void> | undefined;
  return {
    name,
    drop: () => (dropped ??= admin(`DROP DATABASE IF EXISTS ${name} WITH (FORCE)`)),
  };
}

/** The env of `mesh-cp run` with its event log in database `name` (`store.type: postgres`). */
export function pgStoreEnv(name: string): Record<string, string> {
  return {
    MESH_STORE_TYPE: 'postgres',
    MESH_STORE_POSTGRES_HOST: BENCH_PG.host,
    MESH_STORE_POSTGRES_PORT: String(BENCH_PG.port),
    MESH_STORE_POSTGRES_USER: BENCH_PG.user,
    ...(BENCH_PG.password === undefined ? {} : { MESH_STORE_POSTGRES_PASSWORD: BENCH_PG.password }),
    MESH_STORE_POSTGRES_DB_NAME: name,
  };
}

/** The client config of database `name`, for the bare `pg` baselines. */
export function pgClientConfig(name: string): pg.ClientConfig {
  return { ...BENCH_PG, database: name };
}
