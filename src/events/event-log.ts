import type { AppendResult, CommitListener, EventInput, LogEntry, ReadSet } from './types.js';

/**
 * Appending to and reading the log: the port of app/commands (append, head, catchUp), projections
 * and history (read, history, readRawChunks, head), watch (through the bus fed by `onCommit`) and
 * sync (head, read, onCommit, getMeta, catchUp). Every adapter implements all of it; each consumer
 * takes the `Pick` it uses. `test/contract/` runs one suite against each adapter.
 */
export interface EventLog {
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
   * `AppendConflict` when another writer changed any of it first (the caller decides again).
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
  /** Writes one meta value durably on its own. */
  putMeta(key: string, value: string): Promise<void>;
  /**
   * Applies what other writers of a shared log have appended up to the store's current head (a
   * no-op for a log with one writer), e.g. before a zone's cursor is compared with `head()`. The
   * first call also starts following them: from then on their entries reach the commit listeners
   * as they come (start-up calls it once the projections are loaded and listening).
   */
  catchUp(): Promise<void>;
  /** Registers a listener for durable batches; returns a function that removes it. */
  onCommit(listener: CommitListener): () => void;
}
