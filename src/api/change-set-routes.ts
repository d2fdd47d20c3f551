import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { ChangeItem, ChangeSetResult, Commands } from '../app/commands.js';
import type { SetItemRef } from '../app/decide-set.js';
import { SetItemError } from '../app/decide-set.js';
import type { History } from '../app/history.js';
import type { WriteSettings } from '../app/write-policy.js';
import { assertWritable } from '../app/write-policy.js';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import type { Registry } from '../resources/registry.js';
import { bodyShapeCause } from '../resources/body-shape.js';
import { validateBody } from '../resources/validate.js';
import { AppError } from '../util/errors.js';
import { actorOf } from './actor.js';
import type { AuthzSettings } from './authz.js';
import { createAuthorizer, meshOfRequest } from './authz.js';
import { rawQuery } from './list-query.js';
import type { RouteInfo } from './route-info.js';
import { dryRunOf } from './resource-routes.js';
import { withImpact, type ImpactBody, type LoadImpact } from './impact-query.js';
import { YamlDocumentStream } from './yaml-body.js';

/** Most items of one change set (each is decided and validated in one turn of the event loop). */
export const MAX_SET_ITEMS = 1000;

/** Time one slice of a set's validation may hold the event loop before it yields (ms). */
const SLICE_MS = 4;

/** The path of change sets; YAML bodies sent there may hold several documents (server.ts). */
export const CHANGE_SET_PATH = '/_changes';

/** Dependencies of the change-set routes. */
export interface ChangeSetRouteDeps {
  registry: Registry;
  commands: Commands;
  writeSettings: WriteSettings;
  authz: AuthzSettings;
  /** `apiServer.bodyLimit`: each resource is stored as at most this many bytes of JSON. */
  bodyLimit: number;
  /** Reverts of a set; absent: not served. */
  history?: History;
  /** What a set does to proxies (`?impact=`); absent: not served. */
  impact?: LoadImpact;
}

type Obj = Record<string, unknown>;
const isObject = (v: unknown): v is Obj => typeof v === 'object' && v !== null && !Array.isArray(v);

const bodyError = (details: string, field = 'items'): AppError =>
  new AppError('INVALID_BODY', 'Change set is not valid', details, [{ field, message: details }]);

/** The items of a body: `{"items": [...]}` (JSON or YAML), or YAML documents, each an item. */
function itemsOf(body: unknown): unknown[] {
  let items: unknown;
  if (body instanceof YamlDocumentStream) {
    const [first] = body.documents;
    items =
      body.documents.length === 1 && isObject(first) && first.type === undefined && 'items' in first
        ? first.items
        : body.documents;
  } else if (isObject(body)) {
    items = body.items;
  }
  if (!Array.isArray(items)) {
    throw bodyError(
      'a change set is {"items": [...]} (in JSON or YAML), or YAML documents each of which is an item',
    );
  }
  if (items.length === 0) throw bodyError('a change set needs at least one item');
  if (items.length > MAX_SET_ITEMS) {
    throw bodyError(`a change set takes at most ${MAX_SET_ITEMS} items, not ${items.length}`);
  }
  return items;
}

/** An item's expected revision: a number, or an `If-Match` value (`"12"`, `*`). */
function preconditionOf(v: unknown, field: string): string | undefined {
  if (v === undefined || v === null) return undefined;
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return `"${v}"`;
  if (typeof v === 'string' && v.trim() !== '') return v;
  throw new AppError(
    'INVALID_BODY',
    'Resource is not valid',
    `${field} must be a revision or an entity tag`,
    [{ field, message: 'must be a revision (a number) or an entity tag such as "12" or *' }],
  );
}

/**
 * Registers `POST /_changes` (a change set) and `POST /_changes/:id/_revert`. Every item is held to
 * the rules of the single write it stands for, before anything is decided: the kind must be
 * writable in this mode (405), the caller must have the right to write it (403), the body must be
 * valid (400); the first item that fails refuses the whole set, named in the answer (`item`).
 */
