import pg from 'pg';
import type { ClientConfig } from 'pg';

import { AppError } from '../util/errors.js';
import { errorChain } from '../util/error-chain.js';
import { verifyEntries } from './hash.js';
import { revisionRange } from './keys.js';
import type { OfflineLog, StoreCheck, ToolResult } from './log-admin.js';
import { DamageFound, exportCheckedEntries, importCheckedEntries } from './log-damage.js';
import { describePgDatabase } from './pg-connection.js';
import { PG_LOCK, PG_LOCK_SPACE, migratePgSchema } from './pg-schema.js';
import type { SnapshotStore } from './snapshot-store.js';
import type { LogEntry } from './types.js';

const CHUNK = 1000;

/** A PostgreSQL log opened by a log tool (`mesh-cp log ...`), holding the log lock meanwhile. */
export interface PgStore {
  /** `database "mesh" on 127.0.0.1:5432`. */
  where: string;
  client: pg.Client;
  close(): Promise<void>;
}

/** Snapshots stay in LevelDB for now: a PostgreSQL log has none, so replays start at 1. */
const NO_SNAPSHOTS: SnapshotStore = {
  list: async () => [],
  read: async (revision) => {
    throw new AppError('NOT_FOUND', 'No snapshot', `no snapshot at revision ${revision} in PostgreSQL`);
  },
  write: async () => {
    throw new AppError('BAD_REQUEST', 'No snapshots', 'snapshots are kept in LevelDB only for now');
  },
  retain: async () => 0,
};

/**
 * Opens the PostgreSQL log for a log tool. `existing` requires the log's tables (verify, replay,
 * export): those tools only read, and share the log lock with running instances. Otherwise the
 * schema is created (import), and the tool takes the log lock alone: it is refused while any
 * mesh-cp instance uses the database, and instances refuse to start while it runs.
 */
export async function openPgStore(connection: ClientConfig, opts: { existing: boolean }): Promise<PgStore> {
  const where = describePgDatabase(connection);
  const client = new pg.Client(connection);
  client.on('error', () => undefined);
  try {
    await client.connect();
  } catch (error) {
    await client.end().catch(() => undefined);
    throw new AppError(
      'UNAVAILABLE',
      'PostgreSQL unreachable',
      `cannot connect to PostgreSQL ${where}: ${errorChain(error)}`,
    );
  }
  try {
    const { rows } = await client.query<{ locked: boolean }>(
      `SELECT ${opts.existing ? 'pg_try_advisory_lock_shared' : 'pg_try_advisory_lock'}($1, $2) AS locked`,
      [PG_LOCK_SPACE, PG_LOCK.log],
    );
    if (rows[0]?.locked !== true) {
      throw new AppError(
        'UNAVAILABLE',
        'Log in use',
        opts.existing
          ? `the event log in PostgreSQL ${where} is being imported into; wait for the import to end`
          : `the event log in PostgreSQL ${where} is in use by a running mesh-cp; stop every instance first`,
      );
    }
    if (opts.existing) {
      const found = await client.query<{ table: string | null }>(
        "SELECT to_regclass('mesh_log_head')::text AS table",
      );
      if (found.rows[0]?.table == null) {
        throw new AppError('NOT_FOUND', 'No data', `there is no mesh-cp log in PostgreSQL ${where}`);
      }
    } else {
      await migratePgSchema(client);
    }
  } catch (error) {
    await client.end().catch(() => undefined);
    throw error instanceof AppError
      ? error
      : new AppError('UNAVAILABLE', 'PostgreSQL failed', `PostgreSQL ${where}: ${errorChain(error)}`);
  }
  return { where, client, close: () => client.end() };
}

async function headRow(client: pg.Client): Promise<{ head: number; hash: string }> {
  const { rows } = await client.query<{ revision: string; hash: string }>(
    'SELECT revision, hash FROM mesh_log_head WHERE id = 1',
  );
  return { head: Number(rows[0]?.revision ?? 0), hash: rows[0]?.hash ?? '' };
}

interface StoredRow {
  revision: string;
  kind: string;
  mesh: string;
  name: string;
  entry: string;
}

/**
 * The stored rows in revision order, each entry parsed and checked against its columns (the
 * revision and the history index's kind, mesh and name); a mismatch stops with {@link DamageFound}.
 */
