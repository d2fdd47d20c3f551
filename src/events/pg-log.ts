import pg from 'pg';
import type { ClientConfig, QueryResultRow } from 'pg';

import { AppError } from '../util/errors.js';
import { errorChain } from '../util/error-chain.js';
import { GENESIS_HASH } from './hash.js';
import { createGroupCommit, logUnavailable } from './group-commit.js';
import type { CommitBatch, GroupCommitDeps } from './group-commit.js';
import { assertMetaKey, revisionRange } from './keys.js';
import { describePgDatabase } from './pg-connection.js';
import { PG_LOCK, PG_LOCK_SPACE, migratePgSchema } from './pg-schema.js';
import type { EventLog, LogEntry } from './types.js';

/** Options of {@link createPgLog}. */
export interface PgLogOptions {
  /** Where the log's database is (see `pgClientConfig`); the database must exist. */
  connection: ClientConfig;
  /** Most connections: one writer plus at least one for reads (default 10). */
  maxConnections?: number;
  /** Clock for entry times (tests inject one). */
  now?: () => Date;
  /** Receives what a commit listener throws; by default it is rethrown on a later turn. */
  onListenerError?: (error: unknown) => void;
  /** Told once when writes start failing (PostgreSQL unreachable) and once when they work again. */
  onWriteState?: GroupCommitDeps['onWriteState'];
  /** Back-off of the reconnects after a failed write (default 100 ms doubling to 5 s). */
  retry?: GroupCommitDeps['retry'];
  /**
   * Test hook: while it returns an error, each batch fails with it after its transaction committed
   * (a reply lost with the connection) and each reconnect fails with it before connecting.
   */
  fault?: () => Error | undefined;
}

const CHUNK = 1000;
/** A write or read PostgreSQL does not answer within this fails (and the writer reconnects). */
const QUERY_TIMEOUT_MS = 30_000;

// One statement, so one round trip and one transaction per batch: the head row moves from the
// revision before the batch to its last one (the row lock serializes writers; a writer that lost
// the race moves nothing and inserts nothing), then the entries and the meta values.
const APPEND_SQL = `
  WITH head AS (
    UPDATE mesh_log_head SET revision = $1, hash = coalesce($2, hash)
    WHERE id = 1 AND revision = $3
    RETURNING revision
  ), entries AS (
    INSERT INTO mesh_log_entries (revision, kind, mesh, name, entry)
    SELECT * FROM unnest($4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[])
    WHERE EXISTS (SELECT 1 FROM head)
  ), meta AS (
    INSERT INTO mesh_log_meta (key, value)
    SELECT * FROM unnest($9::text[], $10::text[])
    WHERE EXISTS (SELECT 1 FROM head)
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
  )
  SELECT count(*)::int AS moved FROM head`;

const UPSERT_META_SQL = `INSERT INTO mesh_log_meta (key, value) VALUES ($1, $2)
  ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`;

interface HeadRow {
  revision: string;
  hash: string;
  last: string | null;
}

/**
 * An `EventLog` in PostgreSQL: one transaction per group-commit batch (entries with their history
 * columns, meta and the head row together). One process writes a database, holding a
 * session-level advisory lock; several writers come with the next step of issue 19.
 */
