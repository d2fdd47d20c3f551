import { createHash } from 'node:crypto';

import type { EventLog } from '../events/event-log.js';
import type { Actor, LogEntry, Operation, WireResource } from '../events/types.js';
import type { PointInTime } from '../projections/point-in-time.js';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import type { Registry } from '../resources/registry.js';
import { resourceKey } from '../resources/keys.js';
import { validateBody } from '../resources/validate.js';
import { AppError } from '../util/errors.js';
import type { ChangeItem, Commands, DeleteResult, PutResult } from './commands.js';
import { SetItemError } from './decide-set.js';
import type { Queries, ReadItem } from './queries.js';
import { createQueries } from './queries.js';

/**
 * What answers built from the log show of a secret's `data` (base64): by default its digest
 * `{"sha256": "<hex of the decoded bytes>"}`, which tells versions apart without showing them; the
 * data itself only when an admin asks (`?includeSecretData=true`). The log keeps the data.
 */
export type SecretData = 'digest' | 'include';

/** One change of a resource (decisions §8): `resource` is the state after it, or before a delete. */
export interface HistoryItem {
  revision: number;
  time: string;
  operation: Operation;
  actor: Actor;
  /** The change set the change was part of; absent for a single write. */
  changeSet?: string;
  resource: WireResource;
}

/** One entry of the audit log: a history item with the resource it changed. */
export interface EventItem {
  revision: number;
  time: string;
  kind: string;
  mesh?: string;
  name: string;
  operation: Operation;
  actor: Actor;
  /** The change set the entry was part of; absent for a single write. */
  changeSet?: string;
  resource: WireResource;
}

/** Filters of `/_events`: registry kind, mesh (including the Mesh itself), exact name, actor name, change set id. */
export interface EventFilter {
  kind?: string;
  mesh?: string;
  name?: string;
  actor?: string;
  changeSet?: string;
}

/** A page of the audit log. */
export interface EventsRequest {
  fromRevision: number;
  filter: EventFilter;
  offset: number;
  size: number;
  /** Which entries the caller may see; absent: all. */
  visible?: (entry: LogEntry) => boolean;
  /** Names the `visible` rule, so that scans are shared only between callers who see the same. */
  visibilityKey?: string;
  /** How secret entries show their data. */
  secretData: SecretData;
}

/** What a revert did: a PUT of the state at R, or a DELETE when the resource did not exist at R. */
export type RevertResult =
  { operation: 'put'; put: PutResult } | { operation: 'delete'; remove: DeleteResult };

/** History, audit and point-in-time reads over the log, and revert through the one write path. */
export interface History {
  /** The revision of the last durable entry. */
  head(): number;
  resourceHistory(
    desc: ResourceDescriptor,
    mesh: string | undefined,
    name: string,
    page: { offset: number; size: number },
    secretData: SecretData,
  ): Promise<{ total: number; items: HistoryItem[] }>;
  /** One resource as of `revision`: from the history index for stored kinds, from a replay for derived ones. */
  resourceAt(
    desc: ResourceDescriptor,
    mesh: string | undefined,
    name: string,
    revision: number,
  ): Promise<ReadItem>;
  /** The read side as of `revision` (lists, overviews, insights). */
  queriesAt(revision: number): Promise<Queries>;
  /**
   * The last revision whose entry's time is at or before `time` (epoch milliseconds); undefined when
   * the log is empty or its first entry is later. Entries are in revision order, and their times
   * follow it: a binary search reads about log2(head) entries.
   */
  revisionAt(time: number): Promise<number | undefined>;
  events(req: EventsRequest): Promise<{ total: number; items: EventItem[] }>;
  /** Entries from..to, in order (the backlog of a watch). */
  read(fromRevision: number, toRevision: number): AsyncIterable<LogEntry>;
  /** Registers a listener for committed batches; returns its removal. */
  subscribe(listener: (entries: readonly LogEntry[]) => void): () => void;
  revert(req: {
    desc: ResourceDescriptor;
    mesh?: string;
    name: string;
    toRevision: number;
    actor: Actor;
    ifMatch?: string;
    dryRun: boolean;
    /** Most bytes of JSON the restored resource may be stored as (413 above). */
    maxBytes?: number;
  }): Promise<RevertResult>;
  /**
   * The change set that reverts set `id`: every resource it touched back to its state before the
   * set, undone in reverse order, each item expecting the state the set left (If-Match on the
   * set's revision, If-None-Match for what it deleted), so a later change is a 412, never lost.
   * What a mesh the revert deletes held goes with the mesh. 404 when no entry has the id.
   */
  changeSetRevert(id: string): Promise<ChangeItem[]>;
}

