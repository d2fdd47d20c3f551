/**
 * A proxy's config timeline: the revisions at which the config it would be served changed, each
 * with the write that changed it. The policy engine is a function of the stored state, so the
 * timeline is the log replayed in order into fresh projections and a match view of their own: after
 * each entry that the match view says may change the proxy's config (it names the proxies a write
 * reaches, as it does for the xDS server), the config is rendered and compared with the last.
 *
 * Rendered as for a proxy that is not connected (`…/xds?revision=R`): the services a proxyless
 * client dials are runtime state, so its Dataplane's declared outbounds stand for them. Runtime
 * status (what a stream was sent, ACKs, NACKs) is not in the log and has no timeline.
 *
 * A replay is kept for the few proxies asked last, with the state it reached: the next request (a
 * next page, or after new writes) goes on from there instead of from the first revision.
 */
import type { LogEntry } from '../events/types.js';
import { entryWrite, type EntryWrite } from './history.js';
import { gatewayMatcher } from '../policies/gateway-matcher.js';
import { createMatchView, type MatchView } from '../policies/match-view.js';
import { createResourceViews, type ResourceViews } from '../projections/resource-views.js';
import type { Registry } from '../resources/registry.js';
import { meshNameKey } from '../resources/keys.js';

/** What became of the config at one revision. */
export type ConfigChange = 'created' | 'changed' | 'removed';

/** One change of a proxy's config, with the write that made it. */
export interface TimelineItem {
  revision: number;
  time: string;
  config: ConfigChange;
  /** The log entry at that revision: what was written, by whom. */
  write: EntryWrite;
}

/** The proxy's served config (as text to compare), or undefined when it has none (no such proxy or mesh). */
export type RenderConfig = (
  views: ResourceViews,
  matches: MatchView<unknown>,
  mesh: string,
  name: string,
) => string | undefined;

/** A replay of the log for one proxy, as far as it has gone. */
interface Replay {
  views: ResourceViews;
  matches: MatchView<unknown>;
  /** True when the entries applied since the last render may have changed the config. */
  touched: boolean;
  last: string | undefined;
  items: TimelineItem[];
}

/** How many replays are kept (the proxies asked last). */
const KEPT = 2;

export interface ConfigTimeline {
  /** Every change of the proxy's config up to the head, oldest first; undefined when the proxy never existed. */
  timeline(mesh: string, name: string): Promise<readonly TimelineItem[] | undefined>;
}

/** Creates the timeline reader over the log; `renderer` loads the renderer (on first use). */
export function createConfigTimeline(deps: {
  registry: Registry;
  read(from: number, to: number): AsyncIterable<LogEntry>;
  head(): number;
  renderer(): Promise<RenderConfig>;
}): ConfigTimeline {
  const replays = new Map<string, { replay: Replay; upTo: number }>();

  const start = (mesh: string, name: string): Replay => {
    const views = createResourceViews(deps.registry);
    const matches = createMatchView(views, gatewayMatcher);
    const replay: Replay = { views, matches, touched: false, last: undefined, items: [] };
    matches.onProxiesChanged((m, change) => {
      if (m === mesh && (change.all || change.proxies.has(name) || change.dataplanes)) replay.touched = true;
    });
    return replay;
  };

  return {
    async timeline(mesh, name) {
      const render = await deps.renderer();
      const key = meshNameKey(mesh, name);
      const kept = replays.get(key);
      replays.delete(key);
      const { replay, upTo } = kept ?? { replay: start(mesh, name), upTo: 0 };
      const head = deps.head();
      let seen = replay.items.length > 0 || replay.last !== undefined;
      if (head > upTo) {
        for await (const e of deps.read(upTo + 1, head)) {
          replay.views.apply([e]);
          // A Mesh write may build the mesh's matches again (its metrics backend), or create it:
          // the match view names no proxy of a mesh it has not built, so the config is read then.
          if (e.kind === 'Mesh' ? e.name !== mesh : e.mesh !== mesh) continue;
          if (e.kind !== 'Mesh' && !replay.touched) continue;
          replay.touched = false;
          // A read builds the mesh's matches (from then on the match view names what a write touches).
          replay.matches.proxy(mesh, name);
          const now = render(replay.views, replay.matches, mesh, name);
          if (now === replay.last) continue;
          seen = true;
          const config: ConfigChange =
            now === undefined ? 'removed' : replay.last === undefined ? 'created' : 'changed';
          replay.last = now;
          replay.items.push({
            revision: e.revision,
            time: e.time,
            config,
            write: entryWrite(e),
          });
        }
      }
      replays.set(key, { replay, upTo: Math.max(upTo, head) });
      while (replays.size > KEPT) replays.delete(replays.keys().next().value as string);
      return seen ? replay.items : undefined;
    },
  };
}
