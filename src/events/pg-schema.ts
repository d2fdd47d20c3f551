import type { ClientBase } from 'pg';

import { AppError } from '../util/errors.js';
import { GENESIS_HASH } from './hash.js';

/** One schema change: applied once, in its own transaction, in version order. */
interface Migration {
  version: number;
  name: string;
  sql: string;
}

/** First key of every advisory lock mesh-cp takes (`mesh` in ASCII); the second names the lock. */
export const PG_LOCK_SPACE = 0x6d657368;

/**
 * Second keys of the advisory locks: migrating (transaction level); the log (session level: shared
 * by every running instance and by the tools that read, taken alone by an import); leading (session
 * level: the one instance that runs the work that must run once).
 */
export const PG_LOCK = { migrate: 1, log: 2, leader: 3 } as const;

// The log: entries keyed by revision with the columns of the history index, meta values, and the
// head row that every appending transaction moves (it serializes writers).
const MIGRATIONS: readonly Migration[] = [
  {
    version: 1,
    name: 'event log',
    sql: `
      CREATE TABLE mesh_log_entries (
        revision bigint PRIMARY KEY,
        kind text NOT NULL,
        mesh text NOT NULL,
        name text NOT NULL,
        entry text NOT NULL
      );
      CREATE INDEX mesh_log_entries_history ON mesh_log_entries (kind, mesh, name, revision);
      CREATE TABLE mesh_log_meta (key text PRIMARY KEY, value text NOT NULL);
      CREATE TABLE mesh_log_head (
        id smallint PRIMARY KEY CHECK (id = 1),
        revision bigint NOT NULL,
        hash text NOT NULL
      );
      INSERT INTO mesh_log_head (id, revision, hash) VALUES (1, 0, '${GENESIS_HASH}');
    `,
  },
  {
    // Several instances on one database: who is alive (each refreshes its row), and each one's
    // runtime status of zones and proxies (never in the log: it is not configuration).
    version: 2,
    name: 'instances and runtime status',
    sql: `
      CREATE TABLE mesh_instances (
        id text PRIMARY KEY,
        started timestamptz NOT NULL DEFAULT now(),
        seen timestamptz NOT NULL DEFAULT now()
      );
      CREATE TABLE mesh_status (
        kind text NOT NULL,
        key text NOT NULL,
        instance text NOT NULL,
        value text,
        updated timestamptz NOT NULL DEFAULT clock_timestamp(),
        PRIMARY KEY (kind, key, instance)
      );
      CREATE INDEX mesh_status_updated ON mesh_status (updated);
    `,
  },
];

/**
 * Brings the database's schema to the newest version, one migration per transaction under a
 * transaction-level advisory lock (instances starting at once wait for each other); returns the
 * versions it applied. Refuses a schema newer than this build knows.
 */
export async function migratePgSchema(client: ClientBase): Promise<number[]> {
  const applied: number[] = [];
  for (;;) {
    await client.query('BEGIN');
    try {
      await client.query('SELECT pg_advisory_xact_lock($1, $2)', [PG_LOCK_SPACE, PG_LOCK.migrate]);
      await client.query(`
        CREATE TABLE IF NOT EXISTS mesh_schema_migrations (
          version integer PRIMARY KEY,
          name text NOT NULL,
          applied_at timestamptz NOT NULL DEFAULT now()
        )`);
      const { rows } = await client.query<{ version: number | null }>(
        'SELECT max(version) AS version FROM mesh_schema_migrations',
      );
      const current = rows[0]?.version ?? 0;
      const latest = MIGRATIONS[MIGRATIONS.length - 1].version;
      if (current > latest) {
        throw new AppError(
          'UNAVAILABLE',
          'Event log schema too new',
          `the database's schema is at version ${current}; this mesh-cp knows versions up to ${latest}`,
        );
      }
      const next = MIGRATIONS.find((migration) => migration.version > current);
      if (next === undefined) {
        await client.query('COMMIT');
        return applied;
      }
      await client.query(next.sql);
      await client.query('INSERT INTO mesh_schema_migrations (version, name) VALUES ($1, $2)', [
        next.version,
        next.name,
      ]);
      await client.query('COMMIT');
      applied.push(next.version);
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }
}
