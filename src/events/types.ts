import type { SnapshotStore } from './snapshot-store.js';

/** What a log entry did to its resource. */
export type Operation = 'create' | 'update' | 'delete';

/** Who made a change (decisions §8). */
export interface Actor {
  name: string;
  groups: string[];
  address: string;
}

/** A resource as it is on the wire: type, mesh?, name, times, then the spec fields flat. */
export type WireResource = Record<string, unknown> & {
  type: string;
  name: string;
  mesh?: string;
  creationTime: string;
  modificationTime: string;
};

/** One change to append: the log assigns revision, time and hashes. */
export interface EventInput {
  /** Registry kind (e.g. `GlobalSecret`, not the wire type). */
  kind: string;
  mesh?: string;
  name: string;
  operation: Operation;
  /** State after the change (create, update). */
  resource?: WireResource;
  /** State before a delete. */
  previous?: WireResource;
  actor: Actor;
  /** `local`, or the zone the change came from. */
  origin: string;
}

/** A durable log entry (architecture: the event log). */
export interface LogEntry extends EventInput {
  revision: number;
  /** RFC 3339 UTC with milliseconds. */
  time: string;
  prevHash: string;
  hash: string;
}

/** What `append` hands back at once: the entries with their revisions, and when they are durable. */
export interface AppendResult {
  entries: LogEntry[];
  /** Resolves once the batch holding these entries is synced to disk; rejects if it failed. */
  durable: Promise<void>;
}

/** Called with each durable batch, in revision order, before the appenders are answered. */
export type CommitListener = (entries: readonly LogEntry[]) => void;

/** Counters for benchmarks: batches written and the entries in them since the log was created. */
export interface EventLogStats {
  batches: number;
  entries: number;
}

/** The port every log adapter implements; `test/contract/` runs one suite against each. */
export interface EventLog {
  open(): Promise<void>;
  /** Writes what is pending, then closes. Appends after close are refused. */
  close(): Promise<void>;
  /** Revision of the last durable entry (0 when empty). */
  head(): number;
  /**
   * Appends entries as one atomic, contiguous group. Revisions are assigned synchronously; the
   * group joins the next batch (group commit: one synced write per batch). `meta` key/values are
   * written in the same batch (e.g. sync cursors).
   */
  append(inputs: readonly EventInput[], meta?: Readonly<Record<string, string>>): AppendResult;
  /** Durable entries with fromRevision <= revision <= toRevision, in order. */
  read(fromRevision: number, toRevision?: number): AsyncIterable<LogEntry>;
  /** Durable entries of one resource, oldest first, through the history index. */
  history(kind: string, mesh: string | undefined, name: string): AsyncIterable<LogEntry>;
  /**
   * Durable entries as their stored JSON text, in chunks, newest first when `reverse`: for
   * start-up, which reads each resource's last change and skips the rest unparsed.
   */
  readRawChunks(opts: { from?: number; to?: number; reverse?: boolean }): AsyncIterable<string[]>;
  getMeta(key: string): Promise<string | undefined>;
  /** Writes one meta value durably on its own. */
  putMeta(key: string, value: string): Promise<void>;
  /** Registers a listener for durable batches; returns a function that removes it. */
  onCommit(listener: CommitListener): () => void;
  /** Group-commit counters, for benchmarks and tests. */
  stats(): EventLogStats;
  /**
   * Why appends are refused while the log retries a failed write (a full disk), e.g. `event log
   * cannot write: …: No space left on device`; undefined while it takes writes.
   */
  writeFailure(): string | undefined;
  /** Snapshots of the projections kept in the same store (LevelDB only; issue 6). */
  snapshots?: SnapshotStore;
}
