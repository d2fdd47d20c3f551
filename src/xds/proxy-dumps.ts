/**
 * What `/xds`, `/stats` and `/clusters` of a proxy answer on a standalone or zone control plane:
 * a connected Dataplane's newest stream (what it was served, its counters); a Dataplane
 * without a stream the config it would be served, with `control_plane.connected_state: 0`. Zone
 * ingresses and egresses get no config from mesh-cp yet: their node and an empty config.
 */
import { AppError } from '../util/errors.js';
import type { AdsStream } from './ads-stream.js';
import { configDump } from './config-dump.js';
import type { DumpSources } from './dump.js';
import { wouldBeServedConfig } from './dump.js';
import { clustersText, statsText } from './proxy-text.js';
import { streamDump } from './stream-dump.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT } from './type-urls.js';
import { decodeAny } from './encode-any.js';

/** The proxies these views exist for. */
export type ProxyKind = 'Dataplane' | 'ZoneIngress' | 'ZoneEgress';

/** The three views. */
export type DumpView = 'xds' | 'stats' | 'clusters';

/** A proxy: `mesh` for a Dataplane only. */
export interface ProxyRef {
  kind: ProxyKind;
  mesh?: string;
  name: string;
}

/** A view's answer: its media type and body. */
export interface DumpAnswer {
  contentType: 'application/json' | 'text/plain';
  body: string;
}

/** Dependencies of {@link createProxyDumps}. */
export interface ProxyDumpDeps {
  sources: DumpSources;
  /** Whether a zone ingress or egress of this name exists. */
  exists(kind: 'ZoneIngress' | 'ZoneEgress', name: string): boolean;
  /** The newest open stream of a Dataplane, if any. */
  stream(mesh: string, name: string): AdsStream | undefined;
}

/** Answers the views of this control plane's own proxies. */
export interface ProxyDumps {
  answer(ref: ProxyRef, view: DumpView): DumpAnswer;
}

const json = (body: unknown): DumpAnswer => ({ contentType: 'application/json', body: JSON.stringify(body) });
const text = (body: string): DumpAnswer => ({ contentType: 'text/plain', body });

/** Creates the views over the mesh and the open streams. */
export function createProxyDumps(deps: ProxyDumpDeps): ProxyDumps {
  const dataplane = (mesh: string, name: string, view: DumpView): DumpAnswer => {
    // Throws NOT_FOUND naming the mesh or the Dataplane.
    const computed = wouldBeServedConfig(deps.sources, mesh, name);
    const stream = deps.stream(mesh, name);
    if (view === 'stats') return text(statsText(stream?.info));
    if (!stream) {
      const { revision, ...served } = computed;
      if (view === 'clusters') return text(clustersText(served.clusters, served.assignments));
      return json(configDump({ versions: { lds: revision, cds: revision, eds: revision }, ...served }));
    }
    if (view === 'xds') return json(streamDump(stream, computed.node));
    const decoded = (url: string) => stream.served(url).map((any) => decodeAny(any));
    return text(clustersText(decoded(CLUSTER), decoded(CLUSTER_LOAD_ASSIGNMENT)));
  };

  const zoneProxy = (kind: 'ZoneIngress' | 'ZoneEgress', name: string, view: DumpView): DumpAnswer => {
    if (!deps.exists(kind, name)) throw new AppError('NOT_FOUND', 'Not found', `${kind} "${name}" not found`);
    if (view === 'stats') return text(statsText(undefined));
    if (view === 'clusters') return text('');
    return json(
      configDump({
        node: { id: name, cluster: kind === 'ZoneIngress' ? 'zone-ingress' : 'zone-egress' },
        versions: {},
        listeners: [],
        clusters: [],
        assignments: [],
        notes: { [kind]: [`mesh-cp generates no config for a ${kind} yet: this dump is empty`] },
      }),
    );
  };

  return {
    answer(ref, view) {
      if (ref.kind === 'Dataplane') return dataplane(ref.mesh ?? '', ref.name, view);
      return zoneProxy(ref.kind, ref.name, view);
    },
  };
}
