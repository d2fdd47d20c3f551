import type { SyncedChange, SyncRules } from '../app/decide-sync.js';
import type { SyncApplier, SyncBatchResult, SyncRejection } from '../app/sync-apply.js';
import type { Actor, WireResource } from '../events/types.js';
import type { Batch, Rejection, SyncMessage } from './sync-protocol.js';
import { DEFAULT_LIMITS } from './entry-sender.js';
import { logOperation } from './sync-protocol.js';

/** A receiver's cursor as kept in the log's meta: which log, which revision (and extras). */
export type StoredCursor = { logId: string; revision: number } & Record<string, unknown>;

/** Reads a stored cursor; undefined when absent or unreadable. */
export function parseCursor(value: string | undefined): StoredCursor | undefined {
  if (!value) return undefined;
  try {
    const c = JSON.parse(value) as StoredCursor;
    return typeof c.logId === 'string' && typeof c.revision === 'number' ? c : undefined;
  } catch {
    return undefined;
  }
}

/** What the receiver reports per applied batch, for counters and logs. */
export interface ReceiverEvents {
  applied(batch: Batch, kinds: ReadonlyMap<string, number>, result: SyncBatchResult): void;
}

/** Applies the batches of one stream in order and acknowledges each once it is durable. */
export interface EntryReceiver {
  /** Called by the read loop: queues the batch and returns at once. */
  onBatch(batch: Batch): void;
  stop(): void;
}

/** Above this many queued batches the stream is paused (the sender's window keeps it lower). */
const HIGH_WATER = 2 * DEFAULT_LIMITS.window;

/**
 * Creates a receiver. Each batch is applied through the write path with the new cursor in the same
 * append; a snapshot (PART… END) invalidates the cursor first and, at its end, removes what the peer
 * owned that it lacked. A rejected entry is listed in the batch's Ack; a failing apply ends the stream.
 */
export function createEntryReceiver(deps: {
  applier: SyncApplier;
  rules: SyncRules;
  actor: Actor;
  /** Meta key of the cursor. */
  cursorKey: string;
  /** The stored cursor value for a revision of the peer's log. */
  cursorValue(revision: number): string;
  /** The cursor already applied (entries at or below it are replays and skipped). */
  cursor: number;
  send(msg: SyncMessage): void;
  pause(): void;
  resume(): void;
  events: ReceiverEvents;
  onError(err: unknown): void;
}): EntryReceiver {
  const queue: Batch[] = [];
  let stopped = false;
  let paused = false;
  let cursor = deps.cursor;
  let seen: Set<string> | undefined;
  const invalid = JSON.stringify({ logId: '', revision: 0 });

  const toChange = (e: Batch['entries'][number], rejected: SyncRejection[]): SyncedChange | undefined => {
    const operation = logOperation(e.operation);
    let resource: WireResource | undefined;
    if (operation !== 'delete') {
      try {
        resource = JSON.parse(e.resource.toString('utf8')) as WireResource;
      } catch {
        rejected.push({
          revision: e.revision,
          kind: e.kind,
          mesh: e.mesh || undefined,
          name: e.name,
          reason: 'the resource is not JSON',
        });
        return undefined;
      }
    }
    return {
      revision: e.revision,
      kind: e.kind,
      mesh: e.mesh || undefined,
      name: e.name,
      operation,
      resource,
      changeSet: e.changeSet ? e.changeSet : undefined,
    };
  };

  /** Decides and appends one batch now; its Ack goes once it is durable (in order: appends are). */
  const applyOne = (batch: Batch): Promise<void> => {
    const snapshot = batch.snapshot !== 'NONE';
    if (snapshot && !seen) seen = new Set();
    const rejected: SyncRejection[] = [];
    const changes: SyncedChange[] = [];
    const kinds = new Map<string, number>();
    for (const e of batch.entries) {
      if (!snapshot && e.revision <= cursor) continue;
      kinds.set(e.kind, (kinds.get(e.kind) ?? 0) + 1);
      const c = toChange(e, rejected);
      if (c) changes.push(c);
    }
    const end = batch.snapshot === 'END';
    const next = batch.snapshot === 'PART' ? cursor : Math.max(cursor, batch.toRevision);
    const result = deps.applier.applyBatch({
      changes,
      rules: deps.rules,
      actor: deps.actor,
      // While a snapshot comes in, the stored cursor says "nothing": a restart asks for a new one.
      meta: { [deps.cursorKey]: batch.snapshot === 'PART' ? invalid : deps.cursorValue(next) },
      snapshotSeen: seen,
      snapshotEnd: end,
    });
    if (end) seen = undefined;
    if (batch.snapshot !== 'PART') cursor = next;
    const acked = cursor;
    // Not unshift(...rejected): a batch may reject more entries than a call takes arguments.
    if (rejected.length > 0) result.rejected = rejected.concat(result.rejected);
    return result.durable.then(() => {
      if (stopped) return;
      const wire: Rejection[] = result.rejected.map((r) => ({ ...r, mesh: r.mesh ?? '' }));
      deps.send({ ack: { seq: batch.seq, revision: acked, rejected: wire } });
      deps.events.applied(batch, kinds, result);
    });
  };

  /** Batches appended and not yet durable at most: decisions run ahead of the disk by this much. */
  const AHEAD = 4;
  let writing = 0;
  const run = (): void => {
    while (!stopped && queue.length > 0 && writing < AHEAD) {
      writing += 1;
      let done: Promise<void>;
      try {
        done = applyOne(queue.shift() as Batch);
      } catch (err) {
        stopped = true;
        deps.onError(err);
        return;
      }
      done.then(
        () => {
          writing -= 1;
          run();
        },
        (err: unknown) => {
          if (stopped) return;
          stopped = true;
          deps.onError(err);
        },
      );
    }
    if (paused && queue.length <= HIGH_WATER / 2) {
      paused = false;
      deps.resume();
    }
  };

  return {
    onBatch(batch) {
      if (stopped) return;
      queue.push(batch);
      if (!paused && queue.length > HIGH_WATER) {
        paused = true;
        deps.pause();
      }
      run();
    },
    stop() {
      stopped = true;
      queue.length = 0;
    },
  };
}
