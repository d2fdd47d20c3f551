import pg from 'pg';
import type { ClientConfig, QueryResultRow } from 'pg';

import { AppError } from '../util/errors.js';
import { errorChain } from '../util/error-chain.js';
import { CommitOutcomeUnknown, createGroupCommit, logUnavailable } from './group-commit.js';
import type { CommitBatch, GroupCommitDeps } from './group-commit.js';
import { assertMetaKey, revisionRange } from './keys.js';
import { describePgDatabase } from './pg-connection.js';
import { PG_LOCK, PG_LOCK_SPACE, migratePgSchema } from './pg-schema.js';
import type { LogAdapter } from './log-lifecycle.js';
import { logOverCore } from './log-over-core.js';
import type { SharedLog } from './shared-log.js';
import type { LogEntry } from './types.js';

/** Options of {@link createPgLog}. */
export interface PgLogOptions {
  /** Where the log's database is (see `pgClientConfig`); the database must exist. */
  connection: ClientConfig;
  /** Most connections of the log: the writer, the listener, and at least one for reads (default 8). */
  maxConnections?: number;
  /**
   * Told once when the connection that wakes this instance for other instances' appends drops
   * (their entries then arrive by the poll alone) and once when it listens again.
   */
  onListenState?: (change: { listening: false; reason: string } | { listening: true }) => void;
  /**
   * How often the log looks for other instances' entries without being notified (default 500 ms):
   * a lost notification delays them by this much at most, never loses them.
   */
  pollMs?: number;
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
   * (a reply lost with the connection: outcome unknown) and each reconnect fails with it before
   * connecting.
   */
  fault?: () => Error | undefined;
}

const CHUNK = 1000;
/** A write or read PostgreSQL does not answer within this fails (and the writer reconnects). */
const QUERY_TIMEOUT_MS = 30_000;
/** The channel each append notifies (payload: the new head), so other instances read at once. */
export const PG_LOG_CHANNEL = 'mesh_log';

// One statement, so one round trip and one transaction per batch: the head row moves from the
// revision before the batch to its last one (the row lock serializes writers; a writer that lost
// the race moves nothing and inserts nothing), then the entries, the meta values, and a
// notification to the other instances (sent at commit). The entries' JSON comes as one text, a
// line each (JSON has no raw line break), numbered after the revision before: node-postgres
// escapes each element of a text array, ~5 µs per entry of our size, and PostgreSQL parses the
// array back; splitting one text costs neither. The statement is prepared once per connection
// (named): planning this CTE cost PostgreSQL ~0.2 ms per batch, a quarter of its time.
const APPEND_SQL = `
  WITH head AS (
    UPDATE mesh_log_head SET revision = $1, hash = coalesce($2, hash)
    WHERE id = 1 AND revision = $3
    RETURNING revision
  ), entries AS (
    INSERT INTO mesh_log_entries (revision, kind, mesh, name, entry)
    SELECT $3::bigint + n, kind, mesh, name, entry
    FROM unnest($4::text[], $5::text[], $6::text[], string_to_array($7::text, E'\\n'))
      WITH ORDINALITY AS batch (kind, mesh, name, entry, n)
    WHERE EXISTS (SELECT 1 FROM head)
  ), meta AS (
    INSERT INTO mesh_log_meta (key, value)
    SELECT * FROM unnest($8::text[], $9::text[])
    WHERE EXISTS (SELECT 1 FROM head)
    ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value
  )
  SELECT revision, pg_notify('${PG_LOG_CHANNEL}', revision::text) FROM head`;

/**
 * Whether PostgreSQL answered a failed statement with an ERROR: the statement's transaction was
 * rolled back and the session lives on, so nothing of it was stored. Anything else may follow a
 * commit: a FATAL or PANIC ends the session (a shutdown, a terminated backend) at a point the
 * client cannot see, and an error of the connection brings no answer at all.
 */
function refusedByServer(error: unknown): boolean {
  return error instanceof pg.DatabaseError && error.severity === 'ERROR';
}

