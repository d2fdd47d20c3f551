/**
 * The LevelDB keys of the event log and its snapshots (entries, history index, meta, snapshot
 * chunks): storage encoding, joined and read back here only. The in-memory composite keys (view,
 * resource, policy keys, locations, zone-prefixed names) are in resources/keys.ts.
 */
import { AppError } from '../util/errors.js';

/** Prefix of log entries: `e!<revision>`. */
export const ENTRY_PREFIX = 'e!';
/** Prefix of the history index: `res!<kind>!<mesh>!<name>!<revision>`. */
export const HISTORY_PREFIX = 'res!';
/** Prefix of meta values: `m!<key>`. */
export const META_PREFIX = 'm!';
/** Prefix of snapshot keys: `s!<revision>!c<chunk>` (resources) and `s!<revision>!meta`. */
export const SNAPSHOT_PREFIX = 's!';
/** Meta key the log keeps its head revision under, written with every batch. */
export const HEAD_META_KEY = 'head';

const REVISION_WIDTH = 16;
const SNAPSHOT_META_SUFFIX = '!meta';
const CHUNK_WIDTH = 7;

/** A revision zero-padded to 16 digits, so keys sort in log order. */
export function encodeRevision(revision: number): string {
  return String(revision).padStart(REVISION_WIDTH, '0');
}

/** The revision at the end of an entry or history key. */
export function decodeRevision(key: string): number {
  return Number(key.slice(-REVISION_WIDTH));
}

/** The key of the entry at `revision`. */
export function entryKey(revision: number): string {
  return ENTRY_PREFIX + encodeRevision(revision);
}

/** The prefix of one resource's history keys (`!` sorts below every legal name character). */
export function historyPrefix(kind: string, mesh: string | undefined, name: string): string {
  return `${HISTORY_PREFIX}${kind}!${mesh ?? ''}!${name}!`;
}

/** The history-index key of one resource's change at `revision`. */
export function historyKey(kind: string, mesh: string | undefined, name: string, revision: number): string {
  return historyPrefix(kind, mesh, name) + encodeRevision(revision);
}

/** The key of a meta value. */
export function metaKey(key: string): string {
  return META_PREFIX + key;
}

/** The key of the meta record of the snapshot at `revision`. */
export function snapshotMetaKey(revision: number): string {
  return `${SNAPSHOT_PREFIX}${encodeRevision(revision)}${SNAPSHOT_META_SUFFIX}`;
}

/** Whether a snapshot key is a meta record (else a chunk of resources). */
export function isSnapshotMetaKey(key: string): boolean {
  return key.endsWith(SNAPSHOT_META_SUFFIX);
}

/** The key of chunk `chunk` of the snapshot at `revision` (zero-padded: chunks sort in order). */
export function snapshotChunkKey(revision: number, chunk: number): string {
  return `${SNAPSHOT_PREFIX}${encodeRevision(revision)}!c${String(chunk).padStart(CHUNK_WIDTH, '0')}`;
}

/** The revision of a snapshot key. */
export function snapshotRevisionOf(key: string): number {
  return Number(key.slice(SNAPSHOT_PREFIX.length, SNAPSHOT_PREFIX.length + REVISION_WIDTH));
}

/** Bounds covering every key that starts with `prefix`. */
export function prefixRange(prefix: string): { gte: string; lt: string } {
  const last = prefix.length - 1;
  return { gte: prefix, lt: prefix.slice(0, last) + String.fromCharCode(prefix.charCodeAt(last) + 1) };
}

/** Refuses to write a meta key the log keeps for itself (`head`). */
export function assertMetaKey(key: string): void {
  if (key === HEAD_META_KEY) {
    throw new AppError(
      'INTERNAL',
      'Reserved meta key',
      `meta key "${key}" is written by the event log itself`,
    );
  }
}

/** Normalizes a `read` range to whole revisions from 1; `to` is Infinity when open-ended. */
export function revisionRange(from: number, to?: number): { from: number; to: number } {
  return {
    from: Math.max(1, Math.ceil(from) || 1),
    to: to === undefined || !(to < Number.MAX_SAFE_INTEGER) ? Infinity : Math.floor(to),
  };
}
