import { existsSync } from 'node:fs';
import { join } from 'node:path';

import { Level } from 'level';

import { AppError } from '../util/errors.js';
import { verifyEntries } from './hash.js';
import { DamageFound, exportCheckedEntries, importCheckedEntries, type Damage } from './log-damage.js';
import {
  ENTRY_PREFIX,
  HEAD_META_KEY,
  HISTORY_PREFIX,
  decodeRevision,
  entryKey,
  historyKey,
  metaKey,
  prefixRange,
  revisionRange,
} from './keys.js';
import type { OfflineLog, StoreCheck, ToolResult } from './log-admin.js';
import { createLevelSnapshotStore } from './snapshot-store.js';
import type { LogEntry } from './types.js';
import { makeDir } from '../util/make-dir.js';
import { counted } from '../util/plural.js';

type Db = Level<string, string>;

const CHUNK = 1000;

/** A LevelDB store opened by a log tool (`mesh-cp log ...`), not by the running control plane. */
export interface LevelStore {
  path: string;
  db: Db;
  close(): Promise<void>;
}

/** The message a tool prints when the control plane holds the store (LevelDB allows one process). */
export function inUseMessage(path: string): string {
  return `the data dir ${path} is in use by a running mesh-cp; stop it or copy the dir`;
}

/**
 * Opens a data dir for a log tool. `existing` requires a LevelDB store there already (verify,
 * replay, export); otherwise it is created (import). A running control plane holds the LevelDB
 * lock: that is reported as such rather than as a crash.
 */
export async function openLevelStore(path: string, opts: { existing: boolean }): Promise<LevelStore> {
  if (opts.existing && !existsSync(join(path, 'CURRENT'))) {
    throw new AppError('NOT_FOUND', 'No data', `there is no mesh-cp data in ${path}`);
  }
  if (!opts.existing) {
    // Before the Level is made: it opens itself at once, with a recursive mkdir that never returns
    // for some paths (see makeDir).
    // Owner only, as the server makes it: the log holds every secret's data.
    await makeDir(path, 0o700).catch((error: Error) => {
      throw new AppError('UNAVAILABLE', 'Data dir unavailable', `cannot create ${path}: ${error.message}`);
    });
  }
  const db: Db = new Level<string, string>(path, {
    valueEncoding: 'utf8',
    createIfMissing: !opts.existing,
  });
  try {
    await db.open();
  } catch (error) {
    await db.close().catch(() => undefined);
    const code = (error as { cause?: { code?: string } }).cause?.code;
    throw new AppError(
      'UNAVAILABLE',
      'Data dir unavailable',
      code === 'LEVEL_LOCKED'
        ? inUseMessage(path)
        : `cannot open ${path}: ${(error as { cause?: Error }).cause?.message ?? (error as Error).message}`,
    );
  }
  return { path, db, close: () => db.close() };
}

/** The head revision of a store: the revision of its last entry. */
async function headOf(db: Db): Promise<number> {
  const [last] = await db.keys({ ...prefixRange(ENTRY_PREFIX), reverse: true, limit: 1 }).all();
  return last === undefined ? 0 : decodeRevision(last);
}

/** A read-only view of a store for the tools: the same reads as the LevelDB event log adapter. */
export async function createLogReader(store: LevelStore): Promise<OfflineLog> {
  const { db } = store;
  const head = await headOf(db);
  return {
    head: () => head,
    async *read(fromRevision, toRevision) {
      const { from, to } = revisionRange(fromRevision, toRevision);
      const upper = Math.min(to, head);
      if (upper < from) return;
      const values = db.values({ gte: entryKey(from), lte: entryKey(upper) });
      try {
        for (let chunk = await values.nextv(CHUNK); chunk.length > 0; chunk = await values.nextv(CHUNK)) {
          for (const value of chunk) yield JSON.parse(value) as LogEntry;
        }
      } finally {
        await values.close();
      }
    },
    snapshots: createLevelSnapshotStore(() => db),
  };
}

/**
 * The stored entries in key order as raw JSON, each parsed and checked against its key; a value
 * that is not JSON or sits under another revision's key stops the walk with {@link DamageFound}.
 */
async function* storedEntries(db: Db, onChunk?: (entries: LogEntry[]) => Promise<void>) {
  const it = db.iterator(prefixRange(ENTRY_PREFIX));
  try {
    for (let chunk = await it.nextv(CHUNK); chunk.length > 0; chunk = await it.nextv(CHUNK)) {
      const entries: Array<{ entry: LogEntry; json: string }> = [];
      for (const [key, json] of chunk) {
        const revision = decodeRevision(key);
        let entry: LogEntry;
        try {
          entry = JSON.parse(json) as LogEntry;
        } catch {
          throw new DamageFound({ revision, reason: 'the stored entry is not valid JSON' });
        }
        if (typeof entry !== 'object' || entry === null || entry.revision !== revision) {
          throw new DamageFound({
            revision,
            reason: 'the stored entry does not carry the revision of its key',
          });
        }
        entries.push({ entry, json });
      }
      await onChunk?.(entries.map((e) => e.entry));
      yield* entries;
    }
  } finally {
    await it.close();
  }
}

