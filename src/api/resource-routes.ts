import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Commands } from '../app/commands.js';
import type { History } from '../app/history.js';
import type { Queries } from '../app/queries.js';
import type { WriteSettings } from '../app/write-policy.js';
import { assertWritable } from '../app/write-policy.js';
import type { Registry } from '../resources/registry.js';
import { bodyShapeCause } from '../resources/body-shape.js';
import { validateBody } from '../resources/validate.js';
import { AppError } from '../util/errors.js';
import { actorOf } from './actor.js';
import type { BodyBuffers } from './body-buffers.js';
import { createBodyBuffers } from './body-buffers.js';
import type { KindHandler, PathScope } from './kind-paths.js';
import { SCOPE_PREFIX, addKindRoute, createKindPaths } from './kind-paths.js';
import { nextUrl, parseListQuery, rawQuery, revisionAsked } from './list-query.js';
import { withImpact, type LoadImpact } from './impact-query.js';

/** Dependencies of the resource routes. */
export interface ResourceRouteDeps {
  registry: Registry;
  queries: Queries;
  commands: Commands;
  writeSettings: WriteSettings;
  /** Answers `?revision=R` reads as of R (decisions §8); absent: the parameter is ignored. */
  history?: History;
  /** `apiServer.bodyLimit`: a PUT stores at most this many bytes of JSON. */
  bodyLimit: number;
  /** What a write does to proxies (`?impact=`); absent: not served. */
  impact?: LoadImpact;
}

const json = (reply: FastifyReply, revision: number, body: string | Buffer): FastifyReply =>
  reply.type('application/json; charset=utf-8').header('x-mesh-revision', String(revision)).send(body);

const COMMA = 0x2c;

/**
 * `{"total":N,"items":[...],"next":...}` assembled from ready item bytes, without re-serialising,
 * into one buffer from `buffers` (give it back once the response has finished).
 */
function listBody(
  buffers: BodyBuffers,
  total: number,
  items: readonly Buffer[],
  next: string | null,
): Buffer {
  const head = `{"total":${total},"items":[`;
  const tail = `],"next":${JSON.stringify(next)}}`;
  const headBytes = Buffer.byteLength(head);
  let size = headBytes + Buffer.byteLength(tail) + Math.max(0, items.length - 1);
  for (const item of items) size += item.length;
  const out = buffers.take(size);
  out.write(head, 0);
  let pos = headBytes;
  for (let i = 0; i < items.length; i++) {
    if (i > 0) out[pos++] = COMMA;
    out.set(items[i], pos);
    pos += items[i].length;
  }
  out.write(tail, pos);
  return out;
}

/** `dryRun=true|false` (decisions §8); anything else is 400. */
export function dryRunOf(q: URLSearchParams): boolean {
  const v = q.get('dryRun');
  if (v === null || v === 'false') return false;
  if (v === 'true') return true;
  throw new AppError('INVALID_QUERY', 'Invalid query parameters', 'dryRun must be true or false', [
    { field: 'dryRun', message: 'must be true or false' },
  ]);
}

const header = (req: FastifyRequest, name: string): string | undefined => {
  const v = req.headers[name];
  return Array.isArray(v) ? v.join(',') : v;
};

/**
 * Registers GET/PUT/DELETE of every kind, generated from the registry (style habit 1): eight
 * parametric routes whose `:seg` names the kind (see kind-paths.ts).
 */
