import { AppError } from '../util/errors.js';
import { errorChain } from '../util/error-chain.js';
import { GENESIS_HASH, sealEntry } from './hash.js';
import { assertMetaKey } from './keys.js';
import type { AppendResult, CommitListener, EventInput, EventLogStats, LogEntry } from './types.js';

/** One atomic, synced write: every entry of the batch (revision order), its JSON, and the merged meta. */
export interface CommitBatch {
  entries: readonly LogEntry[];
  /** The stored JSON of each entry, as hashed. */
  json: readonly string[];
  /** Meta values of every group in the batch; a later group wins on the same key. */
  meta: Readonly<Record<string, string>>;
  /** Revision of the last entry, or the unchanged head when the batch holds meta only. */
  head: number;
}

/** What an adapter gives the group-commit queue. */
export interface GroupCommitDeps {
  /** Writes one batch atomically and durably; a rejection puts the log in the failed state. */
  write(batch: CommitBatch): Promise<void>;
  /**
   * After a failed write, makes the store take writes again with `head` (hash `headHash`) as its
   * last entry, dropping whatever of the failed batches it kept; rejects while it cannot. Retried
   * with back-off; by default the next append simply tries again.
   */
  recover?(head: number, headHash: string): Promise<void>;
  /** Back-off of the recovery: first delay and cap, in ms (default 100 ms doubling to 5 s). */
  retry?: { firstMs: number; maxMs: number };
  /** Told once when writes start failing and once when they work again (not at each retry). */
  onWriteState?: (change: WriteStateChange) => void;
  /** Clock for entry times (tests inject one). */
  now?: () => Date;
  /** Receives what a commit listener throws; by default it is rethrown on a later turn (uncaught). */
  onListenerError?: (error: unknown) => void;
}

/** A change of the log's ability to write, for one log line each way. */
export type WriteStateChange =
  { failed: true; reason: string; error: unknown } | { failed: false; downMs: number; attempts: number };

/** The shared write path of every `EventLog` adapter: revisions, hashes, group commit, listeners. */
export interface GroupCommit {
  /** Opens for appends, continuing the chain after `head` (whose hash is `headHash`). */
  start(head: number, headHash: string): void;
  append(inputs: readonly EventInput[], meta?: Readonly<Record<string, string>>): AppendResult;
  /** Revision of the last durable entry. */
  head(): number;
  onCommit(listener: CommitListener): () => void;
  stats(): EventLogStats;
  /** Refuses further appends; resolves once every queued batch is written or failed. */
  stop(): Promise<void>;
  /** Throws unless the log is started (reads are still allowed after a failed write). */
  assertReadable(): void;
  /** Throws unless the log is started and has not failed. */
  assertWritable(): void;
  /** Why appends are refused while the log retries a failed write; undefined when it takes them. */
  writeFailure(): string | undefined;
}

