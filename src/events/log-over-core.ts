/**
 * What the three adapters (memory, LevelDB, PostgreSQL) share is one group-commit core: an adapter
 * supplies only what touches its store (open, close, the reads, the meta values, and its own
 * catchUp and ensureMeta when it has them), and {@link logOverCore} adds the rest once: head,
 * append, onCommit, stats and writeFailure from the core, and, for a log with one writer, a catchUp
 * with nothing to catch up with and an ensureMeta made of getMeta then putMeta.
 *
 * A composed object rather than a base class: the adapters stay `createX(options)` factories over
 * closures (their store handles, timers and connections private by scope), callers may pass a
 * member on unbound, and what only one adapter has (LevelDB's `snapshots`, PostgreSQL's
 * `othersRunning`) passes through as the adapter wrote it.
 */
import type { EventLog } from './event-log.js';
import type { GroupCommit } from './group-commit.js';
import type { LogAdapter } from './log-lifecycle.js';

/** The members {@link logOverCore} provides from the group-commit core. */
type CoreMembers = 'head' | 'append' | 'onCommit' | 'stats' | 'writeFailure';

/** What an adapter writes itself: its store's lifecycle, reads and meta values (catchUp and ensureMeta when it has its own). */
export type StoreParts = Omit<LogAdapter, CoreMembers | 'catchUp' | 'ensureMeta'> &
  Partial<Pick<EventLog, 'catchUp' | 'ensureMeta'>>;

/** An adapter's log: `parts` (and whatever else the adapter puts in it) with the members the core provides. */
export function logOverCore<Parts extends StoreParts>(core: GroupCommit, parts: Parts): Parts & LogAdapter {
  const log: Parts & LogAdapter = {
    ...parts,
    head: () => core.head(),
    append: (inputs, meta, reads) => core.append(inputs, meta, reads),
    onCommit: (listener) => core.onCommit(listener),
    stats: () => core.stats(),
    writeFailure: () => core.writeFailure(),
    // One writer: nothing to catch up with.
    catchUp: parts.catchUp ?? (async () => core.assertReadable()),
    ensureMeta:
      parts.ensureMeta ??
      (async (key, value) => {
        const stored = await log.getMeta(key);
        if (stored !== undefined) return stored;
        await log.putMeta(key, value);
        return value;
      }),
  };
  return log;
}
