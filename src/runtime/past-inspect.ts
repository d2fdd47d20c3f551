/**
 * Inspect answers and a proxy's `/xds` view as of a past revision. The policy engine is a function
 * of the stored state, so they are the engine run on the projections replayed up to that revision
 * (`PointInTime`): a match view over the past views, the inspect queries over it, and the config a
 * proxy is served rendered from its entry there. Each past state gets them once (the point-in-time
 * reader keeps the few most recently used states), so paging a past answer replays and matches once.
 *
 * What the log does not hold has no past: the services a proxyless client dialled (its xDS
 * subscriptions; its Dataplane's declared outbounds stand for them, as for a proxy not connected
 * now), what a stream was sent, its ACKs and NACKs, and the `stats` and `clusters` counters. The
 * `/xds` answer names what it leaves out.
 */
import type { PastInspect } from '../api/inspect-routes.js';
import { createInspectQueries } from '../app/inspect.js';
import { gatewayMatcher } from '../policies/gateway-matcher.js';
import { createMatchView } from '../policies/match-view.js';
import type { PastState, PointInTime } from '../projections/point-in-time.js';
import type { ProxyDumps } from '../xds/proxy-dumps.js';
import { xdsSources } from './xds-sources.js';

/** What an `/xds` answer as of a revision leaves out, as it says it. */
export const PAST_XDS_LEAVES_OUT: readonly string[] = [
  "the services the proxy dialled (its xDS subscriptions are runtime state, not in the log): its Dataplane's declared outbounds stand for them",
  'what a stream of the proxy was sent, and its ACKs and NACKs',
];

/** Creates the past inspect reader; `localZone` as the plane's own xDS sources take it; `dumps`: serve `/xds` (not on Global). */
export function createPastInspect(deps: {
  pointInTime: PointInTime;
  localZone?: string;
  dumps: boolean;
}): (revision: number) => Promise<PastInspect> {
  const built = new WeakMap<PastState, PastInspect>();
  return async (revision) => {
    const past = await deps.pointInTime.at(revision);
    const hit = built.get(past);
    if (hit) return hit;
    const matches = createMatchView(past.views, gatewayMatcher);
    const inspect = createInspectQueries({ views: past.views, matches });
    const sources = xdsSources(past.views, matches, deps.localZone);
    let dumps: ProxyDumps | undefined;
    const answer: PastInspect = { revision: past.revision, inspect };
    if (deps.dumps) {
      // The xDS renderers load on the first request, as for the live views.
      const proxyDumps = await import('../xds/proxy-dumps.js');
      const { policyNotes } = await import('../xds/dump.js');
      dumps = proxyDumps.createProxyDumps({
        sources,
        exists: (kind, name) => past.views.get(kind, undefined, name) !== undefined,
        stream: () => undefined,
      });
      const pastDumps = dumps;
      answer.xdsNotes = (mesh, name) => policyNotes(sources, mesh, name);
      answer.xds = (ref) => {
        const dump = JSON.parse(pastDumps.answer(ref, 'xds').body) as Record<string, unknown>;
        return JSON.stringify({
          ...dump,
          pointInTime: { revision: past.revision, leftOut: PAST_XDS_LEAVES_OUT },
        });
      };
    }
    built.set(past, answer);
    return answer;
  };
}
