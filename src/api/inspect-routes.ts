import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import type { TimelineItem } from '../app/config-timeline.js';
import type { InspectQueries } from '../app/inspect.js';
import type { Queries } from '../app/queries.js';
import type { Registry } from '../resources/registry.js';
import { AppError } from '../util/errors.js';
import { addKindRoute, createKindPaths } from './kind-paths.js';
import { nextUrl, parsePage, parseTime, rawQuery, revisionAsked } from './list-query.js';
import { pageBody } from './page-body.js';
import type { RouteInfo } from './route-info.js';

/** Dependencies of the inspect routes. */
export interface InspectRouteDeps {
  registry: Registry;
  queries: Queries;
  inspect: InspectQueries;
  /** `GET …/xds|stats|clusters` of Dataplanes, zone ingresses and egresses; absent: not served. */
  proxyDump?: ProxyDumpFn;
  /** Per dialled service, what a proxyless client could not apply; absent: `/policies` says nothing of it. */
  xdsNotes?: (mesh: string, name: string) => Record<string, string[]> | undefined;
  /** `GET …/dataplanes/{name}/xds/_history`: the proxy's config timeline; absent (Global): the route says where it is. */
  configTimeline?: (mesh: string, name: string) => Promise<readonly TimelineItem[] | undefined>;
  /** Answers `?revision=R` and `?at=T` as of that revision; absent: the parameters are ignored. */
  past?: {
    /** The last revision at or before a time (epoch ms), if any. */
    revisionAt(time: number): Promise<number | undefined>;
    /** The inspect answers (and `/xds` view) as of `revision`. */
    inspectAt(revision: number): Promise<PastInspect>;
  };
}

/** Inspect as of a past revision: the engine run on the state then (runtime parts left out). */
export interface PastInspect {
  revision: number;
  inspect: InspectQueries;
  xdsNotes?: (mesh: string, name: string) => Record<string, string[]> | undefined;
  /** The `/xds` view (JSON) of a proxy as it would have been served then; absent: not served (Global). */
  xds?: (ref: Parameters<ProxyDumpFn>[0]) => string;
}

/** A proxy's view: its ConfigDump (`xds`, JSON) or its `stats` and `clusters` (text). */
export type ProxyDumpFn = (
  ref: { kind: 'Dataplane' | 'ZoneIngress' | 'ZoneEgress'; mesh?: string; name: string },
  view: 'xds' | 'stats' | 'clusters',
) => Promise<{ contentType: 'application/json' | 'text/plain'; body: string }>;

const VIEWS = ['xds', 'stats', 'clusters'] as const;

const json = (reply: FastifyReply, revision: number, body: string | Buffer): FastifyReply =>
  reply.type('application/json; charset=utf-8').header('x-mesh-revision', String(revision)).send(body);

/**
 * The inspect API (spec 4.9): what applies to a proxy, and which proxies a policy affects. Reads of
 * the kind the path names: a proxy's views are reads of Dataplane in its mesh, a policy's proxies
 * reads of that policy kind.
 */
