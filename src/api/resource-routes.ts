import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { Commands } from '../app/commands.js';
import type { Queries } from '../app/queries.js';
import type { WriteSettings } from '../app/write-policy.js';
import { assertWritable } from '../app/write-policy.js';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import type { Registry } from '../resources/registry.js';
import { validateBody } from '../resources/validate.js';
import { AppError } from '../util/errors.js';
import { actorOf } from './actor.js';
import { nextUrl, parseListQuery, rawQuery } from './list-query.js';

type Params = { mesh?: string; name?: string };

/** What a route touches, kept in fastify's route config so hooks can authorize by kind and action. */
export interface RouteInfo {
  /** Registry kind, absent for control-plane routes (`/config`, `/versions`, …). */
  kind?: string;
  action: 'read' | 'write';
}

/** Dependencies of the resource routes. */
export interface ResourceRouteDeps {
  registry: Registry;
  queries: Queries;
  commands: Commands;
  writeSettings: WriteSettings;
}

const json = (reply: FastifyReply, revision: number, body: string): FastifyReply =>
  reply.type('application/json').header('x-mesh-revision', String(revision)).send(body);

/** `dryRun=true|false` (decisions §8); anything else is 400. */
function dryRunOf(q: URLSearchParams): boolean {
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

/** Registers GET/PUT/DELETE routes for every kind, generated from the registry (style habit 1). */
export function registerResourceRoutes(app: FastifyInstance, deps: ResourceRouteDeps): void {
  const { registry, queries, commands, writeSettings } = deps;

  const list =
    (desc: ResourceDescriptor) => async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
      const q = rawQuery(req);
      const lr = parseListQuery(desc, q, req.params.mesh);
      const revision = queries.revision();
      const page = queries.list(desc, lr);
      const next = nextUrl(req, q, lr.offset, lr.size, page.total);
      return json(
        reply,
        revision,
        `{"total":${page.total},"items":[${page.items.join(',')}],"next":${JSON.stringify(next)}}`,
      );
    };

  const getOne =
    (desc: ResourceDescriptor) => async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
      const revision = queries.revision();
      const item = queries.get(desc, req.params.mesh, req.params.name as string);
      if (item.revision !== undefined) reply.header('etag', `"${item.revision}"`);
      return json(reply, revision, item.json);
    };

  const put =
    (desc: ResourceDescriptor) => async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
      assertWritable(desc, writeSettings);
      const dryRun = dryRunOf(rawQuery(req));
      const { mesh, name } = req.params as { mesh?: string; name: string };
      const checked = validateBody(desc, req.body, { mesh, name });
      if (!checked.ok)
        throw new AppError(
          'INVALID_BODY',
          'Resource is not valid',
          'the resource has invalid fields',
          checked.causes,
        );
      const result = await commands.put({
        kind: desc.kind,
        mesh,
        name,
        spec: checked.spec,
        actor: actorOf(req),
        ifMatch: header(req, 'if-match'),
        ifNoneMatch: header(req, 'if-none-match'),
        dryRun,
      });
      if (!dryRun) {
        req.log.info(
          { kind: desc.kind, mesh, name, revision: result.revision, created: result.created },
          result.created ? 'resource created' : 'resource updated',
        );
        reply.header('etag', `"${result.revision}"`);
      }
      reply.code(result.created ? 201 : 200);
      return json(reply, result.revision, JSON.stringify(result.resource));
    };

  const del =
    (desc: ResourceDescriptor) => async (req: FastifyRequest<{ Params: Params }>, reply: FastifyReply) => {
      assertWritable(desc, writeSettings);
      const dryRun = dryRunOf(rawQuery(req));
      const { mesh, name } = req.params as { mesh?: string; name: string };
      const result = await commands.remove({
        kind: desc.kind,
        mesh,
        name,
        actor: actorOf(req),
        ifMatch: header(req, 'if-match'),
        dryRun,
      });
      if (!dryRun) {
        req.log.info({ kind: desc.kind, mesh, name, revision: result.revision }, 'resource deleted');
        reply.header('etag', `"${result.revision}"`);
      }
      return json(reply, result.revision, '{}');
    };

  const refuse = (desc: ResourceDescriptor) => async () => {
    assertWritable(desc, writeSettings);
  };

  for (const desc of registry.all) {
    if (desc.singleton) {
      app.get(`/${desc.path}`, async (_req, reply) =>
        json(reply, queries.revision(), queries.singleton(desc)),
      );
      continue;
    }
    const prefix = desc.scope === 'mesh' ? '/meshes/:mesh/' : '/';
    for (const seg of [desc.path, ...desc.aliases]) {
      app.get(`${prefix}${seg}`, list(desc));
      app.get(`${prefix}${seg}/:name`, getOne(desc));
      app.put(`${prefix}${seg}/:name`, desc.derived ? refuse(desc) : put(desc));
      app.delete(`${prefix}${seg}/:name`, desc.derived ? refuse(desc) : del(desc));
      if (desc.scope === 'mesh' && desc.crossMeshList) app.get(`/${seg}`, list(desc));
    }
    for (const seg of desc.itemAliases) app.get(`${prefix}${seg}/:name`, getOne(desc));
  }
}