export function registerChangeSetRoutes(app: FastifyInstance, deps: ChangeSetRouteDeps): void {
  const { registry, commands, writeSettings } = deps;
  const authorizer = createAuthorizer(registry, deps.authz);

  /** The stored kind of a `type` (a mesh given: the mesh-scoped one, as `Secret` vs `GlobalSecret`). */
  const kindOfType = (type: string, hasMesh: boolean): ResourceDescriptor | undefined => {
    const candidates = registry.stored.filter((d) => !d.derived && d.acceptedTypes.includes(type));
    return (
      candidates.find((d) => (d.scope === 'mesh') === hasMesh) ??
      candidates.find((d) => d.wireType === type) ??
      candidates[0]
    );
  };

  /** Checks one item as its single write would be checked; returns it for the write path. */
  const checkItem = (req: FastifyRequest, raw: unknown, index: number): ChangeItem => {
    let ref: SetItemRef = { index, kind: '', name: '' };
    try {
      if (!isObject(raw)) throw bodyError('an item must be an object', '');
      // An item with a `type` is a resource itself (whatever else its fields are named).
      const bare = raw.type !== undefined;
      const op = !bare && Object.hasOwn(raw, 'delete') ? 'delete' : 'upsert';
      const target = bare ? raw : op === 'delete' ? raw.delete : raw.upsert;
      if (!isObject(target)) {
        throw bodyError(
          'an item is a resource (with type, name and mesh), {"upsert": resource} or {"delete": {type, name, mesh}}',
          bare || !Object.hasOwn(raw, op) ? '' : op,
        );
      }
      const { type, name, mesh } = target;
      ref = {
        index,
        kind: typeof type === 'string' ? type : '',
        mesh: typeof mesh === 'string' ? mesh : undefined,
        name: typeof name === 'string' ? name : '',
      };
      if (typeof type !== 'string' || type === '') throw bodyError('type cannot be empty', 'type');
      if (typeof name !== 'string' || name === '') throw bodyError('name cannot be empty', 'name');
      if (mesh !== undefined && typeof mesh !== 'string') throw bodyError('mesh must be a string', 'mesh');
      const desc = kindOfType(type, mesh !== undefined);
      if (!desc) {
        throw bodyError(`${type} is not a kind that can be written`, 'type');
      }
      const inMesh = desc.scope === 'mesh' ? mesh : undefined;
      ref = { index, kind: desc.kind, mesh: inMesh, name };
      assertWritable(desc, writeSettings);
      authorizer.check(req.identity, {
        method: op === 'delete' ? 'DELETE' : 'PUT',
        path: req.url.split('?')[0],
        action: 'write',
        kind: desc.kind,
        mesh: meshOfRequest(desc.kind, { mesh: inMesh, name }),
        adminOnly: false,
      });
      // A bare resource has no preconditions (its fields are the resource's).
      const ifMatch = bare ? undefined : preconditionOf(raw.ifMatch, 'ifMatch');
      const ifNoneMatch = bare ? undefined : preconditionOf(raw.ifNoneMatch, 'ifNoneMatch');
      if (op === 'delete') {
        if (desc.scope === 'mesh' && mesh === undefined) throw bodyError(`a ${type} needs a mesh`, 'mesh');
        return { op, kind: desc.kind, mesh: inMesh, name, ifMatch, ifNoneMatch };
      }
      // A body of 100k invalid elements costs ~1 s of validation; refuse it before that.
      const beyond = bodyShapeCause(target);
      if (beyond) {
        throw new AppError(
          'INVALID_BODY',
          'Resource is not valid',
          'the resource is larger than one write may validate',
          [beyond],
        );
      }
      const checked = validateBody(desc, target, { mesh: inMesh, name });
      if (!checked.ok) {
        throw new AppError(
          'INVALID_BODY',
          'Resource is not valid',
          'the resource has invalid fields',
          checked.causes,
        );
      }
      return { op, kind: desc.kind, mesh: inMesh, name, spec: checked.spec, ifMatch, ifNoneMatch };
    } catch (error) {
      if (error instanceof AppError && !(error instanceof SetItemError)) throw new SetItemError(ref, error);
      throw error;
    }
  };

  const answer = (
    req: FastifyRequest,
    reply: FastifyReply,
    items: readonly ChangeItem[],
    result: ChangeSetResult,
    what: string,
    impact: ImpactBody | undefined,
  ): FastifyReply => {
    if (result.id !== null) {
      req.log.info(
        { changeSet: result.id, items: items.length, from: result.firstRevision, revision: result.revision },
        what,
      );
    }
    const body = {
      changeSet: result.id,
      dryRun: result.dryRun,
      revision: result.revision,
      items: result.items.map((r, index) => ({
        index,
        kind: items[index].kind,
        ...(items[index].mesh === undefined ? {} : { mesh: items[index].mesh }),
        name: items[index].name,
        operation: r.operation,
        revision: r.revision,
      })),
      ...(impact ? { impact } : {}),
    };
    return reply
      .type('application/json; charset=utf-8')
      .header('x-mesh-revision', String(result.revision))
      .send(JSON.stringify(body));
  };

  // The body names what is written: the hook refuses only callers who may write nothing.
  const config = { action: 'write', perItem: true } satisfies RouteInfo;
  app.post(CHANGE_SET_PATH, { config }, async (req, reply) => {
    const q = rawQuery(req);
    const dryRun = dryRunOf(q);
    const raws = itemsOf(req.body);
    const items: ChangeItem[] = [];
    let sliceStart = performance.now();
    for (let index = 0; index < raws.length; index++) {
      // A large set is validated in slices of a few ms, the event loop served between them (the
      // decision that follows is one step: it must see one state).
      if (performance.now() - sliceStart >= SLICE_MS) {
        await new Promise((resolve) => setImmediate(resolve));
        sliceStart = performance.now();
      }
      items.push(checkItem(req, raws[index], index));
    }
    const { result, impact } = await withImpact(req, q, deps.impact, (onDecided) =>
      commands.applySet({ items, actor: actorOf(req), dryRun, maxBytes: deps.bodyLimit, onDecided }),
    );
    return answer(req, reply, items, result, 'change set applied', impact);
  });

  const { history } = deps;
  if (!history) return;
  app.post(`${CHANGE_SET_PATH}/:id/_revert`, { config }, async (req, reply) => {
    const q = rawQuery(req);
    const dryRun = dryRunOf(q);
    const { id } = req.params as { id: string };
    const planned = await history.changeSetRevert(id);
    const items = planned.map((item, index) => {
      const desc = registry.get(item.kind);
      const ref = { index, kind: item.kind, mesh: item.mesh, name: item.name };
      try {
        assertWritable(desc, writeSettings);
        authorizer.check(req.identity, {
          method: item.op === 'delete' ? 'DELETE' : 'PUT',
          path: req.url.split('?')[0],
          action: 'write',
          kind: desc.kind,
          mesh: meshOfRequest(desc.kind, item),
          adminOnly: false,
        });
      } catch (error) {
        if (error instanceof AppError) throw new SetItemError(ref, error);
        throw error;
      }
      return item;
    });
    const { result, impact } = await withImpact(req, q, deps.impact, (onDecided) =>
      commands.applySet({ items, actor: actorOf(req), dryRun, maxBytes: deps.bodyLimit, onDecided }),
    );
    return answer(req, reply, items, result, 'change set reverted', impact);
  });
}