/** A secret resource with its `data` replaced by the digest of the bytes it encodes. */
export function redactSecretData(resource: WireResource): WireResource {
  const { data } = resource;
  if (typeof data !== 'string') return resource;
  const sha256 = createHash('sha256').update(Buffer.from(data, 'base64')).digest('hex');
  return { ...resource, data: { sha256 } };
}

/** The resource an item shows: the state after the change (before, for a delete), redacted when `redact`. */
function shownResource(e: LogEntry, redact: boolean): WireResource {
  const resource = (e.resource ?? e.previous) as WireResource;
  return redact ? redactSecretData(resource) : resource;
}

/** The history item of an entry; `redact`: the entry is of a secret kind whose data is not to be shown. */
export function historyItem(e: LogEntry, redact: boolean): HistoryItem {
  return {
    revision: e.revision,
    time: e.time,
    operation: e.operation,
    actor: e.actor,
    ...(e.changeSet === undefined ? {} : { changeSet: e.changeSet }),
    resource: shownResource(e, redact),
  };
}

/** What an entry wrote and who, without its place in the log or the resource: an audit item's middle. */
export type EntryWrite = Omit<EventItem, 'revision' | 'time' | 'resource'>;

/** The {@link EntryWrite} of an entry. */
export function entryWrite(e: LogEntry): EntryWrite {
  return {
    kind: e.kind,
    ...(e.mesh === undefined ? {} : { mesh: e.mesh }),
    name: e.name,
    operation: e.operation,
    actor: e.actor,
    ...(e.changeSet === undefined ? {} : { changeSet: e.changeSet }),
  };
}

/** The audit-log item of an entry; `redact`: the entry is of a secret kind whose data is not to be shown. */
export function eventItem(e: LogEntry, redact: boolean): EventItem {
  return { revision: e.revision, time: e.time, ...entryWrite(e), resource: shownResource(e, redact) };
}

/** Whether items of `kind` are to be redacted under `secretData` (secret kinds, unless data was asked for). */
export function redactsKind(registry: Registry, kind: string, secretData: SecretData): boolean {
  return secretData === 'digest' && registry.find(kind)?.secret === true;
}

/** True when an entry passes the filters; a Mesh counts as in itself for `mesh`. */
export function matchesFilter(e: LogEntry, f: EventFilter): boolean {
  if (f.kind !== undefined && e.kind !== f.kind) return false;
  if (f.mesh !== undefined && e.mesh !== f.mesh && !(e.kind === 'Mesh' && e.name === f.mesh)) return false;
  if (f.name !== undefined && e.name !== f.name) return false;
  if (f.actor !== undefined && e.actor.name !== f.actor) return false;
  if (f.changeSet !== undefined && e.changeSet !== f.changeSet) return false;
  return true;
}

const notFound = (desc: ResourceDescriptor, mesh: string | undefined, name: string, at?: number): AppError =>
  new AppError(
    'NOT_FOUND',
    'Not found',
    (desc.scope === 'mesh'
      ? `${desc.wireType} "${name}" not found in mesh "${mesh}"`
      : `${desc.wireType} "${name}" not found`) + (at === undefined ? '' : ` at revision ${at}`),
  );

/** A scan of the audit log kept for the next pages: matching revisions up to `scannedTo`. */
interface Scan {
  revisions: number[];
  scannedTo: number;
}

const SCAN_CACHE = 8;

/** Change sets whose revisions the history keeps (the newest, committed since start). */
const SET_INDEX = 10_000;

