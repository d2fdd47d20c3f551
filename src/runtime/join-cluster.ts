import { randomUUID } from 'node:crypto';
import type { MergedStatus } from '../status/merged-status.js';
import type { OpenedLog } from './open-log.js';
import type { ClusterTimers, PgCluster } from './pg-cluster.js';
import type { StartContext } from './start-context.js';

const CLUSTER_ID = 'clusterId';

/** This instance among the instances of its log: the cluster of a PostgreSQL log, and the id they share. */
export interface JoinedCluster {
  /** The instances of a PostgreSQL log: heartbeats, shared status, the leader. */
  cluster?: PgCluster;
  /** The log's cluster id (what sync cursors name). */
  clusterId: string;
}

/**
 * The start-up step that joins the cluster: on a PostgreSQL log, the instances' heartbeats and
 * shared status (whose presence tells the log whether to listen for the others' writes); on every
 * log, the cluster id stored in its meta.
 */
export async function joinCluster(
  ctx: StartContext,
  opened: OpenedLog,
  merged: MergedStatus | undefined,
  timers?: Partial<ClusterTimers>,
): Promise<JoinedCluster> {
  const { log, shared } = opened;
  const cluster = merged
    ? await (
        await import('./pg-cluster.js')
      ).joinPgCluster({
        connection: (await import('../events/pg-connection.js')).pgClientConfig(ctx.config.store.postgres),
        instanceId: ctx.instanceId,
        status: merged,
        logger: ctx.logger,
        now: ctx.now,
        timers,
        onOthersRunning: (running) => shared?.othersRunning(running),
      })
    : undefined;
  // Instances of one PostgreSQL log starting at once agree on the first one's id.
  const clusterId = (await log.getMeta(CLUSTER_ID)) ?? (await log.ensureMeta(CLUSTER_ID, randomUUID()));
  return { cluster, clusterId };
}
