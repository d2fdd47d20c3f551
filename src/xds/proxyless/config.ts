/**
 * The whole config of a proxyless gRPC client for the services it dials, rendered from its entry in
 * the match view (pure: objects before encoding). The policies were chosen there, as for any sidecar
 * whose outbounds are the dialled services (decisions §10); this file only turns them into xDS:
 * - per dialled service, from its outbound item: TrafficRoute (clusters, load balancer, `http`
 *   routes) and Timeout; from its service item: Retry;
 * - per destination cluster: the CircuitBreaker of the destination's service item;
 * - faults as the server's inbounds would inject them: each endpoint's inbound lists its
 *   FaultInjections (destinations against the inbound's tags); the first whose sources match the
 *   client applies to calls sent there. When every endpoint of a route's clusters decides alike, the
 *   fault is the route's; when they differ, each cluster carries its own, and a cluster whose
 *   endpoints differ is split by the tags that decide (weighted by endpoint count).
 * Settings the client cannot apply are said in `notes` (for `/xds` and inspect), never silently
 * dropped.
 */
import type { SidecarItem } from '../../policies/match-sidecar.js';
import { matchSidecar } from '../../policies/match-sidecar.js';
import type { PolicyResource } from '../../policies/policy-resource.js';
import type { ProxyInterfaces } from '../../policies/proxy-interfaces.js';
import { proxyInterfaces, type Networking } from '../../policies/proxy-interfaces.js';
import { allForInbound, bestSelectorRank } from '../../policies/select-policies.js';
import { SERVICE_TAG } from '../../resources/fragments.js';
import { itemKey, policyKey } from '../../resources/keys.js';
import { proxylessNotes, proxylessSetting, SETTING_KINDS } from '../../policies/kind-sets.js';
import type { ProxylessSettings } from '../../policies/proxyless-settings.js';
import { buildAssignment, buildCluster, clusterName, destinationMatches } from './clusters.js';
import { allDestinationsOf, buildListener, type ClusterFaults, type RouteInputs } from './listener.js';

type Tags = Readonly<Record<string, string>>;

/** One inbound of the mesh that serves a service, as an endpoint. */
export interface ServedEndpoint {
  address: string;
  port: number;
  tags: Tags;
  /** `health.ready`; absent = ready. */
  ready?: boolean;
}

/** What rendering reads of the rest of the mesh. */
export interface EntryMesh<E extends ServedEndpoint = ServedEndpoint> {
  /** Every inbound of the mesh serving `service`, ready or not. */
  endpoints(service: string): readonly E[];
  /** The FaultInjections listed on that inbound, best first (its matched policies). */
  faults(endpoint: E): readonly PolicyResource[];
  /** Builds a load assignment (`buildAssignment`, or one that shares what it built: `assignmentMemo`). */
  assignment?: typeof buildAssignment;
}

/** A proxy's entry: its interfaces (dialled services among the outbounds) and matched policies. */
export interface ClientEntry {
  interfaces: ProxyInterfaces;
  items: readonly SidecarItem[];
}

/** What a client's config is rendered from. */
export interface RenderInput<E extends ServedEndpoint = ServedEndpoint> {
  entry: ClientEntry;
  /** The services the client asked Listeners for. */
  services: readonly string[];
  mesh: EntryMesh<E>;
  /** Absent: the policies' part only (no load assignments; notes for inspect). */
  withEndpoints?: boolean;
  /** The client's zone: endpoints of other zones are left out (no zone ingress yet). */
  localZone?: string;
}

/** The resources to serve, by type, each list sorted by name, and the notes. */
export interface ProxylessConfig {
  listeners: Array<Record<string, unknown>>;
  clusters: Array<Record<string, unknown>>;
  assignments: Array<Record<string, unknown>>;
  /** Per service, what could not apply. */
  notes: Record<string, string[]>;
  /** The policies (`Kind/name`, sorted) whose settings went into this config: each is in the proxy's inspect answer. */
  shapedBy: string[];
}

/** The kinds whose policies the client's config takes a setting from. */
const SETTING_KIND_NAMES: ReadonlySet<string> = new Set(Object.values(SETTING_KINDS));

/**
 * Whether a change of the policies of `policyKind` listed at an attachment of a client can change
 * its config: the settings are read from its outbound and service items only (`setting` below); the
 * faults its calls get are read at the endpoints' inbounds, the callers' own inbound and dataplane
 * items shape only a server's Listener, which a would-be-served config does not hold.
 */
