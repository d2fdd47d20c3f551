import type { Config } from '../config/schema.js';
import type { LogAdmin } from '../events/log-admin.js';
import {
  createLogReader,
  exportLevelLog,
  importLevelLog,
  openLevelStore,
  verifyLevelStore,
} from '../events/level-tools.js';
import { pgClientConfig } from '../events/pg-connection.js';

/** Where a tool's log is: `--data DIR` (LevelDB), else the config's store as `run` would open it. */
export type ToolTarget =
  { type: 'level'; path: string } | { type: 'postgres'; postgres: Config['store']['postgres'] };

/**
 * The admin port over the store of `target`, made of the tools of its adapter (level-tools.ts,
 * pg-tools.ts). `existing` requires a log there already (verify, replay, export);
 * otherwise one is created (import). Throws `AppError` with a message for the user.
 */
export async function openToolStore(target: ToolTarget, existing: boolean): Promise<LogAdmin> {
  if (target.type === 'level') {
    const store = await openLevelStore(target.path, { existing });
    return {
      label: `data dir: ${target.path}`,
      where: target.path,
      snapshots: true,
      reader: () => createLogReader(store),
      verify: () => verifyLevelStore(store),
      exportLog: (write) => exportLevelLog(store, write),
      importLog: (lines) => importLevelLog(store, lines),
      close: () => store.close(),
    };
  }
  // node-postgres loads only for a PostgreSQL log.
  const { createPgLogReader, exportPgLog, importPgLog, openPgStore, verifyPgStore } =
    await import('../events/pg-tools.js');
  const store = await openPgStore(pgClientConfig(target.postgres), { existing });
  return {
    label: `PostgreSQL ${store.where}`,
    where: `PostgreSQL ${store.where}`,
    snapshots: false,
    reader: () => createPgLogReader(store),
    verify: () => verifyPgStore(store),
    exportLog: (write) => exportPgLog(store, write),
    importLog: (lines) => importPgLog(store, lines),
    close: () => store.close(),
  };
}