export function registerResourceRoutes(app: FastifyInstance, deps: ResourceRouteDeps): void {
  const { registry, queries, commands, writeSettings, history } = deps;
  const bodyBuffers = createBodyBuffers();

  /**
   * The revision a GET answers at (`?revision=R`, or `?at=T`: the last revision at or before T),
   * checked against the head; undefined for a read of now.
   */
  const pastRevision = async (req: FastifyRequest): Promise<number | undefined> =>
    history && revisionAsked(req, queries.revision(), (t) => history.revisionAt(t));
  const queriesAt = async (at: number | undefined): Promise<Queries> =>
    at === undefined ? queries : (history as History).queriesAt(at);

  const list: KindHandler = async (desc, req, reply) => {
    if (desc.singleton) {
      const at = await pastRevision(req);
      return json(reply, at ?? queries.revision(), (await queriesAt(at)).singleton(desc));
    }
    const q = rawQuery(req);
    const lr = parseListQuery(desc, q, req.params.mesh);
    const at = await pastRevision(req);
    const revision = at ?? queries.revision();
    const page = (at === undefined ? queries : await queriesAt(at)).list(desc, lr);
    const next = nextUrl(req, q, lr.offset, lr.size, page.total);
    const body = listBody(bodyBuffers, page.total, page.items, next);
    reply.raw.once('finish', () => bodyBuffers.give(body));
    return json(reply, revision, body);
  };

  const getOne: KindHandler = async (desc, req, reply) => {
    const at = await pastRevision(req);
    const revision = at ?? queries.revision();
    const name = req.params.name as string;
    const item =
      at === undefined
        ? queries.get(desc, req.params.mesh, name)
        : await (history as History).resourceAt(desc, req.params.mesh, name, at);
    if (item.revision !== undefined) reply.header('etag', `"${item.revision}"`);
    return json(reply, revision, item.body);
  };

  // Derived kinds are read only: assertWritable refuses them with the reason (405).
  const put: KindHandler = async (desc, req, reply) => {
    assertWritable(desc, writeSettings);
    const q = rawQuery(req);
    const dryRun = dryRunOf(q);
    const { mesh } = req.params;
    const name = req.params.name as string;
    // A body of 100k invalid elements costs ~1 s of validation; refuse it before that.
    const beyond = bodyShapeCause(req.body);
    if (beyond) {
      throw new AppError(
        'INVALID_BODY',
        'Resource is not valid',
        'the body is larger than one write may validate',
        [beyond],
      );
    }
    const checked = validateBody(desc, req.body, { mesh, name });
    if (!checked.ok)
      throw new AppError(
        'INVALID_BODY',
        'Resource is not valid',
        'the resource has invalid fields',
        checked.causes,
      );
    const { result, impact } = await withImpact(req, q, deps.impact, (onDecided) =>
      commands.put({
        kind: desc.kind,
        mesh,
        name,
        spec: checked.spec,
        actor: actorOf(req),
        ifMatch: header(req, 'if-match'),
        ifNoneMatch: header(req, 'if-none-match'),
        dryRun,
        maxBytes: deps.bodyLimit,
        onDecided,
      }),
    );
    if (!dryRun) {
      req.log.info(
        { kind: desc.kind, mesh, name, revision: result.revision, created: result.created },
        result.created ? 'resource created' : 'resource updated',
      );
      reply.header('etag', `"${result.revision}"`);
    }
    reply.code(result.created ? 201 : 200);
    if (impact) return json(reply, result.revision, JSON.stringify({ ...result.resource, impact }));
    return json(reply, result.revision, result.json);
  };

  const del: KindHandler = async (desc, req, reply) => {
    assertWritable(desc, writeSettings);
    const q = rawQuery(req);
    const dryRun = dryRunOf(q);
    const { mesh } = req.params;
    const name = req.params.name as string;
    const { result, impact } = await withImpact(req, q, deps.impact, (onDecided) =>
      commands.remove({
        kind: desc.kind,
        mesh,
        name,
        actor: actorOf(req),
        ifMatch: header(req, 'if-match'),
        dryRun,
        onDecided,
      }),
    );
    if (!dryRun) {
      req.log.info({ kind: desc.kind, mesh, name, revision: result.revision }, 'resource deleted');
      reply.header('etag', `"${result.revision}"`);
    }
    return json(reply, result.revision, impact ? JSON.stringify({ impact }) : '{}');
  };

  const paths = createKindPaths(registry);
  const on = addKindRoute.bind(null, app);
  for (const [scope, prefix] of Object.entries(SCOPE_PREFIX) as Array<[PathScope, string]>) {
    on('GET', `${prefix}:seg`, (p) => paths.list(scope, p.seg), list);
    on('GET', `${prefix}:seg/:name`, (p) => paths.item(scope, p.seg, false), getOne);
    on('PUT', `${prefix}:seg/:name`, (p) => paths.item(scope, p.seg, true), put);
    on('DELETE', `${prefix}:seg/:name`, (p) => paths.item(scope, p.seg, true), del);
  }
}
