import { createHash } from 'node:crypto';

import type { Level } from 'level';

import {
  SNAPSHOT_PREFIX,
  entryKey,
  isSnapshotMetaKey,
  prefixRange,
  snapshotChunkKey,
  snapshotMetaKey,
  snapshotRevisionOf,
} from './keys.js';
import type { LogEntry, WireResource } from './types.js';
import { counted } from '../util/plural.js';

const FORMAT = 1;
const CHUNK_ITEMS = 1000;
/**
 * A chunk also ends once its JSON passes this many characters: 1,000 resources of 1 MB would pass
 * V8's longest string (~512 M characters) and fail every snapshot ("Invalid string length").
 */
const CHUNK_CHARS = 16 * 1024 * 1024;

/** One stored resource in a snapshot: what the views hold for it. */
export interface SnapshotItem {
  kind: string;
  mesh?: string;
  name: string;
  /** Revision of the resource's last change (its ETag). */
  revision: number;
  origin: string;
  resource: WireResource;
}

/** What a snapshot says about itself (its `meta` record). */
export interface SnapshotInfo {
  /** The log revision the snapshot reflects. */
  revision: number;
  /** Hash of the log entry at `revision`: a snapshot only counts for the log it was made from. */
  hash: string;
  /** Time of the log entry at `revision`. */
  time: string;
  /** Time of the last entry that touched each mesh (mesh insights show it as `modificationTime`). */
  meshTimes: Record<string, string>;
  resources: number;
  chunks: number;
}

/** A whole snapshot: its meta and its resources in the order they were written. */
export interface Snapshot extends SnapshotInfo {
  items: SnapshotItem[];
}

/** A snapshot listed by {@link SnapshotStore.list}: its meta, or why the meta cannot be read. */
export type SnapshotListing = { revision: number; info?: SnapshotInfo; problem?: string };

/** Raised by {@link SnapshotStore.read} when a snapshot is incomplete, corrupt or not of this log. */
export class SnapshotDamaged extends Error {
  constructor(
    readonly revision: number,
    reason: string,
  ) {
    super(`snapshot at revision ${revision}: ${reason}`);
    this.name = 'SnapshotDamaged';
  }
}

/**
 * Snapshots of the projections kept beside the log (architecture: a snapshot is an optimisation;
 * deleting one never loses data). Only the LevelDB adapter has them.
 */
export interface SnapshotStore {
  /** Every snapshot with a meta record, newest first. */
  list(): Promise<SnapshotListing[]>;
  /** Reads one snapshot and checks it against its checksum and the log; throws {@link SnapshotDamaged}. */
  read(revision: number): Promise<Snapshot>;
  /**
   * Writes a snapshot: resource chunks first, the meta record last (synced), so a snapshot cut short
   * has no meta and is never read. `aborted` is polled between chunks.
   */
  write(snapshot: Snapshot, aborted?: () => boolean): Promise<boolean>;
  /** Deletes every snapshot key except those of the given revisions (also chunks a cut-short write left). */
  retain(revisions: readonly number[]): Promise<number>;
}

type Db = Level<string, string>;

const yieldTurn = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

interface StoredMeta extends SnapshotInfo {
  format: number;
  /** sha256 hex over every chunk value, in order. */
  sha256: string;
}