async function* storedEntries(
  client: pg.Client,
  from = 1,
  to = Infinity,
): AsyncIterable<{ entry: LogEntry; json: string }> {
  let after = from - 1;
  for (;;) {
    const { rows } = await client.query<StoredRow>(
      `SELECT revision, kind, mesh, name, entry FROM mesh_log_entries WHERE revision > $1 AND revision <= $2
       ORDER BY revision LIMIT ${CHUNK}`,
      [after, Number.isFinite(to) ? to : Number.MAX_SAFE_INTEGER],
    );
    for (const row of rows) {
      const revision = Number(row.revision);
      let entry: LogEntry;
      try {
        entry = JSON.parse(row.entry) as LogEntry;
      } catch {
        throw new DamageFound({ revision, reason: 'the stored entry is not valid JSON' });
      }
      if (typeof entry !== 'object' || entry === null || entry.revision !== revision) {
        throw new DamageFound({
          revision,
          reason: 'the stored entry does not carry the revision of its row',
        });
      }
      if (entry.kind !== row.kind || (entry.mesh ?? '') !== row.mesh || entry.name !== row.name) {
        throw new DamageFound({ revision, reason: 'its history-index columns do not match the entry' });
      }
      yield { entry, json: row.entry };
    }
    if (rows.length < CHUNK) return;
    after = Number(rows[rows.length - 1].revision);
  }
}

/** A read-only view of the PostgreSQL log for the tools (no snapshots: they stay in LevelDB). */
export async function createPgLogReader(store: PgStore): Promise<OfflineLog> {
  const { head } = await headRow(store.client);
  return {
    head: () => head,
    async *read(fromRevision, toRevision) {
      const { from, to } = revisionRange(fromRevision, toRevision);
      for await (const { entry } of storedEntries(store.client, from, Math.min(to, head))) yield entry;
    },
    snapshots: NO_SNAPSHOTS,
  };
}

/** `mesh-cp log verify` on PostgreSQL: the chain of `verifyEntries`, the history columns and the head row. */
export async function verifyPgStore(store: PgStore): Promise<StoreCheck> {
  const { head, hash } = await headRow(store.client);
  let last = '';
  let chain: Awaited<ReturnType<typeof verifyEntries>>;
  try {
    chain = await verifyEntries(
      (async function* () {
        for await (const { entry } of storedEntries(store.client)) {
          yield entry;
          last = entry.hash;
        }
      })(),
    );
  } catch (error) {
    if (error instanceof DamageFound) return { ok: false, head, ...error.damage };
    throw error;
  }
  if (!chain.ok) return { ok: false, head, revision: chain.revision, reason: chain.reason };
  if (chain.head !== head || (head > 0 && last !== hash)) {
    return {
      ok: false,
      head,
      revision: Math.max(head, chain.head),
      reason: `the head row (revision ${head}) does not match the last entry (revision ${chain.head})`,
    };
  }
  return { ok: true, head, historyKeys: chain.head };
}

/** `mesh-cp log export` from PostgreSQL: each entry's stored JSON, in order, once the chain holds up to it. */
export async function exportPgLog(
  store: PgStore,
  write: (line: string) => Promise<void>,
): Promise<ToolResult> {
  return exportCheckedEntries(storedEntries(store.client), write);
}

/**
 * `mesh-cp log import` into PostgreSQL: the exported entries verbatim into an empty log, checking
 * the chain while it goes, in one transaction: on damage nothing is kept.
 */
export async function importPgLog(store: PgStore, lines: AsyncIterable<string>): Promise<ToolResult> {
  const { client } = store;
  const { rows } = await client.query<{ n: number }>('SELECT count(*)::int AS n FROM mesh_log_entries');
  if (rows[0].n > 0 || (await headRow(client)).head > 0) {
    throw new AppError(
      'BAD_REQUEST',
      'Log not empty',
      `PostgreSQL ${store.where} already holds a mesh-cp log: import only into an empty one`,
    );
  }
  let pending: LogEntry[] = [];
  let head = 0;
  let hash = '';
  const flush = async (): Promise<void> => {
    if (pending.length === 0) return;
    await client.query(
      `INSERT INTO mesh_log_entries (revision, kind, mesh, name, entry)
       SELECT * FROM unnest($1::bigint[], $2::text[], $3::text[], $4::text[], $5::text[])`,
      [
        pending.map((e) => e.revision),
        pending.map((e) => e.kind),
        pending.map((e) => e.mesh ?? ''),
        pending.map((e) => e.name),
        pending.map((e) => JSON.stringify(e)),
      ],
    );
    pending = [];
  };
  await client.query('BEGIN');
  let result: Awaited<ReturnType<typeof importCheckedEntries>>;
  try {
    result = await importCheckedEntries(lines, async (entry) => {
      head = entry.revision;
      hash = entry.hash;
      pending.push(entry);
      if (pending.length >= CHUNK) await flush();
    });
  } catch (error) {
    await client.query('ROLLBACK').catch(() => undefined);
    throw error;
  }
  if (!result.ok) {
    await client.query('ROLLBACK');
    return result;
  }
  await flush();
  if (head > 0) {
    await client.query('UPDATE mesh_log_head SET revision = $1, hash = $2 WHERE id = 1', [head, hash]);
  }
  await client.query('COMMIT');
  return { ok: true, head };
}
