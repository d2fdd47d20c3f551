import type { Damage } from './log-damage.js';
import type { SnapshotStore } from './snapshot-store.js';
import type { LogEntry } from './types.js';

/**
 * What the offline tools replay from (`log replay`, `log snapshot`, and the snapshot check of
 * `log verify`): the head, entries in order, and the snapshots beside them.
 */
export interface OfflineLog {
  head(): number;
  read(fromRevision: number, toRevision?: number): AsyncIterable<LogEntry>;
  snapshots: SnapshotStore;
}

/** Result of a store's check (`log verify`): its head, and where the chain or the index breaks. */
export type StoreCheck =
  { ok: true; head: number; historyKeys: number } | ({ ok: false; head: number } & Damage);

/** What an export or an import ends with: the head, or where the chain broke. */
export type ToolResult = { ok: true; head: number } | ({ ok: false } & Damage);

/**
 * A stored log opened by a `mesh-cp log …` tool, not by a running control plane: the admin port
 * the tools of src/cli/ use, implemented for LevelDB (level-tools.ts) and PostgreSQL (pg-tools.ts).
 */
export interface LogAdmin {
  /** `data dir: <path>` or `PostgreSQL database "<name>" on <host>:<port>`, the first line of `verify`. */
  label: string;
  /** Where the log is, for messages: the data dir, or `PostgreSQL database "<name>" on …`. */
  where: string;
  /** Whether snapshots are kept beside the log (LevelDB only for now). */
  snapshots: boolean;
  /** The log as it is now, to replay from. */
  reader(): Promise<OfflineLog>;
  /** `log verify`: the hash chain, the revisions and the history index. */
  verify(): Promise<StoreCheck>;
  /** `log export`: each entry's stored JSON, in order, once the chain holds up to it. */
  exportLog(write: (line: string) => Promise<void>): Promise<ToolResult>;
  /** `log import`: exported entries into an empty log; nothing is kept on damage. */
  importLog(lines: AsyncIterable<string>): Promise<ToolResult>;
  close(): Promise<void>;
}