export function createPgLog(options: PgLogOptions): EventLog {
  const where = describePgDatabase(options.connection);
  const clientConfig: ClientConfig = { ...options.connection, query_timeout: QUERY_TIMEOUT_MS };
  let writer: pg.Client | undefined;
  let pool: pg.Pool | undefined;
  let closing: Promise<void> | undefined;
  const pendingMeta = new Set<Promise<void>>();

  /** Connects the writer and takes the session lock that makes it the only writer of the database. */
  async function connectWriter(): Promise<pg.Client> {
    const client = new pg.Client(clientConfig);
    // A connection lost while idle is reported here; the next write fails and reconnects.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw logUnavailable(`cannot connect to PostgreSQL ${where}: ${errorChain(error)}`, error);
    }
    try {
      const { rows } = await client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock($1, $2) AS locked',
        [PG_LOCK_SPACE, PG_LOCK.writer],
      );
      if (rows[0]?.locked !== true) {
        throw logUnavailable(
          `the event log in PostgreSQL ${where} is in use by another mesh-cp instance (advisory lock ` +
            `held); one instance per database for now: several instances on one database come with ` +
            `the next step of issue 19`,
        );
      }
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error instanceof AppError
        ? error
        : logUnavailable(`PostgreSQL ${where}: ${errorChain(error)}`, error);
    }
    return client;
  }

  async function readHead(client: pg.Client): Promise<{ head: number; hash: string }> {
    const { rows } = await client.query<HeadRow>(
      'SELECT revision, hash, (SELECT max(revision) FROM mesh_log_entries) AS last FROM mesh_log_head',
    );
    const row = rows[0];
    const head = Number(row.revision);
    if (Number(row.last ?? 0) !== head) {
      throw new AppError(
        'INTERNAL',
        'Event log corrupt',
        `in PostgreSQL ${where} the head row says revision ${head} but the last entry is ${String(row.last)}`,
      );
    }
    return { head, hash: row.hash };
  }

  function currentWriter(): pg.Client {
    if (writer === undefined) throw logUnavailable(`not connected to PostgreSQL ${where}`);
    return writer;
  }

  function currentPool(): pg.Pool {
    if (pool === undefined) throw logUnavailable('the event log is closed');
    return pool;
  }

  /** A read on the pool; a PostgreSQL failure is UNAVAILABLE with its reason. */
  async function query<Row extends QueryResultRow>(
    sql: string,
    params: unknown[],
    action: 'read' | 'write' = 'read',
  ): Promise<Row[]> {
    try {
      return (await currentPool().query<Row>(sql, params)).rows;
    } catch (error) {
      if (error instanceof AppError) throw error;
      throw logUnavailable(`event log cannot ${action} PostgreSQL ${where}: ${errorChain(error)}`, error);
    }
  }

  async function write(batch: CommitBatch): Promise<void> {
    const { entries } = batch;
    const before = entries.length > 0 ? entries[0].revision - 1 : batch.head;
    const meta = Object.entries(batch.meta);
    const { rows } = await currentWriter().query<{ moved: number }>(APPEND_SQL, [
      batch.head,
      entries.length > 0 ? entries[entries.length - 1].hash : null,
      before,
      entries.map((entry) => entry.revision),
      entries.map((entry) => entry.kind),
      entries.map((entry) => entry.mesh ?? ''),
      entries.map((entry) => entry.name),
      batch.json,
      meta.map(([key]) => key),
      meta.map(([, value]) => value),
    ]);
    if (rows[0]?.moved !== 1) {
      throw new AppError(
        'INTERNAL',
        'Event log head moved',
        `in PostgreSQL ${where} the head is no longer at revision ${before}: another writer appended`,
      );
    }
    injectedFault();
  }

  function injectedFault(): void {
    const error = options.fault?.();
    if (error) throw error;
  }

  /**
   * Reconnects after a failed write and drops what a batch answered 503 left behind (a commit whose
   * reply was lost): the store's head becomes the durable `head` again.
   */
  async function recover(head: number, hash: string): Promise<void> {
    injectedFault();
    const old = writer;
    writer = undefined;
    await old?.end().catch(() => undefined);
    const client = await connectWriter();
    try {
      await client.query('BEGIN');
      const { rows } = await client.query<{ revision: string; hash: string }>(
        'SELECT revision, hash FROM mesh_log_head WHERE id = 1 FOR UPDATE',
      );
      const stored = Number(rows[0].revision);
      let atHead = rows[0].hash;
      if (stored > head) {
        const kept = await client.query<{ entry: string }>(
          'SELECT entry FROM mesh_log_entries WHERE revision = $1',
          [head],
        );
        const entry = kept.rows[0]?.entry;
        atHead = entry === undefined ? GENESIS_HASH : (JSON.parse(entry) as LogEntry).hash;
      }
      if (stored < head || atHead !== hash) {
        throw new AppError(
          'INTERNAL',
          'Event log corrupt',
          `after reconnecting, PostgreSQL ${where} has head ${stored} (hash ${atHead}), not the durable ${head} (hash ${hash})`,
        );
      }
      if (stored > head) {
        await client.query('DELETE FROM mesh_log_entries WHERE revision > $1', [head]);
        await client.query('UPDATE mesh_log_head SET revision = $1, hash = $2 WHERE id = 1', [head, hash]);
      }
      await client.query('COMMIT');
    } catch (error) {
      await client.end().catch(() => undefined);
      throw error;
    }
    writer = client;
  }

  const core = createGroupCommit({
    write,
    recover,
    retry: options.retry,
    onWriteState: options.onWriteState,
    now: options.now,
    onListenerError: options.onListenerError,
  });

  async function shutdown(): Promise<void> {
    await core.stop();
    await Promise.allSettled(pendingMeta);
    const [client, readers] = [writer, pool];
    writer = undefined;
    pool = undefined;
    // Ending the writer's session releases its advisory lock.
    await client?.end().catch(() => undefined);
    await readers?.end().catch(() => undefined);
  }

  /** Rows of `sql` (which takes `[after, before, ...params]` and returns 1000 rows at most) page by page. */
  async function* pages(
    sql: string,
    range: { from: number; to: number },
    reverse: boolean,
    params: unknown[] = [],
  ): AsyncIterable<{ revision: string; entry: string }[]> {
    let low = range.from - 1;
    let high = Math.min(range.to, core.head()) + 1;
    while (low + 1 < high) {
      const rows = await query<{ revision: string; entry: string }>(sql, [low, high, ...params]);
      if (rows.length === 0) return;
      yield rows;
      const last = Number(rows[rows.length - 1].revision);
      if (reverse) high = last;
      else low = last;
      if (rows.length < CHUNK) return;
    }
  }

  const forwardSql = `SELECT revision, entry FROM mesh_log_entries WHERE revision > $1 AND revision < $2
    ORDER BY revision LIMIT ${CHUNK}`;

  return {
    async open() {
      if (closing) await closing;
      if (writer !== undefined) return;
      const client = await connectWriter();
      let start: { head: number; hash: string };
      try {
        await migratePgSchema(client);
        start = await readHead(client);
      } catch (error) {
        await client.end().catch(() => undefined);
        throw error instanceof AppError
          ? error
          : logUnavailable(`cannot open the event log in PostgreSQL ${where}: ${errorChain(error)}`, error);
      }
      writer = client;
      pool = new pg.Pool({ ...clientConfig, max: Math.max(1, (options.maxConnections ?? 10) - 1) });
      // An idle read connection that dies is dropped by the pool; the next read opens another.
      pool.on('error', () => undefined);
      core.start(start.head, start.hash);
    },

    close() {
      closing ??= shutdown().finally(() => {
        closing = undefined;
      });
      return closing;
    },

    head: () => core.head(),

    append: (inputs, meta) => core.append(inputs, meta),

    async *read(fromRevision, toRevision) {
      core.assertReadable();
      for await (const rows of pages(forwardSql, revisionRange(fromRevision, toRevision), false)) {
        for (const row of rows) yield JSON.parse(row.entry) as LogEntry;
      }
    },

    async *readRawChunks({ from = 1, to, reverse = false }) {
      core.assertReadable();
      const sql = reverse
        ? `SELECT revision, entry FROM mesh_log_entries WHERE revision > $1 AND revision < $2
            ORDER BY revision DESC LIMIT ${CHUNK}`
        : forwardSql;
      for await (const rows of pages(sql, revisionRange(from, to), reverse)) {
        yield rows.map((row) => row.entry);
      }
    },

    async *history(kind, mesh, name) {
      core.assertReadable();
      const sql = `SELECT revision, entry FROM mesh_log_entries
        WHERE revision > $1 AND revision < $2 AND kind = $3 AND mesh = $4 AND name = $5
        ORDER BY revision LIMIT ${CHUNK}`;
      for await (const rows of pages(sql, { from: 1, to: Infinity }, false, [kind, mesh ?? '', name])) {
        for (const row of rows) yield JSON.parse(row.entry) as LogEntry;
      }
    },

    async getMeta(key) {
      core.assertReadable();
      const rows = await query<{ value: string }>('SELECT value FROM mesh_log_meta WHERE key = $1', [key]);
      return rows[0]?.value;
    },

    async putMeta(key, value) {
      core.assertWritable();
      assertMetaKey(key);
      const put = query(UPSERT_META_SQL, [key, value], 'write').then(() => undefined);
      pendingMeta.add(put);
      try {
        await put;
      } finally {
        pendingMeta.delete(put);
      }
    },

    onCommit: (listener) => core.onCommit(listener),

    stats: () => core.stats(),

    writeFailure: () => core.writeFailure(),
  };
}
