/**
 * The `/xds`, `/stats` and `/clusters` views of proxies, as the API calls them. On a
 * standalone or zone plane: this plane's own streams and mesh. On Global, a zone's proxy (stored as
 * `<zone>.<name>` with the zone as origin) is answered by that zone over the sync session; what
 * Global owns itself is answered here. The xDS code loads on the first request.
 */
import type { ProxyDumpFn } from '../api/inspect-routes.js';
import type { Config } from '../config/schema.js';
import type { MatchView } from '../policies/match-view.js';
import type { ResourceViews } from '../projections/resource-views.js';
import { AppError } from '../util/errors.js';
import type { DumpRequest } from '../zones/sync-protocol.js';
import type { ProxyDumps } from '../xds/proxy-dumps.js';
import type { Multizone } from './multizone.js';
import type { XdsServer } from './xds-server.js';
import { xdsSources } from './xds-sources.js';
import { localZoneOf } from '../config/local-zone.js';

/** What the views read: the plane's views and, once started, its xDS server and sync. */
export interface ProxyDumpDeps {
  config: Config;
  views: ResourceViews;
  /** The policy engine: a proxy's config is its entry there, rendered. */
  matches: MatchView<unknown>;
  xds(): XdsServer | undefined;
  multizone(): Multizone | undefined;
}

/** This plane's own answers, for the routes and for Global's requests to this zone. */
export function localProxyDump(deps: ProxyDumpDeps): ProxyDumpFn {
  let dumps: ProxyDumps | undefined;
  const { config, views } = deps;
  return async (ref, view) => {
    if (!dumps) {
      const { createProxyDumps } = await import('../xds/proxy-dumps.js');
      dumps = createProxyDumps({
        sources: xdsSources(views, deps.matches, localZoneOf(config)),
        exists: (kind, name) => views.get(kind, undefined, name) !== undefined,
        stream: (mesh, name) => deps.xds()?.streamOf(mesh, name),
      });
    }
    return dumps.answer(ref, view);
  };
}

/** The views as the API answers them: on Global, a zone's proxy goes to its zone. */
export function proxyDump(deps: ProxyDumpDeps): ProxyDumpFn {
  const local = localProxyDump(deps);
  if (deps.config.mode !== 'global') return local;
  return async (ref, view) => {
    const item = deps.views.get(ref.kind, ref.mesh, ref.name);
    const zone = item?.origin;
    const multizone = deps.multizone();
    if (
      !item ||
      zone === undefined ||
      zone === 'local' ||
      !ref.name.startsWith(`${zone}.`) ||
      !multizone?.proxyDump
    )
      return local(ref, view);
    const req: Omit<DumpRequest, 'id'> = {
      kind: ref.kind,
      mesh: ref.mesh ?? '',
      name: ref.name.slice(zone.length + 1),
      view,
    };
    const reply = await multizone.proxyDump(zone, req);
    return {
      contentType: reply.contentType === 'application/json' ? 'application/json' : 'text/plain',
      body: reply.body.toString('utf8'),
    };
  };
}

/** A zone's answer to Global's request: the same view, of the proxy as this zone names it. */
export function answerDumpRequest(
  local: ProxyDumpFn,
): (req: DumpRequest) => Promise<{ contentType: string; body: string }> {
  return async (req) => {
    const kind = KINDS.find((k) => k === req.kind);
    const view = VIEWS.find((v) => v === req.view);
    if (!kind || !view) {
      throw new AppError('BAD_REQUEST', 'Bad request', `no view "${req.view}" of a ${req.kind} here`);
    }
    return local({ kind, mesh: kind === 'Dataplane' ? req.mesh : undefined, name: req.name }, view);
  };
}

const KINDS = ['Dataplane', 'ZoneIngress', 'ZoneEgress'] as const;
const VIEWS = ['xds', 'stats', 'clusters'] as const;
