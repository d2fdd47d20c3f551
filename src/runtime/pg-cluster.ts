import pg from 'pg';
import type { ClientConfig } from 'pg';
import type { Logger } from 'pino';

import { describePgDatabase } from '../events/pg-connection.js';
import { PG_LOCK, PG_LOCK_SPACE } from '../events/pg-schema.js';
import type { MergedStatus, StatusRow } from '../status/merged-status.js';
import type { Insight } from '../status/status-store.js';
import { errorChain } from '../util/error-chain.js';

/** Timing of the cluster's work (tests shorten it). */
export interface ClusterTimers {
  /** How often this instance publishes its status, reads the others', and says it is alive. */
  tickMs: number;
  /** An instance not seen for this long is dead: the leader ends its subscriptions. */
  deadAfterMs: number;
  /** How long the status of an instance that is gone is kept once nothing changed it. */
  statusRetentionMs: number;
}

const DEFAULT_TIMERS: ClusterTimers = { tickMs: 1000, deadAfterMs: 10_000, statusRetentionMs: 86_400_000 };

/**
 * The status rows of instances that are gone (no heartbeat row: closed, or ended by the leader),
 * unchanged for the retention ($1 s) and holding no open subscription, become removals (value
 * NULL), which every instance applies at its next read as it applies any other row.
 */
const REMOVE_GONE_STATUS_SQL = `
  UPDATE mesh_status s SET value = NULL, updated = clock_timestamp()
  WHERE value IS NOT NULL AND updated < now() - make_interval(secs => $1)
    AND NOT EXISTS (SELECT 1 FROM mesh_instances i WHERE i.id = s.instance)
    AND NOT jsonb_path_exists(value::jsonb, '$.subscriptions[*] ? (!exists(@.disconnectTime))')`;

/** Removals older than the retention ($1 s): every running instance has read them long since. */
const DELETE_OLD_REMOVALS_SQL = `
  DELETE FROM mesh_status WHERE value IS NULL AND updated < now() - make_interval(secs => $1)`;

/** This instance's part in a cluster of instances on one PostgreSQL log. */
export interface PgCluster {
  /** Whether this instance holds the leader lock now. */
  leads(): boolean;
  /** Told each time this instance starts or stops leading; returns a function that removes it. */
  onLeadChange(listener: (leading: boolean) => void): () => void;
  close(): Promise<void>;
}

/** Reading the others' rows again this far back covers rows committed out of `updated` order. */
const OVERLAP_MS = 5000;

const UPSERT_STATUS_SQL = `
  INSERT INTO mesh_status (kind, key, instance, value)
  SELECT kind, key, $1, value FROM unnest($2::text[], $3::text[], $4::text[]) AS t(kind, key, value)
  ON CONFLICT (kind, key, instance) DO UPDATE SET value = EXCLUDED.value, updated = clock_timestamp()`;

/** Every open subscription of `insight` ended at `now` (decisions §6: shown offline). */
function ended(insight: Insight, now: string): Insight {
  return {
    ...insight,
    subscriptions: (insight.subscriptions ?? []).map((sub) =>
      sub.disconnectTime === undefined ? { ...sub, disconnectTime: now } : sub,
    ),
  };
}

/**
 * Joins the cluster: each tick this instance refreshes its row in `mesh_instances`, publishes the
 * status rows it changed, and reads those the others changed. One instance leads, holding a
 * session advisory lock on a connection of its own (PostgreSQL frees it when that session ends, so
 * a dead leader's lock is taken over at the next tick of another instance). The leader runs the
 * work that must run once: ending the subscriptions of instances that stopped refreshing their row
 * (a SIGKILL, a lost machine), so their zones and proxies are shown offline, then forgetting them;
 * removing the status of instances gone for longer than `statusRetentionMs`; on a zone, the sync
 * with Global (see `onLeadChange`).
 */