export function configReads(at: { type: string; policyKind: string }): boolean {
  return (at.type === 'outbound' || at.type === 'service') && SETTING_KIND_NAMES.has(at.policyKind);
}

/** The first policy of the kind that gives `setting`, listed on the item. */
const giving = (
  item: SidecarItem | undefined,
  setting: keyof ProxylessSettings,
): PolicyResource | undefined => {
  const kind = SETTING_KINDS[setting];
  return kind === undefined ? undefined : item?.matchedPolicies[kind]?.[0];
};

/** The fault setting of a FaultInjection-like policy (undefined: none). */
const faultOf = (p: PolicyResource | undefined) => (p ? proxylessSetting('fault', p) : undefined);

/** A cluster to build: its name, the destination it stands for, its endpoints, and its fault. */
interface ClusterPlan<E> {
  name: string;
  destination: Tags;
  endpoints: E[];
  fault: PolicyResource | undefined;
}

/**
 * The clusters of one destination: one, or one per value set of the tags that decide the fault
 * when its ready endpoints decide differently.
 */
function planClusters<E extends ServedEndpoint>(
  destination: Tags,
  mesh: EntryMesh<E>,
  faultFor: (e: E) => PolicyResource | undefined,
): Array<ClusterPlan<E>> {
  const service = destination[SERVICE_TAG] ?? '';
  const endpoints = mesh
    .endpoints(service)
    .filter((e) => e.ready !== false && destinationMatches(destination, e.tags));
  const decided = endpoints.map(faultFor);
  const name = clusterName(destination);
  if (decided.every((f) => f === decided[0])) {
    return [{ name, destination, endpoints, fault: decided[0] }];
  }
  // The keys any listed FaultInjection selects on decide; endpoints alike on them decide alike.
  const keys = new Set<string>();
  for (const e of endpoints) {
    for (const f of mesh.faults(e))
      for (const d of f.destinations ?? []) for (const k in d.match) keys.add(k);
  }
  for (const k in destination) if (destination[k] !== '*') keys.delete(k);
  const deciding = [...keys].sort();
  const groups = new Map<string, ClusterPlan<E>>();
  endpoints.forEach((e, i) => {
    const tags: Record<string, string> = { ...destination };
    for (const k of deciding) tags[k] = e.tags[k] ?? '';
    const sub = clusterName(tags);
    const group = groups.get(sub);
    if (group) group.endpoints.push(e);
    else groups.set(sub, { name: sub, destination, endpoints: [e], fault: decided[i] });
  });
  return [...groups.values()];
}

