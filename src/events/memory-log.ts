import { GENESIS_HASH } from './hash.js';
import { createGroupCommit } from './group-commit.js';
import { HEAD_META_KEY, assertMetaKey, historyPrefix, revisionRange } from './keys.js';
import type { CommitBatch } from './group-commit.js';
import type { LogAdapter } from './log-lifecycle.js';
import { logOverCore } from './log-over-core.js';
import type { LogEntry } from './types.js';

/** Options of {@link createMemoryLog}. */
export interface MemoryLogOptions {
  /** Clock for entry times (tests inject one). */
  now?: () => Date;
  /** Receives what a commit listener throws; by default it is rethrown on a later turn. */
  onListenerError?: (error: unknown) => void;
}

/** A write takes one I/O turn, as a disk would, so appends made meanwhile queue for the next batch. */
function ioTurn(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** An event log kept in memory, with the same semantics as the LevelDB adapter; survives close/open. */
export function createMemoryLog(options: MemoryLogOptions = {}): LogAdapter {
  // Entries are kept as their stored JSON, so readers get copies and nobody can alter the log.
  const entries: string[] = [];
  const history = new Map<string, number[]>();
  const meta = new Map<string, string>();

  async function write(batch: CommitBatch): Promise<void> {
    await ioTurn();
    batch.entries.forEach((entry, i) => {
      entries.push(batch.json[i]);
      const key = historyPrefix(entry.kind, entry.mesh, entry.name);
      const revisions = history.get(key);
      if (revisions) revisions.push(entry.revision);
      else history.set(key, [entry.revision]);
    });
    for (const [key, value] of Object.entries(batch.meta)) meta.set(key, value);
    meta.set(HEAD_META_KEY, String(batch.head));
  }

  const core = createGroupCommit({ write, now: options.now, onListenerError: options.onListenerError });
  let opened = false;

  function entryAt(revision: number): LogEntry {
    return JSON.parse(entries[revision - 1]) as LogEntry;
  }

  return logOverCore(core, {
    async open() {
      if (opened) return;
      const head = entries.length;
      core.start(head, head === 0 ? GENESIS_HASH : entryAt(head).hash);
      opened = true;
    },

    async close() {
      opened = false;
      await core.stop();
    },

    async *read(fromRevision, toRevision) {
      core.assertReadable();
      const { from, to } = revisionRange(fromRevision, toRevision);
      const last = Math.min(to, entries.length);
      for (let revision = from; revision <= last; revision += 1) yield entryAt(revision);
    },

    async *readRawChunks({ from = 1, to, reverse = false }) {
      core.assertReadable();
      const range = revisionRange(from, to);
      const last = Math.min(range.to, entries.length);
      if (last < range.from) return;
      // entries[i] holds revision i + 1.
      const slice = entries.slice(range.from - 1, last);
      if (reverse) slice.reverse();
      for (let i = 0; i < slice.length; i += 1000) yield slice.slice(i, i + 1000);
    },

    async *history(kind, mesh, name) {
      core.assertReadable();
      const revisions = [...(history.get(historyPrefix(kind, mesh, name)) ?? [])];
      for (const revision of revisions) yield entryAt(revision);
    },

    async getMeta(key) {
      core.assertReadable();
      return meta.get(key);
    },

    async putMeta(key, value) {
      core.assertWritable();
      assertMetaKey(key);
      await ioTurn();
      meta.set(key, value);
    },
  });
}
