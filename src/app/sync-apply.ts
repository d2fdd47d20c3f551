import { AppendConflict } from '../events/types.js';
import type { Actor, EventInput } from '../events/types.js';
import type { Registry } from '../resources/registry.js';
import { AppError } from '../util/errors.js';
import { printable } from '../util/printable.js';
import type { Commands } from './commands.js';
import type { Current, DecideState } from './decide.js';
import type { SyncedChange, SyncRules } from './decide-sync.js';
import { decideSnapshotCleanup, decideSynced } from './decide-sync.js';
import { resourceKey } from '../resources/keys.js';

/** An entry the receiver refused (counted, reported, and the stream goes on). */
export interface SyncRejection {
  revision: number;
  kind: string;
  mesh?: string;
  name: string;
  reason: string;
}

/** One batch from the peer. */
export interface SyncBatchInput {
  changes: readonly SyncedChange[];
  rules: SyncRules;
  actor: Actor;
  /** Meta written in the same append as the events: the cursor on the peer's log. */
  meta: Readonly<Record<string, string>>;
  /** Set while a snapshot is received: the local keys of every snapshot entry so far. */
  snapshotSeen?: Set<string>;
  /** The last batch of a snapshot: also delete what the peer owned that the snapshot lacked. */
  snapshotEnd?: boolean;
}

/** What applying a batch did. */
export interface SyncBatchResult {
  /** Events appended (including snapshot clean-up deletes). */
  appended: number;
  /** Of those, the deletes of what a snapshot lacked. */
  removed: number;
  rejected: SyncRejection[];
  /**
   * Resolves with the log revision after the batch (the head when nothing was appended) once the
   * events and the cursor are durable; rejects when the log fails.
   */
  durable: Promise<number>;
}

/** Applies batches of synced entries through the write path (architecture: Multi-zone sync). */
export interface SyncApplier {
  /**
   * Decides every change of the batch against the current state (and the batch's own earlier
   * changes), then appends the events and the cursor `meta` as ONE atomic batch (style habit 8).
   * Decisions and the append happen before it returns, so the next batch can be decided while this
   * one is written (the write path's overlay holds it). Rejected entries are returned, not thrown.
   */
  applyBatch(input: SyncBatchInput): SyncBatchResult;
}

/** Creates the applier over the one write path. */
export function createSyncApplier(deps: {
  registry: Registry;
  commands: Commands;
  now: () => Date;
}): SyncApplier {
  const { registry, commands } = deps;
  /** Decides every change of the batch (and the clean-up of a snapshot's end). */
  const decideBatch = (
    input: SyncBatchInput,
  ): { events: EventInput[]; rejected: SyncRejection[]; removed: number } => {
    const local = new Map<string, Current | null>();
    const state: Pick<DecideState, 'get'> = {
      get(kind, mesh, name) {
        const o = local.get(resourceKey(kind, mesh, name));
        return o === undefined ? commands.state.get(kind, mesh, name) : (o ?? undefined);
      },
    };
    const events: EventInput[] = [];
    const rejected: SyncRejection[] = [];
    const ctx = { actor: input.actor, now: deps.now().toISOString() };
    for (const change of input.changes) {
      if (input.snapshotSeen) {
        const desc = registry.find(change.kind);
        const mesh = desc?.scope === 'mesh' ? change.mesh : undefined;
        input.snapshotSeen.add(resourceKey(change.kind, mesh, input.rules.localName(change.name)));
      }
      try {
        const event = decideSynced(registry, change, state, input.rules, ctx);
        if (!event) continue;
        events.push(event);
        local.set(
          resourceKey(event.kind, event.mesh, event.name),
          event.resource ? { resource: event.resource, revision: 0, origin: event.origin } : null,
        );
      } catch (err) {
        if (!(err instanceof AppError)) throw err;
        rejected.push({
          revision: change.revision,
          // Both sides log these: what the peer sent is written without control or bidi characters.
          kind: printable(change.kind),
          mesh: change.mesh === undefined ? undefined : printable(change.mesh),
          name: printable(change.name),
          reason: err.details,
        });
      }
    }
    let removed = 0;
    if (input.snapshotEnd && input.snapshotSeen) {
      const cleanup = decideSnapshotCleanup(
        registry,
        commands.state,
        input.rules,
        input.snapshotSeen,
        input.actor,
      ).filter((e) => local.get(resourceKey(e.kind, e.mesh, e.name)) === undefined);
      removed = cleanup.length;
      // A loop, not push(...cleanup): a zone may own more resources than a call takes arguments.
      for (const e of cleanup) events.push(e);
    }
    return { events, rejected, removed };
  };

  return {
    applyBatch(input) {
      const { result, reads } = commands.recordReads(() => decideBatch(input));
      const { events, rejected, removed } = result;
      const durable = commands.append(events, input.meta, reads).then(
        (first) => (events.length > 0 ? first + events.length - 1 : first),
        (error: unknown) => {
          // Another Global instance changed what the batch was decided on: the stream ends and the
          // peer resumes from the cursor, so the batch is decided again on the new state.
          if (!(error instanceof AppendConflict)) throw error;
          throw new AppError('UNAVAILABLE', 'Concurrent write', error.message);
        },
      );
      return { appended: events.length, removed, rejected, durable };
    },
  };
}