/** The snapshot store of a LevelDB event log; `db` gives the open store (it throws once closed). */
export function createLevelSnapshotStore(db: () => Db): SnapshotStore {
  return {
    async list() {
      const keys = await db()
        .keys({ ...prefixRange(SNAPSHOT_PREFIX), reverse: true })
        .all();
      const metaKeys = keys.filter(isSnapshotMetaKey);
      const values = await db().getMany(metaKeys);
      return metaKeys.map((key, i) => {
        const revision = snapshotRevisionOf(key);
        try {
          const meta = JSON.parse(values[i] ?? '') as StoredMeta;
          if (meta.format !== FORMAT) return { revision, problem: `unknown format ${String(meta.format)}` };
          const { format: _f, sha256: _s, ...info } = meta;
          return { revision, info };
        } catch {
          return { revision, problem: 'meta record is not valid JSON' };
        }
      });
    },

    async read(revision) {
      const store = db();
      const raw = await store.get(snapshotMetaKey(revision));
      if (raw === undefined) throw new SnapshotDamaged(revision, 'no meta record');
      let meta: StoredMeta;
      try {
        meta = JSON.parse(raw) as StoredMeta;
      } catch {
        throw new SnapshotDamaged(revision, 'meta record is not valid JSON');
      }
      if (meta.format !== FORMAT)
        throw new SnapshotDamaged(revision, `unknown format ${String(meta.format)}`);
      const entry = await store.get(entryKey(revision));
      if (entry === undefined) throw new SnapshotDamaged(revision, 'the log has no entry at this revision');
      let entryHash: string | undefined;
      try {
        entryHash = (JSON.parse(entry) as LogEntry).hash;
      } catch {
        entryHash = undefined;
      }
      if (entryHash !== meta.hash) {
        throw new SnapshotDamaged(revision, 'its hash is not the hash of the log entry at its revision');
      }
      const chunkKeys = Array.from({ length: meta.chunks }, (_, i) => snapshotChunkKey(revision, i));
      const values = chunkKeys.length > 0 ? await store.getMany(chunkKeys) : [];
      const sha = createHash('sha256');
      const items: SnapshotItem[] = [];
      for (const [i, value] of values.entries()) {
        if (value === undefined) throw new SnapshotDamaged(revision, `chunk ${i} is missing`);
        sha.update(value);
        try {
          items.push(...(JSON.parse(value) as SnapshotItem[]));
        } catch {
          throw new SnapshotDamaged(revision, `chunk ${i} is not valid JSON`);
        }
      }
      if (sha.digest('hex') !== meta.sha256) throw new SnapshotDamaged(revision, 'checksum does not match');
      if (items.length !== meta.resources) {
        throw new SnapshotDamaged(
          revision,
          `holds ${counted(items.length, 'resource')}, its meta says ${meta.resources}`,
        );
      }
      const { format: _f, sha256: _s, ...info } = meta;
      return { ...info, items };
    },

    async write(snapshot, aborted = () => false) {
      const sha = createHash('sha256');
      let chunks = 0;
      const { items } = snapshot;
      for (let i = 0; i < items.length;) {
        if (aborted()) return false;
        // The JSON of the chunk's array, built from its items' JSON: the same text, with a known length.
        const parts: string[] = [];
        let chars = 0;
        while (i < items.length && parts.length < CHUNK_ITEMS && chars < CHUNK_CHARS) {
          const json = JSON.stringify(items[i++]);
          parts.push(json);
          chars += json.length + 1;
        }
        const value = `[${parts.join(',')}]`;
        sha.update(value);
        await db().put(snapshotChunkKey(snapshot.revision, chunks), value);
        chunks += 1;
        // Serialising a large snapshot must not hold the event loop: one chunk per turn.
        await yieldTurn();
      }
      if (aborted()) return false;
      const meta: StoredMeta = {
        format: FORMAT,
        revision: snapshot.revision,
        hash: snapshot.hash,
        time: snapshot.time,
        meshTimes: snapshot.meshTimes,
        resources: snapshot.items.length,
        chunks,
        sha256: sha.digest('hex'),
      };
      await db().put(snapshotMetaKey(snapshot.revision), JSON.stringify(meta), { sync: true });
      return true;
    },

    async retain(revisions) {
      const keep = new Set(revisions);
      const keys = await db().keys(prefixRange(SNAPSHOT_PREFIX)).all();
      const doomed = keys.filter((k) => !keep.has(snapshotRevisionOf(k)));
      if (doomed.length > 0) await db().batch(doomed.map((key) => ({ type: 'del' as const, key })));
      return new Set(doomed.map(snapshotRevisionOf)).size;
    },
  };
}