/** The client's config, rendered from its entry. */
export function renderProxyless<E extends ServedEndpoint>(input: RenderInput<E>): ProxylessConfig {
  const { entry, mesh } = input;
  const { tagSets, outbounds } = entry.interfaces;
  const itemOf = new Map<string, SidecarItem>();
  for (const item of entry.items) itemOf.set(itemKey(item.type, item.name), item);
  const outboundItem = (service: string): SidecarItem | undefined => {
    const ob = outbounds.find((o) => o.service === service);
    return ob && itemOf.get(itemKey('outbound', ob.name));
  };
  const serviceItem = (service: string) => itemOf.get(itemKey('service', service));
  /**
   * The fault a call to an endpoint gets: the first of its inbound's whose sources match the client.
   * Endpoints of one match class share their list of faults: each list is searched once.
   */
  const faultOfList = new Map<readonly PolicyResource[], PolicyResource | undefined>();
  const faultFor = (e: E): PolicyResource | undefined => {
    const list = mesh.faults(e);
    if (list.length === 0) return undefined;
    if (faultOfList.has(list)) return faultOfList.get(list);
    const found = list.find((f) => bestSelectorRank(f.sources, tagSets) !== undefined);
    faultOfList.set(list, found);
    return found;
  };

  const listeners: ProxylessConfig['listeners'] = [];
  const clusters = new Map<string, Record<string, unknown>>();
  const assignments = new Map<string, Record<string, unknown>>();
  const notes: ProxylessConfig['notes'] = {};
  const shapedBy = new Set<string>();
  const shaped = <P extends PolicyResource | undefined>(p: P): P => {
    if (p) shapedBy.add(policyKey(p.type, p.name));
    return p;
  };
  /** A setting read from the first policy giving it on the item (which then shapes the config). */
  const setting = <K extends keyof ProxylessSettings>(key: K, item: SidecarItem | undefined) => {
    const p = shaped(giving(item, key));
    return p && proxylessSetting(key, p);
  };

  for (const service of [...new Set(input.services)].sort()) {
    const outbound = outboundItem(service);
    const routeConf = setting('route', outbound);
    const said: string[] = [];
    const known = !input.withEndpoints || (service !== '' && mesh.endpoints(service).length > 0);
    // Every destination a call may go to, planned once (a destination may appear in several routes).
    const plans = new Map<string, Array<ClusterPlan<E>>>();
    for (const destination of allDestinationsOf(service, routeConf)) {
      const key = clusterName(destination);
      if (!plans.has(key)) plans.set(key, planClusters(destination, mesh, faultFor));
    }
    const faults: ClusterFaults = (destination) =>
      (plans.get(clusterName(destination)) ?? []).map((p) => ({
        name: p.name,
        weight: p.endpoints.length,
        fault: faultOf(p.fault),
      }));
    const inputs: RouteInputs = {
      route: routeConf,
      timeout: setting('timeout', outbound),
      retry: setting('retry', serviceItem(service)),
    };
    const { listener, notes: listenerNotes } = buildListener(service, inputs, { known, faults });
    listeners.push(listener);
    said.push(...listenerNotes);
    said.push(...proxylessNotes('outbound', Object.keys(outbound?.matchedPolicies ?? {})));
    for (const group of plans.values()) {
      for (const plan of group) {
        const destService = plan.destination[SERVICE_TAG] as string;
        if (input.withEndpoints && plan.endpoints.some((e) => e.ready !== false)) shaped(plan.fault);
        if (clusters.has(plan.name)) continue;
        const built = buildCluster(plan.name, {
          loadBalancer: routeConf?.loadBalancer,
          circuitBreaker: setting('circuitBreaker', serviceItem(destService)),
        });
        clusters.set(plan.name, built.cluster);
        said.push(...built.notes);
        if (!input.withEndpoints) continue;
        const assigned = (mesh.assignment ?? buildAssignment)(plan.name, plan.endpoints, input.localZone);
        assignments.set(plan.name, assigned.assignment);
        said.push(...assigned.notes);
      }
    }
    if (known)
      said.push(...proxylessNotes('service', Object.keys(serviceItem(service)?.matchedPolicies ?? {})));
    if (said.length > 0) notes[service] = [...new Set(said)];
  }
  const sorted = (m: Map<string, Record<string, unknown>>) =>
    [...m.keys()].sort().map((k) => m.get(k) as Record<string, unknown>);
  return {
    listeners,
    clusters: sorted(clusters),
    assignments: sorted(assignments),
    notes,
    shapedBy: [...shapedBy].sort(),
  };
}

/** What {@link proxylessConfig} computes from: the client, its services, the mesh's policies and endpoints. */
export interface ProxylessInput {
  /** The client proxy's Dataplane networking (its tags choose the policies). */
  networking: Networking;
  /** The services the client asked Listeners for. */
  services: readonly string[];
  /** The mesh's policies by kind. */
  candidates: Readonly<Record<string, readonly PolicyResource[]>>;
  /** Every inbound of the mesh's proxies (`inboundEndpoints`); absent: the policies' part only (no load assignments). */
  endpoints?: readonly ServedEndpoint[];
  /** The client's zone: endpoints of other zones are left out (no zone ingress yet). */
  localZone?: string;
}

/**
 * The config by full recomputation: the client matched from scratch (`matchSidecar`, its dialled
 * services as outbounds), each endpoint's faults matched from scratch for its inbound's tags. The
 * match view's incremental entries must always render to exactly this.
 */
export function proxylessConfig(input: ProxylessInput): ProxylessConfig {
  const byService = new Map<string, ServedEndpoint[]>();
  for (const e of input.endpoints ?? []) {
    const service = e.tags[SERVICE_TAG] ?? '';
    const list = byService.get(service);
    if (list) list.push(e);
    else byService.set(service, [e]);
  }
  const tagSetsOf = (service: string) => (byService.get(service) ?? []).map((e) => e.tags);
  const items = matchSidecar(input.networking, input.candidates, input.services, tagSetsOf);
  const faultKind = SETTING_KINDS.fault;
  const faults = faultKind === undefined ? [] : (input.candidates[faultKind] ?? []);
  return renderProxyless({
    entry: { interfaces: proxyInterfaces(input.networking, input.services), items },
    services: input.services,
    mesh: {
      endpoints: (service) => byService.get(service) ?? [],
      faults: (e) => allForInbound(e.tags, faults),
    },
    withEndpoints: input.endpoints !== undefined,
    localZone: input.localZone,
  });
}
