import { AppendConflict } from '../events/types.js';
import { kindOfResourceKey, resourceKey } from '../resources/keys.js';
import type { EventLog } from '../events/event-log.js';
import type { Actor, EventInput, ReadSet, WireResource } from '../events/types.js';
import type { ResourceViews } from '../projections/resource-views.js';
import type { Registry } from '../resources/registry.js';
import { validSpec, type ValidatedSpec } from '../resources/validate.js';
import { generateSigningKey } from '../tokens/signing-key.js';
import type {
  Current,
  DecideOptions,
  DecideState,
  DeleteCommand,
  Preconditions,
  PutCommand,
} from './decide.js';
import { decideDelete, decidePut } from './decide.js';
import type { SetCommand } from './decide-set.js';
import { decideSet } from './decide-set.js';
import { randomUUID } from 'node:crypto';
import { isoClock } from '../util/iso-clock.js';
import { AppError } from '../util/errors.js';
import { sleep } from '../util/sleep.js';
import { keyPlace, signingKeyName, signingKeySerial } from '../tokens/token-types.js';
import type { TokenType } from '../tokens/token-types.js';
import { GLOBAL_SIGNING_KEY_TYPES } from './default-policies.js';

/** A PUT as the API (or zone sync) hands it to the write path. */
export interface PutRequest extends Preconditions {
  kind: string;
  mesh?: string;
  name: string;
  /** Only a spec that passed validation (`validateBody`, or `validSpec` for mesh-cp's own writes). */
  spec: ValidatedSpec;
  actor: Actor;
  origin?: string;
  dryRun?: boolean;
  /** Create a new mesh without waiting for its signing key (start-up writes the key just after). */
  deferSigningKey?: boolean;
  /** Most bytes of JSON the resource may be stored as (413 above); the API's writes set it. */
  maxBytes?: number;
  /**
   * Called with the decided entries (none for a write that changes nothing) on the state they were
   * decided on, before they are appended or, in a dry run, dropped: a change's impact is computed
   * here. Called again when the write is decided again.
   */
  onDecided?: (events: readonly EventInput[]) => void;
}

/** The answer to a PUT. */
export interface PutResult {
  created: boolean;
  resource: WireResource;
  /** The JSON of `resource` (serialised once, by the decision). */
  json: string;
  /** Revision of the resource after the write (its ETag). */
  revision: number;
  dryRun: boolean;
}

/** A DELETE request. */
export interface DeleteRequest extends Omit<DeleteCommand, 'origin'> {
  origin?: string;
  dryRun?: boolean;
  /**
   * Called with the decided entries (none for a write that changes nothing) on the state they were
   * decided on, before they are appended or, in a dry run, dropped: a change's impact is computed
   * here. Called again when the write is decided again.
   */
  onDecided?: (events: readonly EventInput[]) => void;
}

/** The answer to a DELETE. */
export interface DeleteResult {
  revision: number;
  dryRun: boolean;
}

/** One item of a change set: an upsert (a validated spec) or a delete, each with its preconditions. */
export type ChangeItem = ({ op: 'upsert'; spec: ValidatedSpec } | { op: 'delete' }) & {
  kind: string;
  mesh?: string;
  name: string;
} & Preconditions;

/** A change set as the API hands it to the write path: decided as a whole, appended as one group. */
export interface ChangeSetRequest {
  items: readonly ChangeItem[];
  actor: Actor;
  origin?: string;
  dryRun?: boolean;
  /** Most bytes of JSON each resource may be stored as (413 above). */
  maxBytes?: number;
  /**
   * Called with the decided entries (none for a write that changes nothing) on the state they were
   * decided on, before they are appended or, in a dry run, dropped: a change's impact is computed
   * here. Called again when the write is decided again.
   */
  onDecided?: (events: readonly EventInput[]) => void;
}

/** What a change set did to one of its items. */
export interface ChangeSetItemResult {
  operation: 'create' | 'update' | 'delete' | 'unchanged';
  /** Revision of the item's last entry (its ETag); of its current state when unchanged; null in a dry run. */
  revision: number | null;
  /** An upsert's resource, and its JSON. */
  resource?: WireResource;
  json?: string;
}