/** What one append statement writes: the entries after revision `before`, up to `head`. */
export interface PgAppend {
  before: number;
  head: number;
  /** The last entry's hash (null when the batch holds meta values only: the head hash stays). */
  lastHash: string | null;
  kinds: string[];
  /** The entries' meshes, '' for a global resource. */
  meshes: string[];
  names: string[];
  /** Each entry's JSON, as sealed (one line each). */
  json: readonly string[];
  meta?: Readonly<Record<string, string>>;
}

/**
 * The append statement of a batch (a node-postgres query, prepared once per connection): it
 * returns one row when the head was at `before` and is now at `head`, none when another writer
 * moved it first (nothing written). Exported for the bench's PostgreSQL floor, which writes the
 * same batches with it.
 */
export function pgAppendQuery(append: PgAppend): pg.QueryConfig {
  const { json } = append;
  if (json.length !== append.head - append.before)
    throw new Error(
      `a batch of ${json.length} entries cannot take revisions ${append.before + 1}..${append.head}`,
    );
  for (const line of json) {
    if (line.includes('\n')) throw new Error('an entry of the log holds a line break');
  }
  const meta = Object.entries(append.meta ?? {});
  return {
    name: 'mesh_log_append',
    text: APPEND_SQL,
    values: [
      append.head,
      append.lastHash,
      append.before,
      append.kinds,
      append.meshes,
      append.names,
      json.join('\n'),
      meta.map(([key]) => key),
      meta.map(([, value]) => value),
    ],
  };
}

const UPSERT_META_SQL = `INSERT INTO mesh_log_meta (key, value) VALUES ($1, $2)
  ON CONFLICT (key) DO UPDATE SET value = EXCLUDED.value`;

const FORWARD_SQL = `SELECT revision, entry FROM mesh_log_entries WHERE revision > $1 AND revision < $2
  ORDER BY revision LIMIT ${CHUNK}`;

interface HeadRow {
  revision: string;
  hash: string;
  last: string | null;
}

/** A PostgreSQL log: the common ports, and the part the other instances' presence drives. */
export type PgLog = LogAdapter & SharedLog;

/**
 * An event log in PostgreSQL, shared by every instance on the database. Appends are
 * serialized by the head row: each group-commit batch is one transaction that moves the head from
 * the revision this instance has applied to the batch's last (one statement). When another instance
 * appended first, the statement moves nothing; the writer then locks the head row, reads what the
 * others appended, lets the log apply it and refuse the groups decided on what it changed, and
 * writes the rest renumbered after it, all in one transaction. Revisions stay gapless and every
 * reader sees them in order: a revision is only ever taken under the head row's lock.
 *
 * Each instance tails the log once `catchUp` is first called: a listener connection wakes it on
 * every other instance's commit (while one runs: see `othersRunning`), a poll every `pollMs` covers
 * a lost notification, and both read from the last applied revision.
 */
