import type { Config } from '../config/schema.js';
import type { Damage, LogReader, StoreCheck } from '../events/level-tools.js';
import {
  createLogReader,
  exportLevelLog,
  importLevelLog,
  openLevelStore,
  verifyLevelStore,
} from '../events/level-tools.js';
import { pgClientConfig } from '../events/pg-connection.js';

/** What an export or an import ends with: the head, or where the chain broke. */
type ToolResult = { ok: true; head: number } | ({ ok: false } & Damage);

/** The stored log a log tool works on: a LevelDB data dir or the PostgreSQL log of the config. */
export interface ToolStore {
  /** `data dir: <path>` or `database: "<name>" on <host>:<port>`, the first line of `verify`. */
  label: string;
  /** Where the log is, for messages: the data dir, or `PostgreSQL database "<name>" on …`. */
  where: string;
  /** Whether snapshots are kept beside the log (LevelDB only for now). */
  snapshots: boolean;
  reader(): Promise<LogReader>;
  verify(): Promise<StoreCheck>;
  exportLog(write: (line: string) => Promise<void>): Promise<ToolResult>;
  importLog(lines: AsyncIterable<string>): Promise<ToolResult>;
  close(): Promise<void>;
}

/** Where a tool's log is: `--data DIR` (LevelDB), else the config's store as `run` would open it. */
export type ToolTarget =
  { type: 'level'; path: string } | { type: 'postgres'; postgres: Config['store']['postgres'] };

/**
 * Opens the store of `target`. `existing` requires a log there already (verify, replay, export);
 * otherwise one is created (import). Throws `AppError` with a message for the user.
 */
export async function openToolStore(target: ToolTarget, existing: boolean): Promise<ToolStore> {
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