export async function joinPgCluster(deps: {
  connection: ClientConfig;
  instanceId: string;
  status: MergedStatus;
  logger?: Logger;
  now: () => Date;
  timers?: Partial<ClusterTimers>;
  /** Told at the first tick, then each time it changes, whether any other instance is alive. */
  onOthersRunning?: (running: boolean) => void;
}): Promise<PgCluster> {
  const timers = { ...DEFAULT_TIMERS, ...deps.timers };
  const where = describePgDatabase(deps.connection);
  const { instanceId, logger } = deps;
  // One connection for heartbeats and status, one (`lockHolder`) for the leader lock.
  const pool = new pg.Pool({ ...deps.connection, max: 1 });
  pool.on('error', () => undefined);
  let lockHolder: pg.Client | undefined;
  let leading = false;
  let closed = false;
  let since: Date | undefined;
  let running: Promise<void> | undefined;
  let failing = false;
  const leadListeners = new Set<(leading: boolean) => void>();
  const tellLead = (): void => {
    for (const listener of [...leadListeners]) listener(leading);
  };

  const publish = async (rows: StatusRow[]): Promise<void> => {
    if (rows.length === 0) return;
    await pool.query(UPSERT_STATUS_SQL, [
      instanceId,
      rows.map((row) => row.kind),
      rows.map((row) => row.key),
      rows.map((row) => row.value),
    ]);
  };

  const readOthers = async (): Promise<void> => {
    const { rows } = await pool.query<StatusRow & { updated: Date }>(
      `SELECT kind, key, instance, value, updated FROM mesh_status
       WHERE instance <> $1 AND updated > $2 ORDER BY updated`,
      [instanceId, since === undefined ? new Date(0) : new Date(since.getTime() - OVERLAP_MS)],
    );
    deps.status.applyRemote(rows);
    if (rows.length > 0) since = rows[rows.length - 1].updated;
  };

  const stopLeading = (reason: string): void => {
    if (!leading) return;
    leading = false;
    logger?.warn({ reason }, 'this instance no longer leads the cluster');
    tellLead();
  };

  /** Tries to take the leader lock (on a connection kept for it). */
  const tryLead = async (): Promise<void> => {
    if (lockHolder === undefined) {
      const client = new pg.Client(deps.connection);
      client.on('error', () => undefined);
      client.on('end', () => {
        if (lockHolder !== client) return;
        lockHolder = undefined;
        stopLeading('its PostgreSQL session ended');
      });
      await client.connect();
      if (closed) {
        await client.end();
        return;
      }
      lockHolder = client;
    }
    const { rows } = await lockHolder.query<{ locked: boolean }>(
      'SELECT pg_try_advisory_lock($1, $2) AS locked',
      [PG_LOCK_SPACE, PG_LOCK.leader],
    );
    if (rows[0]?.locked === true && !leading) {
      leading = true;
      logger?.info({ instanceId }, 'this instance leads the cluster (work that runs once runs here)');
      tellLead();
    }
  };

  /** The leader's work: end the subscriptions of instances that stopped refreshing their row. */
  const endDeadInstances = async (): Promise<void> => {
    const { rows: dead } = await pool.query<{ id: string }>(
      `SELECT id FROM mesh_instances WHERE id <> $1 AND seen < now() - make_interval(secs => $2)`,
      [instanceId, timers.deadAfterMs / 1000],
    );
    for (const { id } of dead) {
      const { rows } = await pool.query<StatusRow>(
        'SELECT kind, key, instance, value FROM mesh_status WHERE instance = $1 AND value IS NOT NULL',
        [id],
      );
      const now = deps.now().toISOString();
      const open = rows.filter((row) =>
        ((JSON.parse(row.value as string) as Insight).subscriptions ?? []).some(
          (s) => s.disconnectTime === undefined,
        ),
      );
      await pool.query(UPSERT_STATUS_SQL, [
        id,
        open.map((row) => row.kind),
        open.map((row) => row.key),
        open.map((row) => JSON.stringify(ended(JSON.parse(row.value as string) as Insight, now))),
      ]);
      await pool.query('DELETE FROM mesh_instances WHERE id = $1', [id]);
      logger?.warn(
        { instance: id, subscriptions: open.length },
        'an instance stopped (not seen for a while): its zones and proxies are shown offline',
      );
    }
  };

  let prunedAt = Number.NEGATIVE_INFINITY;
  /**
   * The leader's work, at most once a minute: each restart of an instance is a new instance id, and
   * the rows of the ones gone would otherwise stay forever (read whole by every instance's start,
   * and merged into every insight they touch). A subscription is history by then: it was ended when
   * its instance went (`endDeadInstances`, or the instance's own close).
   */
  const pruneStatus = async (): Promise<void> => {
    const at = Date.now();
    if (at - prunedAt < Math.min(timers.statusRetentionMs, 60_000)) return;
    prunedAt = at;
    const retention = timers.statusRetentionMs / 1000;
    try {
      const removed = (await pool.query(REMOVE_GONE_STATUS_SQL, [retention])).rowCount ?? 0;
      const deleted = (await pool.query(DELETE_OLD_REMOVALS_SQL, [retention])).rowCount ?? 0;
      if (removed > 0 || deleted > 0)
        logger?.info(
          { removed, deleted, retentionHours: timers.statusRetentionMs / 3_600_000 },
          'pruned the status of instances gone for longer than the retention',
        );
    } catch (err) {
      // Its own failure, tried again at the next prune: the status ticks go on without it.
      logger?.warn(
        { reason: `PostgreSQL ${where}: ${errorChain(err)}` },
        'pruning the status of instances gone failed',
      );
    }
  };

  let othersRunning: boolean | undefined;
  /** Whether another instance's row was refreshed within `deadAfterMs` (told when it changes). */
  const seeOthers = async (): Promise<void> => {
    const { rows } = await pool.query<{ others: boolean }>(
      `SELECT EXISTS (SELECT 1 FROM mesh_instances
         WHERE id <> $1 AND seen >= now() - make_interval(secs => $2)) AS others`,
      [instanceId, timers.deadAfterMs / 1000],
    );
    const others = rows[0]?.others === true;
    if (others === othersRunning) return;
    othersRunning = others;
    deps.onOthersRunning?.(others);
  };

  const tick = async (): Promise<void> => {
    try {
      await pool.query(
        'INSERT INTO mesh_instances (id) VALUES ($1) ON CONFLICT (id) DO UPDATE SET seen = now()',
        [instanceId],
      );
      await seeOthers();
      await publish(deps.status.takeChanged());
      await readOthers();
      await tryLead();
      if (leading) {
        await endDeadInstances();
        await pruneStatus();
      }
      if (failing) logger?.info('the cluster tables in PostgreSQL answer again');
      failing = false;
    } catch (err) {
      if (!failing)
        logger?.warn(
          { reason: `PostgreSQL ${where}: ${errorChain(err)}` },
          'cluster status failed (retrying)',
        );
      failing = true;
    }
  };

  await tick();
  const timer = setInterval(() => {
    if (running || closed) return;
    running = tick().finally(() => {
      running = undefined;
    });
  }, timers.tickMs);
  timer.unref();

  return {
    leads: () => leading,
    onLeadChange(listener) {
      leadListeners.add(listener);
      return () => {
        leadListeners.delete(listener);
      };
    },
    async close() {
      closed = true;
      clearInterval(timer);
      await running;
      // Published before leaving: what this instance held ends with it.
      await publish(deps.status.takeChanged()).catch(() => undefined);
      await pool.query('DELETE FROM mesh_instances WHERE id = $1', [instanceId]).catch(() => undefined);
      const holder = lockHolder;
      lockHolder = undefined;
      leading = false;
      leadListeners.clear();
      await holder?.end().catch(() => undefined);
      await pool.end().catch(() => undefined);
    },
  };
}