/** The answer to a change set. */
export interface ChangeSetResult {
  /** The id every entry of the set carries; null when nothing was written (a dry run, no change). */
  id: string | null;
  dryRun: boolean;
  /** First and last revision of the set's entries; both the head when nothing was written. */
  firstRevision: number;
  revision: number;
  items: ChangeSetItemResult[];
}

/** The one write path: API, zone sync and start-up defaults all go through it. */
export interface Commands {
  put(req: PutRequest): Promise<PutResult>;
  remove(req: DeleteRequest): Promise<DeleteResult>;
  /**
   * Decides a change set, each item by the single-write decisions on the state the items before it
   * left, and appends its entries as one group (consecutive revisions, one id); a refused item
   * (`SetItemError`) writes nothing.
   */
  applySet(req: ChangeSetRequest): Promise<ChangeSetResult>;
  /**
   * Creates the `default` mesh (unless skipped) at once, and returns `keys`: the global signing
   * keys and the default mesh's key, generated off the start-up path (RSA takes ~150 ms each) once
   * `after` resolves (start-up passes its end: on two cores, four key generations running during
   * start-up took both and held the ready line back by up to ~100 ms).
   */
  ensureDefaults(opts: {
    createDefaultMesh: boolean;
    /** The validated spec of the default mesh (`defaults.mesh`); `{}` when absent. */
    defaultMeshSpec?: ValidatedSpec;
    globalKeys: boolean;
    after?: Promise<void>;
    /**
     * Aborted when the plane closes: a key that could not be written yet is given up then (it is
     * written at the next start). Until then a key is tried again while the log is unavailable.
     */
    stop?: AbortSignal;
  }): Promise<{ keys: Promise<void> }>;
  /** What decisions read: the views overlaid with writes not yet durable (zone sync decides on it). */
  readonly state: DecideState;
  /**
   * Appends already decided events and `meta` (a sync cursor) in one atomic batch, through the same
   * overlay as `put`/`remove`; resolves with the first revision (the head when `events` is empty).
   * `reads` (from {@link Commands.recordReads}) lets a log shared with other instances refuse the
   * batch with `AppendConflict` when one of them changed what it was decided on.
   */
  append(
    events: readonly EventInput[],
    meta?: Readonly<Record<string, string>>,
    reads?: ReadSet,
  ): Promise<number>;
  /** Runs `decide` (synchronous) and returns what it read of `state` beside its result. */
  recordReads<T>(decide: () => T): { result: T; reads: ReadSet };
}

/**
 * How often a write is decided again when other instances keep changing what it read first (each
 * time the log has applied their change, so a second conflict needs yet another write meanwhile).
 */
const MAX_DECISIONS = 20;

/** Refusals that depend on the current state: given only once the log has been caught up with. */
const REFUSALS: ReadonlySet<string> = new Set([
  'PRECONDITION_FAILED',
  'NOT_FOUND',
  'INVALID_BODY',
  'CONFLICT',
]);

/** `Mesh default` or `TrafficRoute default/route-1`, for messages. */
const describe = (req: { kind: string; mesh?: string; name: string }): string =>
  `${req.kind} ${req.mesh === undefined ? '' : `${req.mesh}/`}${req.name}`;

const SYSTEM_ACTOR: Actor = { name: 'mesh-cp', groups: ['mesh-system'], address: 'local' };

/**
 * Creates the write path. Decisions run synchronously against the committed views overlaid with
 * writes that are appended but not yet durable, so racing writers are serialised (If-Match holds)
 * while their batches still share one synced write (group commit in the log).
 */