/**
 * `mesh-cp log verify`: the revisions run gap-free from 1, every entry's hash and `prevHash` hold
 * (the chain of `verifyEntries`), and every entry has its history-index key (and no other key is
 * there). Reports the first entry that breaks any of it.
 */
export async function verifyLevelStore(store: LevelStore): Promise<StoreCheck> {
  const { db } = store;
  const head = await headOf(db);
  // The history index is checked per chunk, ahead of the chain: a missing key is reported at its entry.
  let missing: Damage | undefined;
  const checkIndex = async (entries: LogEntry[]): Promise<void> => {
    if (missing) return;
    const keys = entries.map((e) => historyKey(e.kind, e.mesh, e.name, e.revision));
    const found = await db.getMany(keys);
    const i = found.findIndex((v) => v === undefined);
    if (i >= 0) missing = { revision: entries[i].revision, reason: 'its history-index key is missing' };
  };
  let chain: Awaited<ReturnType<typeof verifyEntries>>;
  try {
    chain = await verifyEntries(
      (async function* () {
        for await (const { entry } of storedEntries(db, checkIndex)) yield entry;
      })(),
    );
  } catch (error) {
    if (!(error instanceof DamageFound)) throw error;
    const first = missing && missing.revision < error.damage.revision ? missing : error.damage;
    return { ok: false, head, ...first };
  }
  if (!chain.ok) {
    const first = missing && missing.revision < chain.revision ? missing : chain;
    return { ok: false, head, revision: first.revision, reason: first.reason };
  }
  if (missing) return { ok: false, head, ...missing };
  let historyKeys = 0;
  const keys = db.keys(prefixRange(HISTORY_PREFIX));
  try {
    for (let chunk = await keys.nextv(CHUNK); chunk.length > 0; chunk = await keys.nextv(CHUNK)) {
      for (const key of chunk) {
        const revision = decodeRevision(key);
        if (!(revision >= 1 && revision <= chain.head)) {
          return { ok: false, head, revision, reason: `history-index key ${key} names no entry` };
        }
      }
      historyKeys += chunk.length;
    }
  } finally {
    await keys.close();
  }
  if (historyKeys !== chain.head) {
    return {
      ok: false,
      head,
      revision: chain.head,
      reason: `the history index has ${counted(historyKeys, 'key')} for ${counted(chain.head, 'entry', 'entries')}`,
    };
  }
  return { ok: true, head: chain.head, historyKeys };
}

/**
 * `mesh-cp log export`: hands every entry's stored JSON to `write` (one NDJSON line each), in order,
 * each only once the chain holds up to it; stops at the first damage and reports it.
 */
export async function exportLevelLog(
  store: LevelStore,
  write: (line: string) => Promise<void>,
): Promise<ToolResult> {
  return exportCheckedEntries(storedEntries(store.db), write);
}

/**
 * `mesh-cp log import`: writes entries exported by {@link exportLevelLog} into an empty store,
 * verbatim (their revisions, times and hashes) with their history-index keys and the head meta,
 * checking the chain while it goes. On damage nothing is kept: the store is emptied again.
 */
export async function importLevelLog(store: LevelStore, lines: AsyncIterable<string>): Promise<ToolResult> {
  const { db } = store;
  const [any] = await db.keys({ limit: 1 }).all();
  if (any !== undefined) {
    throw new AppError(
      'BAD_REQUEST',
      'Data dir not empty',
      `${store.path} already holds a mesh-cp store: import only into an empty data dir`,
    );
  }
  let ops: Array<{ type: 'put'; key: string; value: string }> = [];
  let head = 0;
  const flush = async (): Promise<void> => {
    if (ops.length === 0) return;
    ops.push({ type: 'put', key: metaKey(HEAD_META_KEY), value: String(head) });
    await db.batch(ops);
    ops = [];
  };
  const result = await importCheckedEntries(lines, async (entry) => {
    head = entry.revision;
    ops.push({ type: 'put', key: entryKey(entry.revision), value: JSON.stringify(entry) });
    ops.push({ type: 'put', key: historyKey(entry.kind, entry.mesh, entry.name, entry.revision), value: '' });
    if (ops.length >= 2 * CHUNK) await flush();
  });
  if (!result.ok) {
    await db.clear();
    return result;
  }
  await flush();
  await db.put(metaKey(HEAD_META_KEY), String(head), { sync: true });
  return { ok: true, head };
}
