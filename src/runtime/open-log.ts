import type { Logger } from 'pino';
import type { Config } from '../config/schema.js';
import type { WriteStateChange } from '../events/group-commit.js';
import { createLevelLog } from '../events/level-log.js';
import type { LevelLogOptions } from '../events/level-log.js';
import type { LogAdapter } from '../events/log-lifecycle.js';
import { createMemoryLog } from '../events/memory-log.js';
import type { SharedLog } from '../events/shared-log.js';
import type { SnapshotStore } from '../events/snapshot-store.js';
import type { StartContext } from './start-context.js';

/**
 * The log of the configured store, composed once: the ports every adapter has (appending, reading,
 * lifecycle), and those only one has, present only then.
 */
export interface OpenedLog {
  /** The adapter itself (with LevelDB's `snapshots` on it, which tests read through the plane). */
  log: LogAdapter & { snapshots?: SnapshotStore };
  /** The snapshots kept beside a LevelDB log. */
  snapshots?: SnapshotStore;
  /** The part of a PostgreSQL log the other instances' presence drives. */
  shared?: SharedLog;
}

/** One log line when the log starts failing to write and one when it writes again. */
function logWriteState(logger: Logger | undefined): (change: WriteStateChange) => void {
  return (change) => {
    if (change.failed) {
      logger?.error({ err: change.error }, `${change.reason}; refusing writes (503) and retrying`);
    } else {
      logger?.info(
        { downMs: change.downMs, attempts: change.attempts },
        'event log writes again; accepting writes',
      );
    }
  };
}

/** The PostgreSQL log of `store.postgres` (node-postgres loads only for this store). */
async function openPgLog(
  config: Config,
  now: () => Date,
  onWriteState: (change: WriteStateChange) => void,
  logger: Logger | undefined,
): Promise<OpenedLog> {
  const [{ createPgLog }, { pgClientConfig }] = await Promise.all([
    import('../events/pg-log.js'),
    import('../events/pg-connection.js'),
  ]);
  const { postgres } = config.store;
  const log = createPgLog({
    onListenState: (change) => {
      if (change.listening) logger?.info("notified of the other instances' writes again");
      else {
        logger?.warn(
          { reason: change.reason },
          "not notified of the other instances' writes (reconnecting); they arrive by the 500 ms poll meanwhile",
        );
      }
    },
    connection: pgClientConfig(postgres),
    // Two of the instance's connections are the cluster's (pg-cluster.ts): its status and its leader lock.
    maxConnections: postgres.maxOpenConnections - 2,
    now,
    onWriteState,
    // A reconnect costs a round trip: tried at least every second once PostgreSQL is back.
    retry: { firstMs: 100, maxMs: 1000 },
  });
  return { log, shared: log };
}

/**
 * The start-up step that opens the log of the configured store (the level adapter explains a locked
 * or bad data dir); `levelLog` is the LevelDB log's retry back-off and injected write fault (tests).
 */
export async function openLog(
  ctx: StartContext,
  levelLog?: Pick<LevelLogOptions, 'retry' | 'fault'>,
): Promise<OpenedLog> {
  const { config, now, logger } = ctx;
  const onWriteState = logWriteState(logger);
  let opened: OpenedLog;
  if (config.store.type === 'memory') opened = { log: createMemoryLog({ now }) };
  else if (config.store.type === 'postgres') opened = await openPgLog(config, now, onWriteState, logger);
  else {
    const log = createLevelLog({ path: config.store.level.path, now, onWriteState, ...levelLog });
    opened = { log, snapshots: log.snapshots };
  }
  await opened.log.open();
  return opened;
}
