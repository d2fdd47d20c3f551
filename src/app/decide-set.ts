import type { EventInput, WireResource } from '../events/types.js';
import type { Registry } from '../resources/registry.js';
import { kindOfResourceKey, resourceKey } from '../resources/keys.js';
import { AppError } from '../util/errors.js';
import type { Current, DecideOptions, DecideState, DeleteCommand, PutCommand } from './decide.js';
import { decideDelete, decidePut } from './decide.js';

/** Where an item of a change set is: its index (0-based) and the resource it names. */
export interface SetItemRef {
  index: number;
  kind: string;
  mesh?: string;
  name: string;
}

/** One decided item of a set: a PUT or a DELETE command. */
export type SetCommand = ({ op: 'upsert' } & PutCommand) | ({ op: 'delete' } & DeleteCommand);

/** What a set decides for one item. */
export interface SetItemDecision {
  /** `unchanged`: an upsert equal to the state it met (it writes nothing). */
  operation: 'create' | 'update' | 'delete' | 'unchanged';
  /** How many of the set's events come before this item's (its first is at that offset). */
  offset: number;
  /** Events of this item (a new mesh's defaults, a mesh's contents are several). */
  count: number;
  /** An upsert's resource and its JSON. */
  resource?: WireResource;
  json?: string;
  /**
   * For an unchanged item: the revision it already has, or, when an earlier item of the set wrote
   * it, the offset of that event in the set (`revisionAtOffset`).
   */
  unchangedRevision?: number;
  revisionAtOffset?: number;
}

/** What a whole set decides: every event, in order, and each item's part. */
export interface SetDecision {
  events: EventInput[];
  items: SetItemDecision[];
}

/**
 * A refusal of one item of a set: the item's error (code, title, causes) with the item it comes
 * from. Its details and cause fields name the item, so the whole answer reads on its own.
 */
export class SetItemError extends AppError {
  readonly item: SetItemRef;

  constructor(item: SetItemRef, inner: AppError) {
    const where = `${item.kind} ${item.mesh === undefined ? '' : `${item.mesh}/`}${item.name}`;
    super(
      inner.code,
      inner.title,
      `item ${item.index} (${where}): ${inner.details}; nothing of the change set was written`,
      inner.causes.map((c) => ({
        field: c.field === '' ? `items[${item.index}]` : `items[${item.index}].${c.field}`,
        message: c.message,
      })),
    );
    this.name = 'SetItemError';
    this.item = item;
  }
}

/**
 * Decides a change set (pure): each item is decided by the single-write decisions (`decidePut`,
 * `decideDelete`) on the state overlaid with the items before it, so an item sees what the earlier
 * ones did (a mesh created first, a resource updated twice). The first refusal is thrown as a
 * {@link SetItemError} naming the item; then nothing of the set is to be written.
 */
export function decideSet(
  registry: Registry,
  commands: readonly SetCommand[],
  state: DecideState,
  options: DecideOptions,
): SetDecision {
  /** What earlier items of the set did: null marks a delete; `at` is the event's offset. */
  const local = new Map<string, { current: Current | null; at: number }>();
  const layered: DecideState = {
    get(kind, mesh, name) {
      const o = local.get(resourceKey(kind, mesh, name));
      if (o) return o.current ?? undefined;
      return state.get(kind, mesh, name);
    },
    inMesh(mesh) {
      const out = state.inMesh(mesh).filter((c) => !local.has(resourceKey(c.kind, mesh, c.name)));
      for (const [key, o] of local) {
        if (!o.current || o.current.resource.mesh !== mesh) continue;
        out.push({
          kind: kindOfResourceKey(key),
          name: o.current.resource.name,
          current: o.current,
        });
      }
      return out;
    },
    ownedBy: state.ownedBy
      ? (origin) => {
          const out = (state.ownedBy?.(origin) ?? []).filter(
            (o) => !local.has(resourceKey(o.kind, o.mesh, o.name)),
          );
          for (const [key, o] of local) {
            if (!o.current || o.current.origin !== origin) continue;
            const r = o.current.resource;
            out.push({
              kind: kindOfResourceKey(key),
              mesh: r.mesh,
              name: r.name,
              current: o.current,
            });
          }
          return out;
        }
      : undefined,
    zoneConnected: state.zoneConnected,
  };
  const events: EventInput[] = [];
  const items: SetItemDecision[] = [];
  commands.forEach((cmd, index) => {
    const offset = events.length;
    let item: SetItemDecision;
    let decided: EventInput[];
    try {
      if (cmd.op === 'upsert') {
        const d = decidePut(registry, cmd, layered, options);
        decided = d.events;
        if (d.unchangedRevision !== undefined) {
          const earlier = local.get(
            resourceKey(cmd.kind, registry.get(cmd.kind).scope === 'mesh' ? cmd.mesh : undefined, cmd.name),
          );
          item = { operation: 'unchanged', offset, count: 0, resource: d.resource, json: d.json };
          if (earlier) item.revisionAtOffset = earlier.at;
          else item.unchangedRevision = d.unchangedRevision;
        } else {
          item = {
            operation: d.created ? 'create' : 'update',
            offset,
            count: d.events.length,
            resource: d.resource,
            json: d.json,
          };
        }
      } else {
        decided = decideDelete(registry, cmd, layered).events;
        item = { operation: 'delete', offset, count: decided.length };
      }
    } catch (error) {
      if (!(error instanceof AppError)) throw error;
      const mesh = registry.get(cmd.kind).scope === 'mesh' ? cmd.mesh : undefined;
      throw new SetItemError({ index, kind: cmd.kind, mesh, name: cmd.name }, error);
    }
    for (const e of decided) {
      const at = events.length;
      events.push(e);
      // A revision the log has not given yet: an If-Match of a later item cannot name it.
      const current = e.resource ? { resource: e.resource, revision: -1, origin: e.origin } : null;
      local.set(resourceKey(e.kind, e.mesh, e.name), { current, at });
    }
    items.push(item);
  });
  return { events, items };
}