export function createCommands(deps: {
  registry: Registry;
  /** Appends, and the newest head (catching up with other writers) when a write is refused. */
  log: Pick<EventLog, 'append' | 'head' | 'catchUp'>;
  views: ResourceViews;
  now: () => Date;
  options: DecideOptions;
  keygen?: () => Promise<string>;
  /** Whether a zone is connected to this Global (decisions §3); read at each zone delete. */
  zoneConnected?: (name: string) => boolean;
}): Commands {
  const { registry, log, views } = deps;
  const keygen = deps.keygen ?? generateSigningKey;
  const isoNow = isoClock(deps.now);
  /** Writes appended but not yet applied to the views: null marks a pending delete. */
  const overlay = new Map<string, { current: Current | null; revision: number }>();
  const meshKinds = registry.stored.filter((d) => d.scope === 'mesh').map((d) => d.kind);
  /** What the decision running now has read (set while one runs). */
  let reads: ReadSet | undefined;

  const state: DecideState = {
    get(kind, mesh, name) {
      const key = resourceKey(kind, mesh, name);
      reads?.keys.add(key);
      const o = overlay.get(key);
      if (o) return o.current ?? undefined;
      const item = views.get(kind, mesh, name);
      return item ? { resource: item.resource, revision: item.revision, origin: item.origin } : undefined;
    },
    inMesh(mesh) {
      reads?.meshes.add(mesh);
      const out: Array<{ kind: string; name: string; current: Current }> = [];
      const seen = new Set<string>();
      for (const kind of meshKinds) {
        views.each(kind, mesh, (item) => {
          const key = resourceKey(kind, mesh, item.name);
          seen.add(key);
          const cur = state.get(kind, mesh, item.name);
          if (cur) out.push({ kind, name: item.name, current: cur });
        });
      }
      for (const [key, o] of overlay) {
        if (seen.has(key) || !o.current || o.current.resource.mesh !== mesh) continue;
        const kind = kindOfResourceKey(key);
        out.push({ kind, name: o.current.resource.name, current: o.current });
      }
      return out;
    },
    ownedBy(origin) {
      if (reads) reads.all = true;
      const out: Array<{ kind: string; mesh?: string; name: string; current: Current }> = [];
      for (const d of registry.stored) {
        views.each(d.kind, undefined, (item) => {
          const cur = state.get(d.kind, item.mesh, item.name);
          if (cur?.origin === origin)
            out.push({ kind: d.kind, mesh: item.mesh, name: item.name, current: cur });
        });
      }
      return out;
    },
    zoneConnected: (name) => deps.zoneConnected?.(name) ?? false,
  };

  /**
   * Whether a signing key of `type` is stored (in `mesh`, for data plane keys). Key 1 is made only
   * when none is: a key 1 retired by a rotation (key 2 added, key 1 deleted) stays retired.
   */
  const hasSigningKey = (type: TokenType, mesh?: string): boolean => {
    const { kind } = keyPlace(type, mesh);
    let found = false;
    views.each(kind, mesh, (item) => {
      if (!found && signingKeySerial(type, item.name, mesh) !== undefined) {
        found = state.get(kind, mesh, item.name) !== undefined;
      }
    });
    return found;
  };

  /** Appends, records the overlay, waits for durability, then clears what the views now hold. */
  const recordReads = <T>(decide: () => T): { result: T; reads: ReadSet } => {
    const recorded: ReadSet = { keys: new Set(), meshes: new Set(), all: false };
    reads = recorded;
    try {
      return { result: decide(), reads: recorded };
    } finally {
      reads = undefined;
    }
  };

  /** Runs `attempt` again while the log refuses its write for a conflict with another instance. */
  const decideAgain = async <T>(what: string, attempt: () => Promise<T>): Promise<T> => {
    let caughtUp = false;
    for (let decisions = 1; ; decisions += 1) {
      try {
        return await attempt();
      } catch (error) {
        if (error instanceof AppError && REFUSALS.has(error.code) && !caughtUp) {
          // A refusal is given on the newest state: with other instances on the log (an If-Match of
          // a revision one of them just wrote), this one first applies what they appended.
          caughtUp = true;
          const head = log.head();
          await log.catchUp();
          if (log.head() !== head) continue;
          throw error;
        }
        if (!(error instanceof AppendConflict)) throw error;
        if (decisions >= MAX_DECISIONS) {
          throw new AppError(
            'CONFLICT',
            'Concurrent writes',
            `other instances changed ${what} ${MAX_DECISIONS} times while this write was decided; retry it`,
          );
        }
      }
    }
  };

  const commit = async (
    events: Parameters<EventLog['append']>[0],
    meta?: Parameters<EventLog['append']>[1],
    decidedOn?: ReadSet,
  ): Promise<number> => {
    const { entries, durable } = log.append(events, meta, decidedOn);
    const keys: Array<[string, number]> = [];
    for (const e of entries) {
      const key = resourceKey(e.kind, e.mesh, e.name);
      const current = e.resource ? { resource: e.resource, revision: e.revision, origin: e.origin } : null;
      overlay.set(key, { current, revision: e.revision });
      keys.push([key, e.revision]);
    }
    try {
      await durable;
    } finally {
      for (const [key, rev] of keys) if (overlay.get(key)?.revision === rev) overlay.delete(key);
    }
    return entries.length > 0 ? entries[0].revision : log.head();
  };

  const put = async (req: PutRequest): Promise<PutResult> => {
    const origin = req.origin ?? 'local';
    let signingKey: string | undefined;
    if (
      req.kind === 'Mesh' &&
      !state.get('Mesh', undefined, req.name) &&
      !req.dryRun &&
      !req.deferSigningKey
    ) {
      // Secrets may be written before their mesh (decisions §3): a key written so is kept alone.
      if (!hasSigningKey('dataplane', req.name)) signingKey = await keygen();
    }
    // Fields listed, not `{ ...req, origin, … }`: on Node 20 a spread followed by more properties
    // costs ~1.3 µs per added property (V8 11.3), ~5 µs here, on every PUT.
    const cmd: PutCommand = {
      kind: req.kind,
      mesh: req.mesh,
      name: req.name,
      spec: req.spec,
      actor: req.actor,
      origin,
      now: isoNow(),
      signingKey,
      ifMatch: req.ifMatch,
      ifNoneMatch: req.ifNoneMatch,
      maxBytes: req.maxBytes,
    };
    return decideAgain(describe(req), () => putDecided(req, cmd));
  };

  const putDecided = async (req: PutRequest, cmd: PutCommand): Promise<PutResult> => {
    const { result: decision, reads: decidedOn } = recordReads(() =>
      decidePut(registry, cmd, state, deps.options),
    );
    req.onDecided?.(decision.events);
    if (decision.unchangedRevision !== undefined) {
      return {
        created: false,
        resource: decision.resource,
        json: decision.json,
        revision: decision.unchangedRevision,
        dryRun: !!req.dryRun,
      };
    }
    if (req.dryRun)
      return {
        created: decision.created,
        resource: decision.resource,
        json: decision.json,
        revision: log.head(),
        dryRun: true,
      };
    const revision = await commit(decision.events, undefined, decidedOn);
    return {
      created: decision.created,
      resource: decision.resource,
      json: decision.json,
      revision,
      dryRun: false,
    };
  };

  const remove = async (req: DeleteRequest): Promise<DeleteResult> => {
    const cmd: DeleteCommand = {
      kind: req.kind,
      mesh: req.mesh,
      name: req.name,
      actor: req.actor,
      origin: req.origin ?? 'local',
      ifMatch: req.ifMatch,
      ifNoneMatch: req.ifNoneMatch,
    };
    return decideAgain(describe(req), async () => {
      const { result: decision, reads: decidedOn } = recordReads(() => decideDelete(registry, cmd, state));
      req.onDecided?.(decision.events);
      if (req.dryRun) return { revision: log.head(), dryRun: true };
      const first = await commit(decision.events, undefined, decidedOn);
      return { revision: first + decision.events.length - 1, dryRun: false };
    });
  };

  const applySet = async (req: ChangeSetRequest): Promise<ChangeSetResult> => {
    const origin = req.origin ?? 'local';
    const now = isoNow();
    // A new mesh's signing key is generated before the decision (RSA takes ~150 ms): for each mesh
    // the set creates that has none, in parallel. An item that finds the mesh there ignores it.
    const keys = new Map<string, Promise<string>>();
    if (!req.dryRun) {
      for (const item of req.items) {
        if (item.op !== 'upsert' || item.kind !== 'Mesh' || keys.has(item.name)) continue;
        if (state.get('Mesh', undefined, item.name) || hasSigningKey('dataplane', item.name)) continue;
        keys.set(item.name, keygen());
      }
    }
    const signingKeys = new Map<string, string>();
    for (const [mesh, key] of keys) signingKeys.set(mesh, await key);
    const commands: SetCommand[] = req.items.map((item) =>
      item.op === 'upsert'
        ? {
            op: 'upsert',
            kind: item.kind,
            mesh: item.mesh,
            name: item.name,
            spec: item.spec,
            actor: req.actor,
            origin,
            now,
            signingKey: item.kind === 'Mesh' ? signingKeys.get(item.name) : undefined,
            ifMatch: item.ifMatch,
            ifNoneMatch: item.ifNoneMatch,
            maxBytes: req.maxBytes,
          }
        : {
            op: 'delete',
            kind: item.kind,
            mesh: item.mesh,
            name: item.name,
            actor: req.actor,
            origin,
            ifMatch: item.ifMatch,
            ifNoneMatch: item.ifNoneMatch,
          },
    );
    const id = randomUUID();
    return decideAgain(`the ${req.items.length} resources of a change set`, async () => {
      const { result: decision, reads: decidedOn } = recordReads(() =>
        decideSet(registry, commands, state, deps.options),
      );
      req.onDecided?.(decision.events);
      const written = !req.dryRun && decision.events.length > 0;
      let first = log.head();
      if (written) {
        for (const e of decision.events) e.changeSet = id;
        first = await commit(decision.events, undefined, decidedOn);
      }
      const revisionOf = (offset: number): number | null => (written ? first + offset : null);
      return {
        id: written ? id : null,
        dryRun: !!req.dryRun,
        firstRevision: first,
        revision: written ? first + decision.events.length - 1 : first,
        items: decision.items.map((d): ChangeSetItemResult => ({
          operation: d.operation,
          revision:
            d.operation === 'unchanged'
              ? (d.unchangedRevision ?? revisionOf(d.revisionAtOffset ?? 0))
              : // An upsert's own entry comes first (a new mesh's defaults follow it), a delete's last
                // (a mesh's contents go before it), as for single writes.
                revisionOf(d.operation === 'delete' ? d.offset + d.count - 1 : d.offset),
          resource: d.resource,
          json: d.json,
        })),
      };
    });
  };

  return {
    put,
    remove,
    applySet,
    state,
    append: commit,
    recordReads,
    async ensureDefaults(opts) {
      if (opts.createDefaultMesh && !state.get('Mesh', undefined, 'default')) {
        await put({
          kind: 'Mesh',
          name: 'default',
          spec: opts.defaultMeshSpec ?? validSpec(registry.get('Mesh'), { name: 'default' }, {}),
          actor: SYSTEM_ACTOR,
          deferSigningKey: true,
        });
      }
      const wanted: Array<{ type: TokenType; mesh?: string }> = [];
      if (opts.globalKeys) for (const type of GLOBAL_SIGNING_KEY_TYPES) wanted.push({ type });
      if (state.get('Mesh', undefined, 'default')) wanted.push({ type: 'dataplane', mesh: 'default' });
      // Key 1 of a type only when the type has no key at all (a rotated-out key 1 stays deleted).
      const missing = wanted
        .filter((k) => !hasSigningKey(k.type, k.mesh))
        .map((k) => ({ ...k, kind: keyPlace(k.type, k.mesh).kind, name: signingKeyName(k.type, 1, k.mesh) }));
      const after = opts.after ?? Promise.resolve();
      const keys = Promise.all(
        missing.map(async ({ type, ...k }) => {
          await after;
          const data = await keygen();
          for (let delayMs = 500; ; delayMs = Math.min(delayMs * 2, 5000)) {
            // A key of the type written meanwhile (by a user, another instance) is kept alone.
            if (hasSigningKey(type, k.mesh)) return;
            try {
              // If-None-Match: a key written meanwhile (by a user, another instance) is kept.
              const spec = validSpec(registry.get(k.kind), k, { data });
              await put({ ...k, spec, actor: SYSTEM_ACTOR, ifNoneMatch: '*' });
              return;
            } catch (err) {
              if (err instanceof AppError && err.code === 'PRECONDITION_FAILED') return;
              // A log that cannot write or read now (PostgreSQL restarting, a full disk) recovers by
              // itself: the key is tried again rather than stay missing until the next start. A
              // read fails too: a key another instance wrote first is only refused once this one
              // has caught up with the log. A key whose write had an unknown outcome is tried again
              // too: If-None-Match keeps the one that landed.
              const retry =
                err instanceof AppError && (err.code === 'UNAVAILABLE' || err.code === 'OUTCOME_UNKNOWN');
              if (!retry || opts.stop?.aborted) throw err;
              await sleep(delayMs, opts.stop);
            }
          }
        }),
      ).then(() => undefined);
      return { keys };
    },
  };
}