export function createPgLog(options: PgLogOptions): PgLog {
  const where = describePgDatabase(options.connection);
  const clientConfig: ClientConfig = { ...options.connection, query_timeout: QUERY_TIMEOUT_MS };
  const pollMs = options.pollMs ?? 500;
  let writer: pg.Client | undefined;
  /** Why the writer's session ended while it was idle (told to the next write). */
  let writerLost: Error | undefined;
  let pool: pg.Pool | undefined;
  let listener: pg.Client | undefined;
  let listenerRetry: NodeJS.Timeout | undefined;
  let listenerDelayMs = 100;
  /** Whether the listener is known to be lost (told once each way). */
  let listenerDown = false;
  /** Whether to LISTEN: while another instance runs (`othersRunning`), and until told otherwise. */
  let othersRun = true;
  /** Whether the listener connection LISTENs (its last LISTEN or UNLISTEN). */
  let listening = false;
  let pollTimer: NodeJS.Timeout | undefined;
  let opened = false;
  let closing: Promise<void> | undefined;
  const pendingMeta = new Set<Promise<void>>();
  /** Writes and tail reads, one at a time: a tail never mistakes this instance's commit for another's. */
  let exclusive: Promise<unknown> = Promise.resolve();
  /** A tail read queued and not started yet: callers meanwhile share it. */
  let queuedTail: Promise<void> | undefined;

  function serially<T>(run: () => Promise<T>): Promise<T> {
    const next = exclusive.then(run);
    exclusive = next.catch(() => undefined);
    return next;
  }

  async function connect(purpose: string): Promise<pg.Client> {
    const client = new pg.Client(clientConfig);
    // A connection lost while idle is reported here; its next use fails and reconnects.
    client.on('error', () => undefined);
    try {
      await client.connect();
    } catch (error) {
      await client.end().catch(() => undefined);
      throw logUnavailable(`cannot connect to PostgreSQL ${where} (${purpose}): ${errorChain(error)}`, error);
    }
    return client;
  }

  /** Connects the writer, sharing the log lock with the other instances (an import holds it alone). */
  async function connectWriter(): Promise<pg.Client> {
    const client = await connect('writer');
    writerLost = undefined;
    client.on('error', (error) => {
      writerLost = error;
    });
    try {
      const { rows } = await client.query<{ locked: boolean }>(
        'SELECT pg_try_advisory_lock_shared($1, $2) AS locked',
        [PG_LOCK_SPACE, PG_LOCK.log],
      );
      if (rows[0]?.locked !== true) {
        throw logUnavailable(
          `the event log in PostgreSQL ${where} is being imported into (mesh-cp log import holds it); ` +
            `start mesh-cp once the import has ended`,
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

  /** The append statement for `batch`; false when the head is no longer `batch.before`. */
  async function appendAt(client: pg.Client, batch: CommitBatch): Promise<boolean> {
    const { entries } = batch;
    const query = pgAppendQuery({
      before: batch.before,
      head: batch.head,
      lastHash: entries.length > 0 ? entries[entries.length - 1].hash : null,
      kinds: entries.map((entry) => entry.kind),
      meshes: entries.map((entry) => entry.mesh ?? ''),
      names: entries.map((entry) => entry.name),
      json: batch.json,
      meta: batch.meta,
    });
    const { rows } = await client.query(query);
    return rows.length === 1;
  }

  /** Entries after `after` up to `upTo`, parsed, in order (on the writer, inside its transaction). */
  async function entriesAfter(client: pg.Client, after: number, upTo: number): Promise<LogEntry[]> {
    const out: LogEntry[] = [];
    let low = after;
    while (low < upTo) {
      const { rows } = await client.query<{ revision: string; entry: string }>(FORWARD_SQL, [low, upTo + 1]);
      if (rows.length === 0) break;
      for (const row of rows) out.push(JSON.parse(row.entry) as LogEntry);
      low = Number(rows[rows.length - 1].revision);
    }
    return out;
  }

  /**
   * Writes a batch. A failure is a refusal (nothing stored) unless the statement that commits was
   * sent and no answer of PostgreSQL's came back (the connection dropped, the reply timed out):
   * then the batch may be stored, and the appenders are told the outcome is unknown.
   */
  async function write(batch: CommitBatch): Promise<void> {
    await serially(async () => {
      const client = currentWriter();
      let committing = false;
      try {
        // node-postgres would refuse the statement unsent (the session ended while idle).
        if (writerLost !== undefined) throw writerLost;
        committing = true;
        if (!(await appendAt(client, batch))) {
          committing = false;
          await appendAfterOthers(client, batch, () => {
            committing = true;
          });
        }
      } catch (error) {
        if (error instanceof AppError) throw error;
        // node-postgres says only "not queryable" for a session that ended while idle: the reason
        // PostgreSQL gave then (a restart, a terminated backend) is the one worth telling.
        const failure = new Error(`PostgreSQL ${where}`, { cause: writerLost ?? error });
        throw committing && !refusedByServer(error) ? new CommitOutcomeUnknown(failure) : failure;
      }
      const fault = options.fault?.();
      if (fault) throw new CommitOutcomeUnknown(fault);
    });
  }

  /** The slow path: another instance appended since this one's head (see the doc comment above). */
  async function appendAfterOthers(
    client: pg.Client,
    batch: CommitBatch,
    onCommit: () => void,
  ): Promise<void> {
    await client.query('BEGIN');
    try {
      // A statement of its own: taking the row lock waits for the holder's commit, and only a
      // statement started after that sees the entries it committed.
      const { rows } = await client.query<{ revision: string }>(
        'SELECT revision FROM mesh_log_head WHERE id = 1 FOR UPDATE',
      );
      const head = Number(rows[0].revision);
      const rebased = batch.rebase(await entriesAfter(client, batch.before, head));
      if (!(await appendAt(client, rebased))) {
        throw new AppError(
          'INTERNAL',
          'Event log head moved',
          `in PostgreSQL ${where} the head moved past revision ${rebased.before} while this instance held its lock`,
        );
      }
      onCommit();
      await client.query('COMMIT');
    } catch (error) {
      await client.query('ROLLBACK').catch(() => undefined);
      throw error;
    }
  }

  function injectedFault(): void {
    const error = options.fault?.();
    if (error) throw error;
  }

  /**
   * Reconnects the writer after a failed write. A batch whose commit reply was lost stays in the
   * log (its appenders were told the outcome is unknown); this instance reads it back like another
   * instance's entries, before it takes writes again: from then on a read of the resource says
   * whether the write landed.
   */
  async function recover(): Promise<void> {
    injectedFault();
    const old = writer;
    writer = undefined;
    await old?.end().catch(() => undefined);
    writer = await connectWriter();
    await tail();
  }

  const core = createGroupCommit({
    write,
    recover,
    retry: options.retry,
    onWriteState: options.onWriteState,
    now: options.now,
    onListenerError: options.onListenerError,
  });

  /** Reads and applies what other instances appended after this one's head. */
  async function tailOnce(): Promise<void> {
    for (;;) {
      const rows = await query<{ revision: string; entry: string }>(FORWARD_SQL, [
        core.head(),
        Number.MAX_SAFE_INTEGER,
      ]);
      core.applyForeign(rows.map((row) => JSON.parse(row.entry) as LogEntry));
      if (rows.length < CHUNK) return;
    }
  }

  /** Queues a tail read after the running write or read; calls made before it starts share it. */
  function tail(): Promise<void> {
    if (queuedTail) return queuedTail;
    const run = serially(async () => {
      queuedTail = undefined;
      if (pool !== undefined) await tailOnce();
    });
    queuedTail = run;
    return run;
  }

  /** Connects the listener (LISTEN on the log's channel), reconnecting with back-off when it drops. */
  async function listen(): Promise<void> {
    listenerRetry = undefined;
    let client: pg.Client;
    try {
      client = await connect('listener');
      listening = othersRun;
      if (listening) await client.query(`LISTEN ${PG_LOG_CHANNEL}`);
    } catch (error) {
      if (!listenerDown) {
        listenerDown = true;
        options.onListenState?.({ listening: false, reason: errorChain(error) });
      }
      if (opened)
        listenerRetry = setTimeout(
          () => void listen(),
          (listenerDelayMs = Math.min(listenerDelayMs * 2, 5000)),
        );
      return;
    }
    if (!opened) {
      await client.end().catch(() => undefined);
      return;
    }
    listenerDelayMs = 100;
    listener = client;
    // Told otherwise while it connected.
    followOthers();
    if (listenerDown) {
      listenerDown = false;
      options.onListenState?.({ listening: true });
    }
    let lost: Error | undefined;
    client.on('error', (error) => {
      lost = error;
    });
    client.on('notification', (message) => {
      // This instance's own appends notify too, often before their answer is read: not a reason to
      // read the log (the read would wait for that write and find nothing new).
      if (message.processId === (writer as (pg.Client & { processID?: number }) | undefined)?.processID)
        return;
      if (Number(message.payload) > core.head()) void tail().catch(() => undefined);
    });
    client.on('end', () => {
      if (listener !== client) return;
      listener = undefined;
      if (!opened) return;
      listenerDown = true;
      options.onListenState?.({
        listening: false,
        reason: lost === undefined ? 'the connection ended' : errorChain(lost),
      });
      listenerRetry = setTimeout(() => void listen(), listenerDelayMs);
    });
    // What was appended while no listener was connected.
    void tail().catch(() => undefined);
  }

  async function shutdown(): Promise<void> {
    opened = false;
    clearInterval(pollTimer);
    pollTimer = undefined;
    clearTimeout(listenerRetry);
    await core.stop();
    await Promise.allSettled(pendingMeta);
    await exclusive;
    const [client, readers, wake] = [writer, pool, listener];
    writer = undefined;
    pool = undefined;
    listener = undefined;
    await client?.end().catch(() => undefined);
    await wake?.end().catch(() => undefined);
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

  /** Brings the listener to `othersRun`: LISTEN while another instance runs, UNLISTEN while alone. */
  function followOthers(): void {
    const client = listener;
    const running = othersRun;
    if (client === undefined || running === listening) return;
    listening = running;
    void client
      .query(running ? `LISTEN ${PG_LOG_CHANNEL}` : `UNLISTEN ${PG_LOG_CHANNEL}`)
      // What another instance appended before this one listened (its poll would find it later).
      .then(() => (running ? tail() : undefined))
      .catch(() => undefined);
  }

  /** See SharedLog.othersRunning. */
  function othersRunning(running: boolean): void {
    othersRun = running;
    followOthers();
  }

  return logOverCore(core, {
    othersRunning,
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
      pool = new pg.Pool({ ...clientConfig, max: Math.max(1, (options.maxConnections ?? 8) - 2) });
      // An idle read connection that dies is dropped by the pool; the next read opens another.
      pool.on('error', () => undefined);
      core.start(start.head, start.hash);
      opened = true;
    },

    close() {
      closing ??= shutdown().finally(() => {
        closing = undefined;
      });
      return closing;
    },

    async catchUp() {
      core.assertReadable();
      if (pollTimer === undefined) {
        // The first call starts following the other instances (start-up makes it once the views
        // are loaded and listen to commits, so no entry is applied before anyone hears of it).
        pollTimer = setInterval(() => void tail().catch(() => undefined), pollMs);
        pollTimer.unref();
        await listen();
      }
      const rows = await query<{ revision: string }>('SELECT revision FROM mesh_log_head WHERE id = 1', []);
      const target = Number(rows[0].revision);
      while (core.head() < target) {
        const before = core.head();
        await tail();
        if (core.head() === before) await tail();
        if (core.head() === before) break;
      }
    },

    async *read(fromRevision, toRevision) {
      core.assertReadable();
      for await (const rows of pages(FORWARD_SQL, revisionRange(fromRevision, toRevision), false)) {
        for (const row of rows) yield JSON.parse(row.entry) as LogEntry;
      }
    },

    async *readRawChunks({ from = 1, to, reverse = false }) {
      core.assertReadable();
      const sql = reverse
        ? `SELECT revision, entry FROM mesh_log_entries WHERE revision > $1 AND revision < $2
            ORDER BY revision DESC LIMIT ${CHUNK}`
        : FORWARD_SQL;
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

    async ensureMeta(key, value) {
      core.assertWritable();
      assertMetaKey(key);
      // Of instances starting at once, the first insert wins and all read its value. A value
      // committed after this statement's snapshot is invisible to its select: the next one sees it.
      for (;;) {
        const rows = await query<{ value: string }>(
          `WITH added AS (
             INSERT INTO mesh_log_meta (key, value) VALUES ($1, $2) ON CONFLICT (key) DO NOTHING RETURNING value
           )
           SELECT value FROM added UNION ALL SELECT value FROM mesh_log_meta WHERE key = $1`,
          [key, value],
          'write',
        );
        if (rows.length > 0) return rows[0].value;
      }
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
  });
}