interface QueuedGroup {
  entries: LogEntry[];
  json: string[];
  meta: Readonly<Record<string, string>> | undefined;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** An `UNAVAILABLE` error for a log that is closed or has failed, keeping the underlying cause. */
export function logUnavailable(details: string, cause?: unknown): AppError {
  const error = new AppError('UNAVAILABLE', 'Event log unavailable', details);
  if (cause !== undefined) error.cause = cause;
  return error;
}

function rethrowLater(error: unknown): void {
  setImmediate(() => {
    throw error;
  });
}

/** Creates the group-commit queue an adapter wraps around its storage. */
export function createGroupCommit(deps: GroupCommitDeps): GroupCommit {
  const now = deps.now ?? (() => new Date());
  const onListenerError = deps.onListenerError ?? rethrowLater;
  const listeners = new Set<CommitListener>();
  const counters: EventLogStats = { batches: 0, entries: 0 };

  let state: 'closed' | 'open' | 'failed' = 'closed';
  let failure: AppError | undefined;
  let durableHead = 0;
  let durableHash = GENESIS_HASH;
  let assignedHead = 0;
  let assignedHash = GENESIS_HASH;
  let queue: QueuedGroup[] = [];
  let scheduled = false;
  let writing = false;
  let idleWaiters: (() => void)[] = [];
  const retry = deps.retry ?? { firstMs: 100, maxMs: 5000 };
  let retryTimer: NodeJS.Timeout | undefined;
  let recovering: Promise<void> | undefined;
  let failedAt = 0;
  let failureReason: string | undefined;
  let attempts = 0;

  function refusal(): AppError {
    if (state === 'failed' && failure !== undefined) return failure;
    return logUnavailable('the event log is closed');
  }

  function scheduleFlush(): void {
    if (scheduled || writing || queue.length === 0) return;
    scheduled = true;
    queueMicrotask(() => void flush());
  }

  function settleIdle(): void {
    if (scheduled || writing || queue.length > 0) return;
    const waiters = idleWaiters;
    idleWaiters = [];
    for (const wake of waiters) wake();
  }

  function notify(entries: readonly LogEntry[]): void {
    for (const listener of [...listeners]) {
      try {
        listener(entries);
      } catch (error) {
        onListenerError(error);
      }
    }
  }

  function fail(error: unknown, groups: QueuedGroup[]): void {
    const reason = `event log cannot write: ${errorChain(error)}`;
    failureReason = reason;
    failure = logUnavailable(`${reason}; writes are refused until it recovers (retrying)`, error);
    // The failed batch and every group queued behind it (chained on its hashes) are refused, and
    // the chain resumes from the durable head: nothing answered 503 is ever acknowledged.
    const rejected = [...groups, ...queue];
    queue = [];
    assignedHead = durableHead;
    assignedHash = durableHash;
    for (const group of rejected) group.reject(failure);
    if (state !== 'open') return;
    state = 'failed';
    failedAt = Date.now();
    attempts = 0;
    deps.onWriteState?.({ failed: true, reason, error });
    scheduleRecovery(retry.firstMs);
  }

  function scheduleRecovery(delayMs: number): void {
    retryTimer = setTimeout(() => {
      retryTimer = undefined;
      attempts += 1;
      recovering = (deps.recover ?? (async () => undefined))(durableHead, durableHash).then(
        () => {
          recovering = undefined;
          if (state !== 'failed') return;
          state = 'open';
          failure = undefined;
          deps.onWriteState?.({ failed: false, downMs: Date.now() - failedAt, attempts });
        },
        () => {
          recovering = undefined;
          if (state === 'failed') scheduleRecovery(Math.min(delayMs * 2, retry.maxMs));
        },
      );
    }, delayMs);
  }

  async function flush(): Promise<void> {
    scheduled = false;
    const groups = queue;
    queue = [];
    writing = true;
    const entries = groups.flatMap((group) => group.entries);
    const batch: CommitBatch = {
      entries,
      json: groups.flatMap((group) => group.json),
      meta: Object.assign({}, ...groups.map((group) => group.meta)) as Record<string, string>,
      head: entries.length > 0 ? entries[entries.length - 1].revision : durableHead,
    };
    try {
      await deps.write(batch);
    } catch (error) {
      writing = false;
      fail(error, groups);
      settleIdle();
      return;
    }
    writing = false;
    durableHead = batch.head;
    if (entries.length > 0) durableHash = entries[entries.length - 1].hash;
    counters.batches += 1;
    counters.entries += entries.length;
    notify(entries);
    // The next batch (appends made while this one was written) is queued before the appenders are
    // resumed, so its synced write runs while they answer their callers: the pipeline never stalls.
    scheduleFlush();
    for (const group of groups) group.resolve();
    settleIdle();
  }

  return {
    start(head, headHash) {
      state = 'open';
      failure = undefined;
      durableHead = head;
      durableHash = headHash;
      assignedHead = head;
      assignedHash = headHash;
    },

    append(inputs, meta) {
      if (state !== 'open') throw refusal();
      if (meta) for (const key of Object.keys(meta)) assertMetaKey(key);
      const time = now().toISOString();
      const entries: LogEntry[] = [];
      const json: string[] = [];
      let revision = assignedHead;
      let prevHash = assignedHash;
      for (const input of inputs) {
        revision += 1;
        const sealed = sealEntry(input, revision, time, prevHash);
        entries.push(sealed.entry);
        json.push(sealed.json);
        prevHash = sealed.entry.hash;
      }
      assignedHead = revision;
      assignedHash = prevHash;
      const durable = new Promise<void>((resolve, reject) => {
        queue.push({ entries, json, meta: meta && { ...meta }, resolve, reject });
      });
      scheduleFlush();
      return { entries: [...entries], durable };
    },

    head: () => durableHead,

    onCommit(listener) {
      listeners.add(listener);
      return () => {
        listeners.delete(listener);
      };
    },

    stats: () => ({ ...counters }),

    async stop() {
      state = 'closed';
      clearTimeout(retryTimer);
      retryTimer = undefined;
      await recovering;
      await new Promise<void>((resolve) => {
        idleWaiters.push(resolve);
        settleIdle();
      });
    },

    assertReadable() {
      if (state === 'closed') throw refusal();
    },

    assertWritable() {
      if (state !== 'open') throw refusal();
    },

    writeFailure: () => (state === 'failed' ? failureReason : undefined),
  };
}
