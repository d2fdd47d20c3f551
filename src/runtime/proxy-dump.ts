/**
 * The `/xds`, `/stats` and `/clusters` views of proxies, as the API calls them. On a
 * standalone or zone plane: this plane's own streams and mesh. On Global, a zone's proxy (stored as
 * `<zone>.<name>` with the zone as origin) is answered by that zone over the sync session; what
 * Global owns itself is answered here. The xDS code loads on the first request.
 */
import type { ProxyDumpFn } from '../api/inspect-routes.js';
import type { TimelineItem } from '../app/config-timeline.js';
import type { Config } from '../config/schema.js';
import type { MatchView } from '../policies/match-view.js';
import type { ResourceViews } from '../projections/resource-views.js';
import { nameInZone } from '../resources/keys.js';
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
    const there = zone === undefined || zone === 'local' ? undefined : nameInZone(zone, ref.name);
    if (!item || zone === undefined || there === undefined || !multizone?.proxyDump) return local(ref, view);
    const req: Omit<DumpRequest, 'id'> = { kind: ref.kind, mesh: ref.mesh ?? '', name: there, view };
    const reply = await multizone.proxyDump(zone, req);
    return {
      contentType: reply.contentType === 'application/json' ? 'application/json' : 'text/plain',
      body: reply.body.toString('utf8'),
    };
  };
}

/** A proxy's config timeline as the API reads it (undefined: the proxy never existed). */
export type Timeline = (mesh: string, name: string) => Promise<readonly TimelineItem[] | undefined>;

/** The view name under which Global asks a zone for a proxy's config timeline. */
const TIMELINE_VIEW = 'timeline';

/**
 * A proxy's config timeline as the API answers it: this plane's own; on Global, a zone's proxy's is
 * its zone's (its revisions are the zone's), asked over the sync session. Global has no config of
 * its own to give a timeline of.
 */
export function configTimelineOf(deps: ProxyDumpDeps, local: Timeline): Timeline {
  if (deps.config.mode !== 'global') return local;
  return async (mesh, name) => {
    const item = deps.views.get('Dataplane', mesh, name);
    if (!item) return undefined;
    const zone = item.origin;
    const multizone = deps.multizone();
    const there = zone === 'local' ? undefined : nameInZone(zone, name);
    if (there === undefined || !multizone?.proxyDump) {
      throw new AppError(
        'BAD_REQUEST',
        'No xDS on Global',
        "Global serves no xDS: a proxy's config timeline is on the control plane of its zone",
      );
    }
    const reply = await multizone.proxyDump(zone, {
      kind: 'Dataplane',
      mesh,
      name: there,
      view: TIMELINE_VIEW,
    });
    return JSON.parse(reply.body.toString('utf8')) as TimelineItem[];
  };
}

/** A zone's answer to Global's request: the same view, of the proxy as this zone names it. */
export function answerDumpRequest(
  local: ProxyDumpFn,
  timeline?: Timeline,
): (req: DumpRequest) => Promise<{ contentType: string; body: string }> {
  return async (req) => {
    if (req.view === TIMELINE_VIEW && req.kind === 'Dataplane' && timeline) {
      const items = await timeline(req.mesh, req.name);
      if (!items) {
        throw new AppError(
          'NOT_FOUND',
          'Not found',
          `Dataplane "${req.name}" not found in mesh "${req.mesh}"`,
        );
      }
      return { contentType: 'application/json', body: JSON.stringify(items) };
    }
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