/** Creates the history service over the log, the live read side and the write path. */
export function createHistory(deps: {
  registry: Registry;
  log: Pick<EventLog, 'head' | 'read' | 'history'>;
  queries: Queries;
  commands: Commands;
  pointInTime: PointInTime;
  subscribe: (listener: (entries: readonly LogEntry[]) => void) => () => void;
}): History {
  const { log, queries, commands, pointInTime } = deps;
  const scans = new Map<string, Scan>();

  const collect = async (it: AsyncIterable<LogEntry>): Promise<LogEntry[]> => {
    const out: LogEntry[] = [];
    for await (const e of it) out.push(e);
    return out;
  };

  const entryAt = async (revision: number): Promise<LogEntry | undefined> => {
    for await (const e of log.read(revision, revision)) return e;
    return undefined;
  };

  /** The latest entry of a resource at or below `revision`. */
  const lastChange = async (
    desc: ResourceDescriptor,
    mesh: string | undefined,
    name: string,
    revision: number,
  ): Promise<LogEntry | undefined> => {
    let last: LogEntry | undefined;
    for await (const e of log.history(desc.kind, desc.scope === 'mesh' ? mesh : undefined, name)) {
      if (e.revision > revision) break;
      last = e;
    }
    return last;
  };

  const queriesAt = async (revision: number): Promise<Queries> => {
    if (revision === queries.revision()) return queries;
    const past = await pointInTime.at(revision);
    return createQueries({ views: past.views, derived: past.derived, status: past.status });
  };

  /** Matching revisions from `from` to the head: resumed from a cached scan when there is one. */
  const scan = async (req: EventsRequest): Promise<number[]> => {
    const key = JSON.stringify([req.fromRevision, req.filter, req.visibilityKey ?? '']);
    let s = scans.get(key);
    if (s) scans.delete(key);
    else s = { revisions: [], scannedTo: req.fromRevision - 1 };
    scans.set(key, s);
    while (scans.size > SCAN_CACHE) scans.delete(scans.keys().next().value as string);
    const head = log.head();
    if (s.scannedTo < head) {
      for await (const e of log.read(s.scannedTo + 1, head)) {
        if (matchesFilter(e, req.filter) && (!req.visible || req.visible(e))) s.revisions.push(e.revision);
      }
      s.scannedTo = head;
    }
    return s.revisions;
  };

  const events = async (req: EventsRequest): Promise<{ total: number; items: EventItem[] }> => {
    const { filter, fromRevision, offset, size } = req;
    const item = (e: LogEntry): EventItem => eventItem(e, redactsKind(deps.registry, e.kind, req.secretData));
    const keep = (e: LogEntry): boolean =>
      e.revision >= fromRevision && matchesFilter(e, filter) && (!req.visible || req.visible(e));
    const desc = filter.kind === undefined ? undefined : deps.registry.find(filter.kind);
    if (desc && filter.name !== undefined && (desc.scope === 'global' || filter.mesh !== undefined)) {
      // One resource: its history index holds every entry there is.
      const all = (
        await collect(log.history(desc.kind, desc.scope === 'mesh' ? filter.mesh : undefined, filter.name))
      ).filter(keep);
      return { total: all.length, items: all.slice(offset, offset + size).map(item) };
    }
    const range = filter.changeSet === undefined ? undefined : setRanges.get(filter.changeSet);
    if (range && range.first >= fromRevision) {
      // One recent change set: its entries are a range of revisions.
      const all = (await collect(log.read(range.first, range.last))).filter(keep);
      return { total: all.length, items: all.slice(offset, offset + size).map(item) };
    }
    const head = log.head();
    if (!req.visible && Object.values(filter).every((v) => v === undefined)) {
      // Everything from R: the page is a range of revisions.
      const total = Math.max(0, head - fromRevision + 1);
      const first = fromRevision + offset;
      const last = Math.min(head, first + size - 1);
      const items = last < first ? [] : (await collect(log.read(first, last))).map(item);
      return { total, items };
    }
    const revisions = await scan(req);
    const page = revisions.slice(offset, offset + size);
    const items: EventItem[] = [];
    for (const r of page) {
      const e = await entryAt(r);
      if (e) items.push(item(e));
    }
    return { total: revisions.length, items };
  };

  /**
   * Where the change sets committed since start are (first and last revision), the newest
   * {@link SET_INDEX} of them: their entries are read as a range. An older set is found by a scan
   * of the log (cached like the audit log's scans).
   */
  const setRanges = new Map<string, { first: number; last: number }>();
  deps.subscribe((entries) => {
    for (const e of entries) {
      if (e.changeSet === undefined) continue;
      const range = setRanges.get(e.changeSet);
      if (range) range.last = e.revision;
      else {
        setRanges.set(e.changeSet, { first: e.revision, last: e.revision });
        if (setRanges.size > SET_INDEX) setRanges.delete(setRanges.keys().next().value as string);
      }
    }
  });

  /** The entries of change set `id`, in order ([] when no entry has it). */
  const setEntries = async (id: string): Promise<LogEntry[]> => {
    const range = setRanges.get(id);
    if (range) return (await collect(log.read(range.first, range.last))).filter((e) => e.changeSet === id);
    const revisions = await scan({
      fromRevision: 1,
      filter: { changeSet: id },
      offset: 0,
      size: 0,
      secretData: 'include',
    });
    const entries: LogEntry[] = [];
    for (const r of revisions) {
      const e = await entryAt(r);
      if (e) entries.push(e);
    }
    return entries;
  };

  const changeSetRevert = async (id: string): Promise<ChangeItem[]> => {
    const entries = await setEntries(id);
    if (entries.length === 0) throw new AppError('NOT_FOUND', 'Not found', `change set "${id}" not found`);
    const before = entries[0].revision - 1;
    const seen = new Set<string>();
    const items: ChangeItem[] = [];
    /** Items whose state before the set is not valid today, with why. */
    const invalid = new Map<ChangeItem, AppError>();
    for (const e of [...entries].reverse()) {
      const key = resourceKey(e.kind, e.mesh, e.name);
      if (seen.has(key)) continue;
      seen.add(key);
      const desc = deps.registry.get(e.kind);
      // The set's last change of the resource is what the revert expects to find.
      const expect = e.operation === 'delete' ? { ifNoneMatch: '*' } : { ifMatch: `"${e.revision}"` };
      const then = await lastChange(desc, e.mesh, e.name, before);
      if (then && then.operation !== 'delete' && then.resource) {
        const checked = validateBody(desc, then.resource, { mesh: e.mesh, name: e.name });
        if (checked.ok) {
          items.push({
            op: 'upsert',
            kind: e.kind,
            mesh: e.mesh,
            name: e.name,
            spec: checked.spec,
            ...expect,
          });
        } else {
          const item: ChangeItem = { op: 'delete', kind: e.kind, mesh: e.mesh, name: e.name };
          items.push(item);
          invalid.set(
            item,
            new AppError(
              'INVALID_BODY',
              'Resource is not valid',
              `the state at revision ${before} is not a valid ${desc.wireType} today`,
              checked.causes,
            ),
          );
        }
      } else if (e.operation !== 'delete') {
        items.push({ op: 'delete', kind: e.kind, mesh: e.mesh, name: e.name, ...expect });
      }
    }
    // A mesh the revert deletes takes what it holds with it (as a DELETE of the mesh does), its
    // default policies and signing key too (a writer may not delete a secret on its own); but a
    // mesh with proxies cannot be deleted, so the set's proxies are deleted first, as items.
    const meshesDeleted = new Set(
      items.filter((i) => i.op === 'delete' && i.kind === 'Mesh').map((i) => i.name),
    );
    const goesWithMesh = (i: ChangeItem): boolean =>
      i.op === 'delete' && i.kind !== 'Dataplane' && i.mesh !== undefined && meshesDeleted.has(i.mesh);
    const kept = items.filter((i) => !goesWithMesh(i));
    kept.forEach((item, index) => {
      const why = invalid.get(item);
      if (why) throw new SetItemError({ index, kind: item.kind, mesh: item.mesh, name: item.name }, why);
    });
    return kept;
  };

  return {
    head: () => log.head(),

    changeSetRevert,

    async resourceHistory(desc, mesh, name, page, secretData) {
      const all = await collect(log.history(desc.kind, desc.scope === 'mesh' ? mesh : undefined, name));
      if (all.length === 0) throw notFound(desc, mesh, name);
      const redact = redactsKind(deps.registry, desc.kind, secretData);
      return {
        total: all.length,
        items: all.slice(page.offset, page.offset + page.size).map((e) => historyItem(e, redact)),
      };
    },

    async resourceAt(desc, mesh, name, revision) {
      if (desc.derived || revision === queries.revision()) {
        return (await queriesAt(revision)).get(desc, mesh, name);
      }
      const last = await lastChange(desc, mesh, name, revision);
      if (!last || last.operation === 'delete' || !last.resource) throw notFound(desc, mesh, name, revision);
      return { body: Buffer.from(JSON.stringify(last.resource)), revision: last.revision };
    },

    queriesAt,

    async revisionAt(time) {
      // The largest revision in [1, head] whose time is <= `time`: lo is always such a revision (or 0).
      let lo = 0;
      let hi = log.head();
      while (lo < hi) {
        const mid = Math.ceil((lo + hi) / 2);
        const e = await entryAt(mid);
        if (e !== undefined && Date.parse(e.time) <= time) lo = mid;
        else hi = mid - 1;
      }
      return lo === 0 ? undefined : lo;
    },

    events,

    read: (from, to) => log.read(from, to),

    subscribe: deps.subscribe,

    async revert(req) {
      const { desc, mesh, name, toRevision, actor, ifMatch, dryRun, maxBytes } = req;
      const then = await lastChange(desc, mesh, name, toRevision);
      if (then && then.operation !== 'delete' && then.resource) {
        // The state at R goes through today's validation and mesh rules like any PUT.
        const checked = validateBody(desc, then.resource, { mesh, name });
        if (!checked.ok) {
          throw new AppError(
            'INVALID_BODY',
            'Resource is not valid',
            `the state at revision ${toRevision} is not a valid ${desc.wireType} today`,
            checked.causes,
          );
        }
        const put = await commands.put({
          kind: desc.kind,
          mesh,
          name,
          spec: checked.spec,
          actor,
          ifMatch,
          dryRun,
          maxBytes,
        });
        return { operation: 'put', put };
      }
      // It did not exist at R: reverting deletes it (404 when it does not exist now either).
      const remove = await commands.remove({ kind: desc.kind, mesh, name, actor, ifMatch, dryRun });
      return { operation: 'delete', remove };
    },
  };
}
