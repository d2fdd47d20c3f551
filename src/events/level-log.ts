import { mkdir } from 'node:fs/promises';

import { Level } from 'level';

import { AppError } from '../util/errors.js';
import { GENESIS_HASH } from './hash.js';
import { createGroupCommit, logUnavailable } from './group-commit.js';
import {
  ENTRY_PREFIX,
  HEAD_META_KEY,
  assertMetaKey,
  decodeRevision,
  entryKey,
  historyKey,
  historyPrefix,
  metaKey,
  prefixRange,
  revisionRange,
} from './keys.js';
import type { CommitBatch } from './group-commit.js';
import { createLevelSnapshotStore } from './snapshot-store.js';
import type { EventLog, LogEntry } from './types.js';

/** Options of {@link createLevelLog}. */
export interface LevelLogOptions {
  /** Directory of the LevelDB store; created if missing. */
  path: string;
  /** Clock for entry times (tests inject one). */
  now?: () => Date;
  /** Receives what a commit listener throws; by default it is rethrown on a later turn. */
  onListenerError?: (error: unknown) => void;
}

type Db = Level<string, string>;

const CHUNK = 1000;

/** An `EventLog` on LevelDB: one synced batch per group commit, entries, history index and meta together. */
export function createLevelLog(options: LevelLogOptions): EventLog {
  let db: Db | undefined;
  let closing: Promise<void> | undefined;
  const pendingMeta = new Set<Promise<void>>();

  function currentDb(): Db {
    if (db === undefined) throw logUnavailable('the event log is closed');
    return db;
  }

  async function write(batch: CommitBatch): Promise<void> {
    // A chained batch: abstract-level's array form copies and normalises every operation object;
    // in a raw test of synced 100-entry batches of 0.7 KB entries it used 29-38 µs CPU per entry
    // against 12-16 µs chained.
    const ops = currentDb().batch();
    try {
      batch.entries.forEach((entry, i) => {
        ops.put(entryKey(entry.revision), batch.json[i]);
        ops.put(historyKey(entry.kind, entry.mesh, entry.name, entry.revision), '');
      });
      for (const [key, value] of Object.entries(batch.meta)) ops.put(metaKey(key), value);
      ops.put(metaKey(HEAD_META_KEY), String(batch.head));
    } catch (error) {
      await ops.close();
      throw error;
    }
    await ops.write({ sync: true });
  }

  const core = createGroupCommit({ write, now: options.now, onListenerError: options.onListenerError });

  async function readHead(store: Db): Promise<{ head: number; hash: string }> {
    const [last] = await store.iterator({ ...prefixRange(ENTRY_PREFIX), reverse: true, limit: 1 }).all();
    if (last === undefined) return { head: 0, hash: GENESIS_HASH };
    return { head: decodeRevision(last[0]), hash: (JSON.parse(last[1]) as LogEntry).hash };
  }

  async function shutdown(): Promise<void> {
    await core.stop();
    await Promise.allSettled(pendingMeta);
    const store = db;
    db = undefined;
    await store?.close();
  }

  return {
    async open() {
      if (closing) await closing;
      if (db !== undefined) return;
      const store: Db = new Level<string, string>(options.path, { valueEncoding: 'utf8' });
      try {
        await mkdir(options.path, { recursive: true });
        await store.open();
        const { head, hash } = await readHead(store);
        core.start(head, hash);
      } catch (error) {
        await store.close().catch(() => undefined);
        const code = (error as { cause?: { code?: string } }).cause?.code;
        const fsCode = (error as { code?: string }).code;
        throw logUnavailable(
          code === 'LEVEL_LOCKED'
            ? `the data dir ${options.path} is in use by another mesh-cp process (LevelDB lock held)`
            : fsCode === 'EEXIST' || fsCode === 'ENOTDIR'
              ? `cannot open the event log at ${options.path}: it (or a parent) is a file, not a directory`
              : `cannot open the event log at ${options.path}: ${(error as Error).message}`,
          error,
        );
      }
      db = store;
    },

    close() {
      closing ??= shutdown().finally(() => {
        closing = undefined;
      });
      return closing;
    },

    head: () => core.head(),

    append: (inputs, meta) => core.append(inputs, meta),

    async *read(fromRevision, toRevision) {
      core.assertReadable();
      const { from, to } = revisionRange(fromRevision, toRevision);
      if (to < from) return;
      const upper = to === Infinity ? { lt: prefixRange(ENTRY_PREFIX).lt } : { lte: entryKey(to) };
      const values = currentDb().values({ gte: entryKey(from), ...upper });
      try {
        for (let chunk = await values.nextv(CHUNK); chunk.length > 0; chunk = await values.nextv(CHUNK)) {
          for (const value of chunk) yield JSON.parse(value) as LogEntry;
        }
      } finally {
        await values.close();
      }
    },

    async *readRawChunks({ from = 1, to, reverse = false }) {
      core.assertReadable();
      const range = revisionRange(from, to);
      if (range.to < range.from) return;
      const upper =
        range.to === Infinity ? { lt: prefixRange(ENTRY_PREFIX).lt } : { lte: entryKey(range.to) };
      const values = currentDb().values({ gte: entryKey(range.from), ...upper, reverse });
      try {
        for (let chunk = await values.nextv(CHUNK); chunk.length > 0; chunk = await values.nextv(CHUNK))
          yield chunk;
      } finally {
        await values.close();
      }
    },

    async *history(kind, mesh, name) {
      core.assertReadable();
      const store = currentDb();
      const keys = store.keys(prefixRange(historyPrefix(kind, mesh, name)));
      try {
        for (let chunk = await keys.nextv(CHUNK); chunk.length > 0; chunk = await keys.nextv(CHUNK)) {
          const values = await store.getMany(chunk.map((key) => entryKey(decodeRevision(key))));
          for (const [i, value] of values.entries()) {
            if (value === undefined) {
              throw new AppError('INTERNAL', 'Event log corrupt', `history key ${chunk[i]} has no entry`);
            }
            yield JSON.parse(value) as LogEntry;
          }
        }
      } finally {
        await keys.close();
      }
    },

    async getMeta(key) {
      core.assertReadable();
      return currentDb().get(metaKey(key));
    },

    async putMeta(key, value) {
      core.assertWritable();
      assertMetaKey(key);
      const put = currentDb().put(metaKey(key), value, { sync: true });
      pendingMeta.add(put);
      try {
        await put;
      } finally {
        pendingMeta.delete(put);
      }
    },

    onCommit: (listener) => core.onCommit(listener),

    stats: () => core.stats(),

    snapshots: createLevelSnapshotStore(currentDb),
  };
}
