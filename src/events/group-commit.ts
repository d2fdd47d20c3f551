import { AppError } from '../util/errors.js';
import { errorChain } from '../util/error-chain.js';
import { isoClock } from '../util/iso-clock.js';
import { GENESIS_HASH, sealEntry } from './hash.js';
import { assertMetaKey } from './keys.js';
import { AppendConflict } from './types.js';
import { resourceKey } from '../resources/keys.js';
import type { AppendResult, CommitListener, EventInput, EventLogStats, LogEntry, ReadSet } from './types.js';

/** One atomic, synced write: every entry of the batch (revision order), its JSON, and the merged meta. */
export interface CommitBatch {
  entries: readonly LogEntry[];
  /** The stored JSON of each entry, as hashed. */
  json: readonly string[];
  /** Meta values of every group in the batch; a later group wins on the same key. */
  meta: Readonly<Record<string, string>>;
  /** Revision of the last entry, or the unchanged head when the batch holds meta only. */
  head: number;
  /** The head the batch follows: its first entry is `before + 1`. */
  before: number;
  /**
   * For a log shared by several writers: when the store's head has moved past `before`, the adapter
   * hands over the entries other writers appended (in order, from `before + 1`, read while it holds
   * the store's append lock). The log applies them, refuses the groups they conflict with
   * ({@link AppendConflict}), and returns the batch renumbered after them, which the adapter writes
   * instead.
   */
  rebase(foreign: readonly LogEntry[]): CommitBatch;
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
  append(
    inputs: readonly EventInput[],
    meta?: Readonly<Record<string, string>>,
    reads?: ReadSet,
  ): AppendResult;
  /**
   * Applies entries other writers appended (a shared log's tail), in order: those at or below the
   * head are skipped; the rest must continue the chain. Adapters call it only between writes.
   */
  applyForeign(entries: readonly LogEntry[]): void;
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
  /** The head the group was decided at, and what it read (undefined: never conflicts). */
  basis: number;
  reads: ReadSet | undefined;
  /** Append order: a group may have been decided on the pending groups appended before it. */
  seq: number;
  resolve: () => void;
  reject: (error: unknown) => void;
}

/** An `UNAVAILABLE` error for a log that is closed or has failed, keeping the underlying cause. */
export function logUnavailable(details: string, cause?: unknown): AppError {
  const error = new AppError('UNAVAILABLE', 'Event log unavailable', details);
  if (cause !== undefined) error.cause = cause;
  return error;
}

/**
 * What an adapter's `write` rejects with when the batch's commit was sent and its reply was lost
 * (the connection dropped, the reply timed out): the store may hold the batch or not. Its appenders
 * are told so ({@link outcomeUnknown}); a refusal known to have written nothing is any other error.
 */
export class CommitOutcomeUnknown extends Error {
  constructor(cause: unknown) {
    super(`the reply to a commit was lost: ${errorChain(cause)}`, { cause });
    this.name = 'CommitOutcomeUnknown';
  }
}

/**
 * The `OUTCOME_UNKNOWN` error of the appenders of a batch whose commit reply was lost: unlike a
 * refusal (`UNAVAILABLE`: nothing written), the write may be stored, and only a read can tell.
 */
export function outcomeUnknown(cause: unknown): AppError {
  const error = new AppError(
    'OUTCOME_UNKNOWN',
    'Write outcome unknown',
    `the event log sent this write to its store, but the reply was lost (${errorChain(cause)}): ` +
      'the write may have been stored or not. Once the control plane takes writes again (/ready ' +
      'answers 200), read the resource (GET it: its ETag is the revision of its last change) to ' +
      'learn whether it was; write it again only then, with If-Match on that revision (If-None-Match: * ' +
      'when it is absent), so that the retry cannot overwrite a change made meanwhile',
  );
  error.cause = cause;
  return error;
}

function rethrowLater(error: unknown): void {
  setImmediate(() => {
    throw error;
  });
}

