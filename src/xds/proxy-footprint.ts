/**
 * Which writes can change a connected proxyless client's config (issue 17, bounded recomputation).
 * The config (`proxylessConfig`) reads the client's own Dataplane, the Mesh, the policies of the
 * route kinds whose sources match the client and whose destinations can name a service it reaches
 * (the services it dials and those its routes send to), and the inbounds of those services. The
 * footprint keeps, from the last computation, the client's tags, what it reaches, and which policies
 * and Dataplanes it read: a write touches the client when its new version would be read, or when
 * its old one was (the remembered sets stand for the old version, which the log entry of an
 * update does not carry). Unknown shapes count as touching.
 */
import type { PolicyResource, Selector } from '../policies/policy-resource.js';
import { proxyInterfaces, type Networking } from '../policies/proxy-interfaces.js';
import { bestSelectorRank } from '../policies/select-policies.js';
import { SERVICE_TAG } from '../resources/fragments.js';
import { CONFIG_KINDS } from './proxyless/config.js';

const CONFIG_KIND_SET = new Set<string>(CONFIG_KINDS);

/** One committed write in the proxy's mesh: the new state (absent on delete) and, when known, the old. */
export interface MeshWrite {
  kind: string;
  name: string;
  resource?: Record<string, unknown>;
  previous?: Record<string, unknown>;
}

/** What one computation of a client's config read. */
export interface ProxyFootprint {
  /** The client's Dataplane name. */
  self: string;
  tagSets: ReadonlyArray<Readonly<Record<string, string>>>;
  /** Services dialled or sent to by a route. */
  reach: ReadonlySet<string>;
  /** `kind\0name` of every policy read. */
  policies: ReadonlySet<string>;
  /** Names of the Dataplanes with an inbound of a reached service. */
  endpointOwners: ReadonlySet<string>;
  /**
   * The proxy is a proxyless server (it asked for an inbound Listener): its RBAC reads every
   * TrafficPermission and MeshTrafficPermission, and every Dataplane's addresses (its callers).
   */
  server?: boolean;
}

/** The kinds a proxyless server's inbound Listener reads, besides every Dataplane. */
const SERVER_KINDS = new Set(['TrafficPermission', 'MeshTrafficPermission']);

/** The footprint of a computation from its inputs and the services its clusters reach. */
export function proxyFootprint(input: {
  self: string;
  networking: Networking | undefined;
  reach: Iterable<string>;
  candidates: Readonly<Record<string, readonly PolicyResource[]>>;
  /** Names of the Dataplanes serving each service; under `''` those with an inbound without a service. */
  owners: ReadonlyMap<string, readonly string[]>;
}): ProxyFootprint {
  const tagSets = input.networking ? proxyInterfaces(input.networking).tagSets : [];
  const reach = new Set(input.reach);
  const policies = new Set<string>();
  const base = { self: input.self, tagSets, reach, policies, endpointOwners: new Set<string>() };
  for (const kind of CONFIG_KINDS) {
    for (const p of input.candidates[kind] ?? []) if (policyReads(base, p)) policies.add(key(kind, p.name));
  }
  const owners = new Set<string>(input.owners.get('') ?? []);
  for (const service of reach) for (const name of input.owners.get(service) ?? []) owners.add(name);
  return { ...base, endpointOwners: owners };
}

/** True when `write` may change the config the footprint was taken from (conservative). */
export function touches(f: ProxyFootprint, write: MeshWrite): boolean {
  if (write.kind === 'Mesh') return true;
  if (f.server && (write.kind === 'Dataplane' || SERVER_KINDS.has(write.kind))) return true;
  if (write.kind === 'Dataplane') {
    if (write.name === f.self || f.endpointOwners.has(write.name)) return true;
    return [write.resource, write.previous].some(
      (r) => r !== undefined && servesReach(f.reach, r.networking as Networking | undefined),
    );
  }
  if (!CONFIG_KIND_SET.has(write.kind)) return false;
  if (f.policies.has(key(write.kind, write.name))) return true;
  return [write.resource, write.previous].some(
    (r) => r !== undefined && policyReads(f, r as unknown as PolicyResource),
  );
}

/** The index `proxyFootprint` reads: Dataplane names by the services of their inbounds. */
export function ownersByService(
  dataplanes: Iterable<{ name: string; networking: Networking }>,
): Map<string, string[]> {
  const out = new Map<string, string[]>();
  for (const d of dataplanes) {
    const services = new Set<string>();
    for (const ib of d.networking.inbound ?? []) services.add(ib.tags?.[SERVICE_TAG] ?? '');
    for (const s of services) (out.get(s) ?? out.set(s, []).get(s))?.push(d.name);
  }
  return out;
}

const key = (kind: string, name: string): string => `${kind}\u0000${name}`;

/** Sources match the client and some destination can name a reached service (or any). */
function policyReads(f: Pick<ProxyFootprint, 'tagSets' | 'reach'>, p: PolicyResource): boolean {
  if (!Array.isArray(p.sources) || !Array.isArray(p.destinations)) return true;
  if (bestSelectorRank(p.sources, f.tagSets) === undefined) return false;
  return p.destinations.some((d: Selector) => {
    const service = d?.match?.[SERVICE_TAG];
    return service === undefined || service === '*' || f.reach.has(service);
  });
}

/** Any inbound (ready or not: readiness may be what changed) of a reached service, or untagged. */
function servesReach(reach: ReadonlySet<string>, networking: Networking | undefined): boolean {
  if (!networking) return false;
  for (const ib of (networking as { inbound?: Array<{ tags?: Record<string, string> }> }).inbound ?? []) {
    const service = ib.tags?.[SERVICE_TAG];
    if (service === undefined || reach.has(service)) return true;
  }
  return false;
}
