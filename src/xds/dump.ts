/**
 * `GET /meshes/{mesh}/dataplanes/{name}/xds` (spec 4.9, decisions §11) for a proxy that is not
 * connected: what it would be served, computed from its Dataplane (the services of its declared
 * outbounds stand for the services a proxyless client dials) and the mesh's policies and ready
 * endpoints, at the current revision. A connected proxy's dump (what its stream was served, with its
 * NACKs) is `stream-dump.ts`.
 */
import type { EndpointRef, MatchReads } from '../policies/match-view.js';
import { proxyInterfaces, type Networking } from '../policies/proxy-interfaces.js';
import { meshNameKey, nodeId } from '../resources/keys.js';
import { AppError } from '../util/errors.js';
import { configDump } from './config-dump.js';
import type { EntryMesh } from './proxyless/config.js';
import { entryMesh, renderProxy } from './render-proxy.js';

/** What the dump reads, given by the runtime. */
export interface DumpSources {
  meshExists(mesh: string): boolean;
  dataplane(mesh: string, name: string): Networking | undefined;
  dataplanes(mesh: string): Iterable<Networking>;
  /** The policy engine: a proxy's config is its entry there, rendered. */
  matches: MatchReads<unknown>;
  revision(): number;
  /** This control plane's zone (zone mode), whose endpoints are the local ones. */
  localZone?: string;
}

/**
 * The services a proxy that is not connected is taken to dial: its entry's outbounds (its declared
 * outbounds' services, and those it dialled if a stream of it is open elsewhere in this process).
 */
function rendered(
  src: DumpSources,
  mesh: string,
  name: string,
  withEndpoints: boolean,
  only?: ReadonlySet<string>,
  meshView: EntryMesh<EndpointRef> = entryMesh(src.matches, mesh),
) {
  const entry = src.meshExists(mesh) ? src.matches.proxy(mesh, name) : undefined;
  if (!entry) return undefined;
  const interfaces = entry.kind === 'SidecarDataplane' ? entry.interfaces : proxyInterfaces(entry.networking);
  const names = [...new Set(interfaces.outbounds.map((o) => o.service))].filter(
    (service) => only === undefined || only.has(service),
  );
  const config = renderProxy({
    entry,
    names,
    mesh,
    meshView,
    sources: src,
    withEndpoints,
  });
  return { networking: entry.networking, names, config };
}

/**
 * Per service a proxy dials, what of the matched policies a proxyless client cannot apply (for the
 * inspect API; endpoints are not read, so notes about them are `/xds`'s only).
 */
export function policyNotes(
  src: DumpSources,
  mesh: string,
  name: string,
): Record<string, string[]> | undefined {
  const r = rendered(src, mesh, name, false);
  if (!r || r.names.length === 0) return undefined;
  return r.config.notes;
}

/** At most this many proxies' notes are kept per revision (GUI tabs read the same proxies again). */
const NOTES_KEPT = 10_000;

/** {@link policyNotes}, kept per proxy until the next revision: a write may change any of them. */
export function createPolicyNotes(
  src: DumpSources,
): (mesh: string, name: string) => Record<string, string[]> | undefined {
  const kept = new Map<string, Record<string, string[]> | undefined>();
  let revision = -1;
  return (mesh, name) => {
    const now = src.revision();
    if (now !== revision || kept.size >= NOTES_KEPT) {
      kept.clear();
      revision = now;
    }
    const key = meshNameKey(mesh, name);
    if (kept.has(key)) return kept.get(key);
    const notes = policyNotes(src, mesh, name);
    kept.set(key, notes);
    return notes;
  };
}

/** What a proxy would be served now, as objects; 404 names a missing mesh or proxy. */
export function wouldBeServedConfig(
  src: DumpSources,
  mesh: string,
  name: string,
  /** Only the resources of these dialled services (each service's are the same rendered alone). */
  only?: ReadonlySet<string>,
  /** The mesh as read from `src.matches`, shared by several proxies rendered from one state. */
  meshView?: EntryMesh<EndpointRef>,
) {
  if (!src.meshExists(mesh)) throw new AppError('NOT_FOUND', 'Not found', `Mesh "${mesh}" not found`);
  const networking = src.dataplane(mesh, name);
  if (!networking) {
    throw new AppError('NOT_FOUND', 'Not found', `Dataplane "${name}" not found in mesh "${mesh}"`);
  }
  const served = (rendered(src, mesh, name, true, only, meshView) as NonNullable<ReturnType<typeof rendered>>)
    .config;
  const cluster =
    proxyInterfaces(networking).inbounds[0]?.service ?? networking.gateway?.tags['mesh.io/service'] ?? '';
  return { node: { id: nodeId(mesh, name), cluster }, revision: src.revision(), ...served };
}

/** The ConfigDump a proxy would be served now; 404 names a missing mesh or proxy. */
export function wouldBeServed(src: DumpSources, mesh: string, name: string): ReturnType<typeof configDump> {
  const { revision, ...served } = wouldBeServedConfig(src, mesh, name);
  return configDump({ versions: { lds: revision, cds: revision, eds: revision }, ...served });
}
