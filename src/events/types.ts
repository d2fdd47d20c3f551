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
  /**
   * The id of the change set the entry belongs to: every entry of one set (appended as one group)
   * has it. Absent for single writes, and in logs written before change sets existed.
   */
  changeSet?: string;
  /**
   * `JSON.stringify(resource)` when the caller has it already (a PUT's decision does: it is the
   * answer's body): sealing splices it into the entry's JSON instead of serializing the resource a
   * second time. Not part of the entry.
   */
  resourceJson?: string;
}

/** A durable log entry (architecture: the event log). */
export interface LogEntry extends Omit<EventInput, 'resourceJson'> {
  revision: number;
  /** RFC 3339 UTC with milliseconds. */
  time: string;
  prevHash: string;
  hash: string;
}

/**
 * What a decision read, so that a log shared by several writers (PostgreSQL) can refuse a
 * group decided on state another writer has changed since: the group conflicts with any entry of
 * another writer, newer than the state it was decided on, that touches what it read.
 */
export interface ReadSet {
  /** Resources read (present or absent), as `resourceKey` keys (resources/keys.ts). */
  keys: Set<string>;
  /** Meshes read whole (a mesh delete lists everything in it). */
  meshes: Set<string>;
  /** Read more than keys and meshes name (everything a zone owns): any change of another writer conflicts. */
  all: boolean;
}

/**
 * What `append` hands back at once: the entries, and when they are durable. Their revisions (and
 * hashes) are final once `durable` resolves; until then they are provisional, as a log shared by
 * several writers renumbers a batch when another writer appended first (it updates these objects).
 */
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
  /**
   * Revision of the last durable entry this process has applied (0 when empty): its own and, in a
   * log shared by several instances, those of the others it has read.
   */
  head(): number;
  /**
   * Appends entries as one atomic, contiguous group. Revisions are assigned synchronously (final
   * once durable, see {@link AppendResult}); the group joins the next batch (group commit: one
   * synced write per batch). `meta` key/values are written in the same batch (e.g. sync cursors).
   * `reads` is what the group was decided on, at `head()`: a shared log refuses the group with
   * {@link AppendConflict} when another writer changed any of it first (the caller decides again).
   */
  append(
    inputs: readonly EventInput[],
    meta?: Readonly<Record<string, string>>,
    reads?: ReadSet,
  ): AppendResult;
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
  /** Stores `value` under `key` unless a value is there already; resolves with the stored one. */
  ensureMeta(key: string, value: string): Promise<string>;
  /**
   * Applies what other writers of a shared log have appended up to the store's current head (a
   * no-op for a log with one writer), e.g. before a zone's cursor is compared with `head()`. The
   * first call also starts following them: from then on their entries reach the commit listeners
   * as they come (start-up calls it once the projections are loaded and listening).
   */
  catchUp(): Promise<void>;
  /**
   * A log shared with other instances (PostgreSQL) is told whether any other instance runs on it
   * now (the cluster's heartbeats). It is woken by their notifications only while one does: alone,
   * it would only receive its own (a wake-up of PostgreSQL and of this process per batch, ~10% of
   * the write rate on two cores). Logs with one writer do not have it.
   */
  othersRunning?(running: boolean): void;
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
  /** Snapshots of the projections kept in the same store (LevelDB only). */
  snapshots?: SnapshotStore;
}

/**
 * A group refused because another writer changed what it was decided on (see `EventLog.append`).
 * By the time it is thrown the log has applied that change, so deciding again sees it.
 */
export class AppendConflict extends Error {
  constructor(readonly revision: number) {
    super(`another instance changed what this write was decided on (revision ${revision}); decide again`);
    this.name = 'AppendConflict';
  }
}
