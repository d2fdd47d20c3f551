// The machine's PostgreSQL for the bench's PostgreSQL figures: a database of its own per server,
// created and dropped by the bench, and the env that puts mesh-cp's log in it (the tests' helpers,
// with the bench's names and message).
import type pg from 'pg';

import { createTestDatabase, TEST_PG } from '../../test/helpers/postgres.js';
import type { TestDatabase } from '../../test/helpers/postgres.js';

export { pgStoreEnv } from '../../test/helpers/postgres.js';

/** A database made for the bench, and its removal. */
export type BenchDatabase = TestDatabase;

/** Creates an empty database `mesh_cp_bench_<random>`; fails saying so when PostgreSQL is down. */
export function createBenchDatabase(): Promise<BenchDatabase> {
  return createTestDatabase({ prefix: 'mesh_cp_bench_', needs: 'The PostgreSQL figures' });
}

/** The client config of database `name`, for the bare `pg` baselines. */
export function pgClientConfig(name: string): pg.ClientConfig {
  return { ...TEST_PG, database: name };
}
