/** What a log entry did to its resource. */
export type Operation = 'create' | 'update' | 'delete';

/** Who made a change (decisions §8). */
export interface Actor {
  name: string;
  groups: string[];
  address: string;
}

/** A resource as it is on the wire: type, mesh?, name, times, then the spec fields flat. */
export type WireResource = Record<string, unknown> & {
  type: string;
  name: string;
  mesh?: string;
  creationTime: string;
  modificationTime: string;
};

/** One change to append: the log assigns revision, time and hashes. */
export interface EventInput {
  /** Registry kind (e.g. `GlobalSecret`, not the wire type). */
  kind: string;
  mesh?: string;
  name: string;
  operation: Operation;
  /** State after the change (create, update). */
  resource?: WireResource;
  /** State before a delete. */
  previous?: WireResource;
  actor: Actor;
  /** `local`, or the zone the change came from. */
  origin: string;
  /**
   * The id of the change set the entry belongs to: every entry of one set (appended as one group)
   * has it. Absent for single writes, and in logs written before change sets existed.
   */
  changeSet?: string;
  /**
   * `JSON.stringify(resource)` when the caller has it already (a PUT's decision does: it is the
   * answer's body): sealing splices it into the entry's JSON instead of serializing the resource a
   * second time. Not part of the entry.
   */
  resourceJson?: string;
}

/** A durable log entry (architecture: the event log). */
export interface LogEntry extends Omit<EventInput, 'resourceJson'> {
  revision: number;
  /** RFC 3339 UTC with milliseconds. */
  time: string;
  prevHash: string;
  hash: string;
}

/**
 * What a decision read, so that a log shared by several writers (PostgreSQL) can refuse a
 * group decided on state another writer has changed since: the group conflicts with any entry of
 * another writer, newer than the state it was decided on, that touches what it read.
 */
export interface ReadSet {
  /** Resources read (present or absent), as `resourceKey` keys (resources/keys.ts). */
  keys: Set<string>;
  /** Meshes read whole (a mesh delete lists everything in it). */
  meshes: Set<string>;
  /** Read more than keys and meshes name (everything a zone owns): any change of another writer conflicts. */
  all: boolean;
}

/**
 * What `append` hands back at once: the entries, and when they are durable. Their revisions (and
 * hashes) are final once `durable` resolves; until then they are provisional, as a log shared by
 * several writers renumbers a batch when another writer appended first (it updates these objects).
 */
export interface AppendResult {
  entries: LogEntry[];
  /** Resolves once the batch holding these entries is synced to disk; rejects if it failed. */
  durable: Promise<void>;
}

/** Called with each durable batch, in revision order, before the appenders are answered. */
export type CommitListener = (entries: readonly LogEntry[]) => void;

/** Counters for benchmarks: batches written and the entries in them since the log was created. */
export interface EventLogStats {
  batches: number;
  entries: number;
}

/**
 * A group refused because another writer changed what it was decided on (see `EventLog.append`).
 * By the time it is thrown the log has applied that change, so deciding again sees it.
 */
export class AppendConflict extends Error {
  constructor(readonly revision: number) {
    super(`another instance changed what this write was decided on (revision ${revision}); decide again`);
    this.name = 'AppendConflict';
  }
}