export function registerInspectRoutes(app: FastifyInstance, deps: InspectRouteDeps): void {
  const { registry, queries, past } = deps;
  const paths = createKindPaths(registry);

  /**
   * What a read answers from: now, or the point in time it asks for (`?revision=R`, `?at=T`), with
   * the revision it answers at.
   */
  const sourceOf = async (
    req: FastifyRequest,
  ): Promise<{
    revision: number;
    inspect: InspectQueries;
    notes: InspectRouteDeps['xdsNotes'];
    then?: PastInspect;
  }> => {
    const now = { revision: queries.revision(), inspect: deps.inspect, notes: deps.xdsNotes };
    const revision = past && (await revisionAsked(req, now.revision, (t) => past.revisionAt(t)));
    if (!past || revision === undefined) return now;
    const then = await past.inspectAt(revision);
    return { revision: then.revision, inspect: then.inspect, notes: then.xdsNotes, then };
  };
  const dataplaneRead = { config: { action: 'read', kind: 'Dataplane' } satisfies RouteInfo };

  type ProxyParams = { mesh: string; name: string };
  app.get<{ Params: ProxyParams }>(
    '/meshes/:mesh/dataplanes/:name/policies',
    dataplaneRead,
    async (req, reply) => {
      const { revision, inspect, notes: notesOf } = await sourceOf(req);
      const { mesh, name } = req.params;
      const body = inspect.matchedPolicies(mesh, name);
      const notes = notesOf?.(mesh, name);
      if (!notes || Object.keys(notes).length === 0) return json(reply, revision, body);
      // The matched policies' settings a proxyless client cannot apply, as `/xds` says them.
      const head = body.subarray(0, body.lastIndexOf('}'));
      return json(reply, revision, Buffer.concat([head, Buffer.from(`,"notes":${JSON.stringify(notes)}}`)]));
    },
  );

  app.get<{ Params: ProxyParams }>(
    '/meshes/:mesh/dataplanes/:name/rules',
    dataplaneRead,
    async (req, reply) => {
      const { revision, inspect } = await sourceOf(req);
      const { mesh, name } = req.params;
      return json(reply, revision, JSON.stringify(inspect.rules(mesh, name)));
    },
  );

  const { proxyDump } = deps;
  if (proxyDump) {
    const send = async (
      req: FastifyRequest,
      reply: FastifyReply,
      ref: Parameters<ProxyDumpFn>[0],
      view: (typeof VIEWS)[number],
    ): Promise<FastifyReply> => {
      const source = await sourceOf(req);
      if (source.then) {
        // The past holds no counters and no streams: only the config a proxy was served has one.
        if (view !== 'xds' || !source.then.xds) {
          const message = `${view === 'xds' ? 'is not served here' : `is runtime state, not in the log`}: it has no past`;
          const field = rawQuery(req).has('at') ? 'at' : 'revision';
          throw new AppError('INVALID_QUERY', 'Invalid query parameters', `/${view} ${message}`, [
            { field, message: `/${view} ${message}` },
          ]);
        }
        return json(reply, source.revision, source.then.xds(ref));
      }
      const revision = source.revision;
      const answer = await proxyDump(ref, view);
      return reply
        .type(`${answer.contentType}; charset=utf-8`)
        .header('x-mesh-revision', String(revision))
        .send(answer.body);
    };
    for (const view of VIEWS) {
      app.get<{ Params: ProxyParams }>(
        `/meshes/:mesh/dataplanes/:name/${view}`,
        dataplaneRead,
        (req, reply) =>
          send(req, reply, { kind: 'Dataplane', mesh: req.params.mesh, name: req.params.name }, view),
      );
      for (const [seg, kind] of [
        ['zoneingresses', 'ZoneIngress'],
        ['zoneegresses', 'ZoneEgress'],
      ] as const) {
        app.get<{ Params: { name: string } }>(
          `/${seg}/:name/${view}`,
          { config: { action: 'read', kind } satisfies RouteInfo },
          (req, reply) => send(req, reply, { kind, name: req.params.name }, view),
        );
      }
    }
  }

  const page = (req: FastifyRequest) => {
    const causes: Parameters<typeof parsePage>[1] = [];
    const q = rawQuery(req);
    const p = parsePage(q, causes);
    if (causes.length > 0) {
      throw new AppError('INVALID_QUERY', 'Invalid query parameters', 'bad list parameters', causes);
    }
    return { q, ...p };
  };

  const { configTimeline } = deps;
  {
    // A proxy's config timeline: when its served config changed, and which write did it.
    app.get<{ Params: ProxyParams }>(
      '/meshes/:mesh/dataplanes/:name/xds/_history',
      dataplaneRead,
      async (req, reply) => {
        const revision = queries.revision();
        const { q, offset, size } = page(req);
        const from = parseTime(q, 'from')?.time ?? -Infinity;
        const to = parseTime(q, 'to')?.time ?? Infinity;
        const { mesh, name } = req.params;
        // Throws NOT_FOUND naming a missing mesh.
        queries.get(registry.get('Mesh'), undefined, mesh);
        if (!configTimeline) {
          throw new AppError(
            'BAD_REQUEST',
            'Not served',
            'this control plane keeps no proxy config timeline',
          );
        }
        const all = await configTimeline(mesh, name);
        if (all === undefined) {
          throw new AppError('NOT_FOUND', 'Not found', `Dataplane "${name}" not found in mesh "${mesh}"`);
        }
        const items = all.filter((i) => {
          const t = Date.parse(i.time);
          return t >= from && t <= to;
        });
        const next = nextUrl(req, q, offset, size, items.length);
        return json(reply, revision, pageBody(items.length, items.slice(offset, offset + size), next));
      },
    );
  }

  // Proxies configured by a gateway (spec 2.20): every built-in gateway proxy its selectors match.
  for (const d of registry.all.filter((k) => k.selectsProxies)) {
    app.get<{ Params: ProxyParams }>(
      `/meshes/:mesh/${d.path}/:name/dataplanes`,
      { config: { action: 'read', kind: d.kind } satisfies RouteInfo },
      async (req, reply) => {
        const { revision, inspect } = await sourceOf(req);
        const { q, offset, size } = page(req);
        const { mesh, name } = req.params;
        const result = inspect.gatewayDataplanes(mesh, name, { offset, size });
        const next = nextUrl(req, q, offset, size, result.total);
        return json(reply, revision, pageBody(result.total, result.items, next));
      },
    );
  }

  addKindRoute(
    app,
    'GET',
    '/meshes/:mesh/:seg/:name/dataplanes',
    (p) => paths.stored('mesh', p.seg),
    async (desc, req, reply) => {
      const { revision, inspect } = await sourceOf(req);
      const { q, offset, size } = page(req);
      const mesh = req.params.mesh as string;
      const result = inspect.affected(desc, mesh, req.params.name as string, { offset, size });
      const next = nextUrl(req, q, offset, size, result.total);
      return json(reply, revision, pageBody(result.total, result.items, next));
    },
  );
}