/** Whether `entry` (appended by another writer) touches what `reads` names. */
function touches(reads: ReadSet, entry: LogEntry): boolean {
  return (
    reads.all ||
    reads.keys.has(resourceKey(entry.kind, entry.mesh, entry.name)) ||
    (entry.mesh !== undefined && reads.meshes.has(entry.mesh))
  );
}

/** Re-seals `group`'s entries after `prevRevision` (hash `prevHash`), in place; returns the new end. */
function reseal(
  group: QueuedGroup,
  prevRevision: number,
  prevHash: string,
): { revision: number; hash: string } {
  let revision = prevRevision;
  let hash = prevHash;
  group.entries.forEach((entry, i) => {
    revision += 1;
    if (entry.revision !== revision || entry.prevHash !== hash) {
      const sealed = sealEntry(entry, revision, entry.time, hash);
      // Same keys in the same order: the appender's objects now hold the final revision and hashes.
      Object.assign(entry, sealed.entry);
      group.json[i] = sealed.json;
    }
    hash = entry.hash;
  });
  return { revision, hash };
}

/** Creates the group-commit queue an adapter wraps around its storage. */
export function createGroupCommit(deps: GroupCommitDeps): GroupCommit {
  const isoNow = isoClock(deps.now);
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
  /** Entries of other writers applied since the oldest queued group's basis (conflict checks). */
  let foreign: LogEntry[] = [];
  /**
   * Entries of refused groups, with the appends that may have been decided on them while they were
   * pending: those appended after the refused group (`after`) and up to its refusal (`until`).
   */
  let refused: Array<{ entry: LogEntry; after: number; until: number }> = [];
  let appended = 0;
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

  /** Records why the log cannot write: what the 503s and /ready say. */
  function refuseWith(error: unknown): string {
    failureReason = `event log cannot write: ${errorChain(error)}`;
    failure = logUnavailable(`${failureReason}; writes are refused until it recovers (retrying)`, error);
    return failureReason;
  }

  function fail(error: unknown, groups: QueuedGroup[]): void {
    const reason = refuseWith(error);
    // The failed batch and every group queued behind it (chained on its hashes) are refused, and
    // the chain resumes from the durable head: nothing answered 503 is ever acknowledged. A batch
    // whose commit reply was lost may be stored: its appenders are told the outcome is unknown (the
    // store's adapter reads it back as it recovers); the groups queued behind it were never sent.
    const queued = queue;
    queue = [];
    assignedHead = durableHead;
    assignedHash = durableHash;
    const batchError = error instanceof CommitOutcomeUnknown ? outcomeUnknown(error.cause) : failure;
    for (const group of groups) group.reject(batchError);
    for (const group of queued) group.reject(failure);
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
        (error: unknown) => {
          recovering = undefined;
          if (state !== 'failed') return;
          // What stops it now (a server still down) is what the 503s and /ready say, not the first error.
          refuseWith(error);
          scheduleRecovery(Math.min(delayMs * 2, retry.maxMs));
        },
      );
    }, delayMs);
  }

  /** Applies other writers' entries: the head moves past them and the listeners see them. */
  function applyForeign(entries: readonly LogEntry[]): void {
    const fresh: LogEntry[] = [];
    for (const entry of entries) {
      if (entry.revision <= durableHead) continue;
      if (entry.revision !== durableHead + 1 || entry.prevHash !== durableHash) {
        throw new AppError(
          'INTERNAL',
          'Event log corrupt',
          `entry ${entry.revision} of another writer does not follow revision ${durableHead} (hash ${durableHash})`,
        );
      }
      durableHead = entry.revision;
      durableHash = entry.hash;
      fresh.push(entry);
    }
    if (fresh.length === 0) return;
    if (assignedHead < durableHead) {
      assignedHead = durableHead;
      assignedHash = durableHash;
    }
    for (const entry of fresh) foreign.push(entry);
    notify(fresh);
  }

  /**
   * The groups of a batch that may still be written: a group conflicts with another writer's entry
   * newer than its basis that touches what it read, and with the entries of a refused group it may
   * have been decided on. Refused groups are rejected at once.
   */
  function admit(groups: QueuedGroup[]): QueuedGroup[] {
    if (foreign.length === 0 && refused.length === 0) return groups;
    const live: QueuedGroup[] = [];
    for (const group of groups) {
      const { reads } = group;
      const hit =
        reads !== undefined &&
        (foreign.some((entry) => entry.revision > group.basis && touches(reads, entry)) ||
          refused.some((r) => group.seq > r.after && group.seq <= r.until && touches(reads, r.entry)));
      if (!hit) {
        live.push(group);
        continue;
      }
      for (const entry of group.entries) refused.push({ entry, after: group.seq, until: appended });
      group.reject(new AppendConflict(durableHead));
    }
    return live;
  }

  /** The batch of `groups`, numbered after the durable head. */
  function batchOf(groups: QueuedGroup[]): CommitBatch {
    let end = { revision: durableHead, hash: durableHash };
    // Loops, not flatMap and a spread into Object.assign: this runs for every batch.
    const entries: LogEntry[] = [];
    const json: string[] = [];
    const meta: Record<string, string> = {};
    for (const group of groups) {
      end = reseal(group, end.revision, end.hash);
      for (const entry of group.entries) entries.push(entry);
      for (const text of group.json) json.push(text);
      if (group.meta) Object.assign(meta, group.meta);
    }
    const before = durableHead;
    return {
      entries,
      json,
      meta,
      head: end.revision,
      before,
      rebase(others) {
        applyForeign(others);
        live = admit(live);
        return batchOf(live);
      },
    };
  }

  let live: QueuedGroup[] = [];

  async function flush(): Promise<void> {
    scheduled = false;
    live = admit(queue);
    queue = [];
    if (live.length === 0) {
      settleIdle();
      return;
    }
    writing = true;
    let batch = batchOf(live);
    const rebase = batch.rebase;
    // The adapter may write a rebased batch: what it wrote is the batch its rebase returned last.
    batch.rebase = (others) => (batch = rebase(others));
    try {
      await deps.write(batch);
    } catch (error) {
      writing = false;
      fail(error, live);
      live = [];
      settleIdle();
      return;
    }
    // The groups the written batch holds (a rebase may have refused some).
    const groups = live;
    live = [];
    const { entries } = batch;
    writing = false;
    durableHead = batch.head;
    if (entries.length > 0) durableHash = entries[entries.length - 1].hash;
    assignedHead = Math.max(assignedHead, durableHead);
    if (assignedHead === durableHead) assignedHash = durableHash;
    counters.batches += 1;
    counters.entries += entries.length;
    // The next batch (appends made while this one was written) goes to the store first, before the
    // listeners apply this one and the appenders answer their callers: its synced write runs while
    // they do, so the pipeline never stalls on them.
    if (!scheduled && queue.length > 0) void flush();
    notify(entries);
    pruneForeign();
    for (const group of groups) group.resolve();
    settleIdle();
  }

  /** Forgets the entries (other writers', refused) no queued group can conflict with any more. */
  function pruneForeign(): void {
    if (foreign.length === 0 && refused.length === 0) return;
    const pending = [...live, ...queue];
    const oldest = pending.reduce((low, group) => Math.min(low, group.basis), Infinity);
    foreign = foreign.filter((entry) => entry.revision > oldest);
    const first = pending.reduce((low, group) => Math.min(low, group.seq), Infinity);
    refused = refused.filter((r) => r.until >= first);
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

    append(inputs, meta, reads) {
      if (state !== 'open') throw refusal();
      if (meta) for (const key of Object.keys(meta)) assertMetaKey(key);
      const time = isoNow();
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
        appended += 1;
        queue.push({
          entries,
          json,
          meta: meta && { ...meta },
          basis: durableHead,
          reads,
          seq: appended,
          resolve,
          reject,
        });
      });
      scheduleFlush();
      return { entries: [...entries], durable };
    },

    head: () => durableHead,

    applyForeign(entries) {
      applyForeign(entries);
      pruneForeign();
    },

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
