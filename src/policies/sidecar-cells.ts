/**
 * The matches of one sidecar proxy kept as cells, so that a policy write updates them without
 * matching the proxy again (the incremental half of the policy engine; `matchSidecar` is the whole
 * computation and the definition these cells must always agree with).
 *
 * A cell is one place a kind attaches (an inbound by index, an outbound by index, a service, the
 * proxy) and one kind. A `best` cell holds the single best policy with its rank; an `all` cell the
 * sorted list of every match. When one policy changes, only its own places move:
 * - it now ranks at least as high where it was the best, or it beats the best: it is the best;
 * - it was the best and now ranks lower or no longer matches: that kind is recomputed from every
 *   candidate of the kind (the only slow path, and only for proxies where the policy was best);
 * - `all` cells drop the old version and insert the new one in order.
 * A TrafficRoute that changes where an outbound's traffic goes changes the services that
 * HealthCheck, CircuitBreaker and Retry attach to: those three kinds are then recomputed for the proxy.
 *
 * Ranks are numbers here: tags × 2^16 + exact values, so a pair's rank is the sum of its ranks and
 * comparing is `-` (decisions §10: more tags, then more exact values).
 */
import { SERVICE_TAG } from '../resources/fragments.js';
import {
  ATTACHMENT_KINDS,
  DIALLED_KINDS,
  PASS_THROUGH_SERVICE,
  TARGET_REF_POLICY_KINDS,
  type SidecarItem,
} from './match-sidecar.js';
import { LOGGED_KINDS, ROUTE_KIND, ROUTED_KINDS, SIDECAR_ATTACHED_KINDS } from './kind-sets.js';
import { selectsByTargetRef, type PolicyResource } from './policy-resource.js';
import { proxyInterfaces, type Networking, type ProxyInterfaces } from './proxy-interfaces.js';
import { callDestinations, routeDestinations } from './route-destinations.js';
import { bestSelectorRank } from './select-policies.js';
import { rankOf, type Rank } from './tag-selector.js';
import { compareByTargetRef, targetRefListeners } from './target-ref-match.js';

/** A policy placed in a cell, with its rank there. */
interface Placed {
  policy: PolicyResource;
  rank: number;
}

/** The cells of one location, by kind. */
type LocationCells = Record<string, Placed | Placed[]>;

/** A policy that became listed on a class, or stopped being listed. */
export interface Listing {
  kind: string;
  name: string;
  listed: boolean;
}

/** Candidate policies of one mesh by kind and name, as the view keeps them. */
export type Candidates = ReadonlyMap<string, ReadonlyMap<string, PolicyResource>>;

const TAGS = 1 << 16;
const rankNumber = (r: Rank): number => (r.exact + r.wildcard) * TAGS + r.exact;

const INBOUND_ALL: ReadonlySet<string> = new Set(ATTACHMENT_KINDS.inbound.all);
const OUTBOUND: ReadonlySet<string> = new Set(ATTACHMENT_KINDS.outbound);
const SERVICE: ReadonlySet<string> = new Set(ATTACHMENT_KINDS.service);
const LOGGED: ReadonlySet<string> = new Set(LOGGED_KINDS);
const INBOUND_BEST: ReadonlySet<string> = new Set(ATTACHMENT_KINDS.inbound.best);
const DATAPLANE_BEST: ReadonlySet<string> = new Set(ATTACHMENT_KINDS.dataplane.best);
const DATAPLANE_ALL: ReadonlySet<string> = new Set(ATTACHMENT_KINDS.dataplane.all);
const TARGET_REF: ReadonlySet<string> = new Set(TARGET_REF_POLICY_KINDS);
const DIALLED: ReadonlySet<string> = new Set(DIALLED_KINDS);

type Tags = Readonly<Record<string, string>>;

/** The inbound tag sets of the mesh's endpoints of a service (what destinations of inbound kinds match). */
export type EndpointTags = (service: string) => readonly Tags[];

const NO_ENDPOINTS: EndpointTags = () => [];

/** The kinds an outbound item lists, in order: those of every outbound, then those of dialled ones. */
const OUTBOUND_ITEM_KINDS = [...ATTACHMENT_KINDS.outbound, ...DIALLED_KINDS];

export { ROUTED_KINDS };

/** Every kind a sidecar's cells hold, the router first (the routed kinds' places depend on it). */
export const SIDECAR_KINDS: readonly string[] = [
  ROUTE_KIND,
  ...SIDECAR_ATTACHED_KINDS.filter((k) => k !== ROUTE_KIND),
];

const isAll = (location: string, kind: string): boolean =>
  location[0] === 'i'
    ? INBOUND_ALL.has(kind)
    : location[0] === 'o'
      ? DIALLED.has(kind)
      : location[0] === 'd' && (DATAPLANE_ALL.has(kind) || TARGET_REF.has(kind));

/** A source-matched policy's rank towards `service`: source plus destination, or undefined. */
function serviceRank(policy: PolicyResource, sourceRank: number, service: string): number | undefined {
  const d = bestSelectorRank(policy.destinations, [{ [SERVICE_TAG]: service }]);
  return d ? sourceRank + rankNumber(d) : undefined;
}

/** Negative when `a` is listed before `b` in an `all` cell. */
function compareAll(kind: string, a: Placed, b: Placed): number {
  if (TARGET_REF.has(kind) && selectsByTargetRef(a.policy) && selectsByTargetRef(b.policy)) {
    return compareByTargetRef(a.policy, b.policy);
  }
  return comparePlaced(a, b);
}

/** Negative when `a` applies before `b`: higher rank, later creation, the name that sorts first. */
function comparePlaced(a: Placed, b: Placed): number {
  if (a.rank !== b.rank) return b.rank - a.rank;
  const byTime = Date.parse(b.policy.creationTime) - Date.parse(a.policy.creationTime);
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime;
  return a.policy.name < b.policy.name ? -1 : a.policy.name > b.policy.name ? 1 : 0;
}

/**
 * What matching reads of a sidecar: its inbounds' tags, its outbounds' services, its gateway's
 * tags and its metrics inbound's tags, in order. Proxies with equal keys match identically
 * (replicas of one workload do), so they share one `SidecarCells`; only the names of their items
 * differ.
 */
export function matchClassKey(networking: Networking, dialled?: readonly string[]): string {
  return JSON.stringify([
    (networking.inbound ?? []).map((ib) => ib.tags),
    proxyInterfaces({ address: '', outbound: networking.outbound }, dialled).outbounds.map((o) => o.service),
    networking.gateway?.tags ?? null,
    // The metrics inbound's tags (its port only names it, per proxy).
    networking.metricsInbound?.tags ?? null,
  ]);
}

/** What one policy write did to a class: the listings that changed, and whether it was placed there at all. */
export interface CellsUpdate {
  listings: Listing[];
  /** The policy is or was placed on this class (its served config may change even if no listing did). */
  touched: boolean;
  /** It is or was placed on an inbound (what callers of those inbounds are served may change). */
  inbound: boolean;
}

/** The cells of every sidecar proxy of one match class (see `matchClassKey`). */
export class SidecarCells {
  readonly interfaces: ProxyInterfaces;
  /** Location (`i<index>`, `o<index>`, `s<service>`, `d`) → cells by kind; empty locations are absent. */
  private readonly cells = new Map<string, LocationCells>();
  /** The services the outbounds' routes reach (the routed kinds' places). */
  private reached: Set<string>;
  private readonly logged: Set<string>;

  constructor(
    readonly networking: Networking,
    readonly dialled?: readonly string[],
    private readonly endpointTags: EndpointTags = NO_ENDPOINTS,
  ) {
    this.interfaces = proxyInterfaces(networking, dialled);
    this.logged = new Set([...this.interfaces.outbounds.map((o) => o.service), PASS_THROUGH_SERVICE]);
    this.reached = this.routedServices();
  }

  /** Where `policy` (of `kind`) attaches on this proxy, with its rank at each place. */
  places(kind: string, policy: PolicyResource): Array<[location: string, rank: number]> {
    const out: Array<[string, number]> = [];
    const { inbounds, outbounds, tagSets } = this.interfaces;
    if (INBOUND_BEST.has(kind)) {
      inbounds.forEach((ib, i) => {
        const r = bestSelectorRank(policy.destinations, [ib.tags]);
        if (r) out.push([`i${i}`, rankNumber(r)]);
      });
      return out;
    }
    if (INBOUND_ALL.has(kind)) {
      let sourceRank = 0;
      for (const { match } of policy.sources ?? [])
        sourceRank = Math.max(sourceRank, rankNumber(rankOf(match)));
      inbounds.forEach((ib, i) => {
        if (bestSelectorRank(policy.destinations, [ib.tags])) out.push([`i${i}`, sourceRank]);
      });
      // A proxyless client applies, per service it dials, the faults its endpoints' inbounds list
      // for it: sources against the client, destinations against those inbounds' tags.
      if (DIALLED.has(kind) && bestSelectorRank(policy.sources, tagSets)) {
        outbounds.forEach((ob, j) => {
          if (!ob.dialled) return;
          const route = (this.cells.get(`o${j}`)?.[ROUTE_KIND] as Placed | undefined)?.policy;
          const reaches = callDestinations(ob.service, route).some((service) =>
            this.endpointTags(service).some((tags) => bestSelectorRank(policy.destinations, [tags])),
          );
          if (reaches) out.push([`o${j}`, sourceRank]);
        });
      }
    }
    if (OUTBOUND.has(kind) || SERVICE.has(kind)) {
      const source = bestSelectorRank(policy.sources, tagSets);
      if (!source) return out;
      const s = rankNumber(source);
      if (OUTBOUND.has(kind)) {
        for (let j = 0; j < outbounds.length; j++) {
          const r = serviceRank(policy, s, outbounds[j].service);
          if (r !== undefined) out.push([`o${j}`, r]);
        }
      } else {
        for (const service of LOGGED.has(kind) ? this.logged : this.reached) {
          const r = serviceRank(policy, s, service);
          if (r !== undefined) out.push([`s${service}`, r]);
        }
      }
      return out;
    }
    if (DATAPLANE_BEST.has(kind) || DATAPLANE_ALL.has(kind)) {
      const r = bestSelectorRank(policy.selectors, tagSets);
      if (r) out.push(['d', rankNumber(r)]);
    } else if (TARGET_REF.has(kind)) {
      const ref = policy.spec?.targetRef;
      if (ref && targetRefListeners(ref, this.networking).length > 0) out.push(['d', 0]);
    }
    return out;
  }

  /** Recomputes every kind from the candidates (a new or changed proxy). */
  recomputeAll(candidates: Candidates): void {
    this.cells.clear();
    this.recomputeKind(ROUTE_KIND, candidates);
    this.reached = this.routedServices();
    for (const kind of SIDECAR_KINDS) if (kind !== ROUTE_KIND) this.recomputeKind(kind, candidates);
  }

  /**
   * Moves one policy of `kind` from its `before` version to its `after` version (either may be
   * undefined: created, deleted). `candidates` already holds `after`. Returns the policies whose
   * listing on this class changed (the reverse index follows them): the policy itself, a best it
   * displaced, and on the slow paths whatever a recomputed kind gained or lost.
   */
  update(
    kind: string,
    before: PolicyResource | undefined,
    after: PolicyResource | undefined,
    candidates: Candidates,
  ): CellsUpdate {
    const was = before ? this.places(kind, before) : [];
    const now = after ? this.places(kind, after) : [];
    if (was.length === 0 && now.length === 0) return { listings: [], touched: false, inbound: false };
    const inbound = [...was, ...now].some(([l]) => l[0] === 'i');
    const name = ((after ?? before) as PolicyResource).name;
    const suspects = new Map<string, boolean>([[name, this.lists(kind, name)]]);
    const locations = new Set<string>();
    for (const [l] of was) locations.add(l);
    for (const [l] of now) locations.add(l);
    const stale: string[] = [];
    for (const location of locations) {
      let rank: number | undefined;
      for (const [l, r] of now) if (l === location) rank = r;
      const placed = rank === undefined || !after ? undefined : { policy: after, rank };
      if (isAll(location, kind)) {
        const list = ((this.cells.get(location)?.[kind] as Placed[] | undefined) ?? []).filter(
          (p) => p.policy.name !== name,
        );
        if (placed) {
          let i = 0;
          while (i < list.length && compareAll(kind, list[i], placed) < 0) i++;
          list.splice(i, 0, placed);
        }
        this.set(location, kind, list.length > 0 ? list : undefined);
        continue;
      }
      const current = this.cells.get(location)?.[kind] as Placed | undefined;
      if (current && current.policy.name === name) {
        // The best changed: still the best if it compares no worse than it did (rank, then creation
        // time: a zone may re-create a policy); otherwise any other may win now.
        if (placed && comparePlaced(placed, current) <= 0) this.set(location, kind, placed);
        else stale.push(location);
      } else if (placed && (!current || comparePlaced(placed, current) < 0)) {
        if (current && !suspects.has(current.policy.name)) suspects.set(current.policy.name, true);
        this.set(location, kind, placed);
      }
    }
    // The slow path: where the policy was the best and fell, the best of the rest, at that place only.
    if (stale.length > 0) {
      const bests = this.bestAt(kind, stale, candidates);
      for (const best of bests) {
        if (best && !suspects.has(best.policy.name))
          suspects.set(best.policy.name, this.lists(kind, best.policy.name));
      }
      stale.forEach((location, i) => this.set(location, kind, bests[i]));
    }
    const changes: Listing[] = [];
    for (const [n, listedBefore] of suspects) {
      const listed = this.lists(kind, n);
      if (listed !== listedBefore) changes.push({ kind, name: n, listed });
    }
    if (kind === ROUTE_KIND) {
      changes.push(...this.refreshRouted(candidates));
      // A dialled outbound's faults are those of the services its route reaches.
      if (this.interfaces.outbounds.some((o) => o.dialled)) changes.push(...this.refreshDialled(candidates));
    }
    return { listings: changes, touched: true, inbound };
  }

  /** The services a call through this class's dialled outbounds may reach (their routes followed). */
  dialledServices(): string[] {
    const services = new Set<string>();
    this.interfaces.outbounds.forEach((ob, j) => {
      if (!ob.dialled) return;
      const route = (this.cells.get(`o${j}`)?.[ROUTE_KIND] as Placed | undefined)?.policy;
      for (const s of callDestinations(ob.service, route)) services.add(s);
    });
    return [...services];
  }

  /** After the endpoints' tag sets of a dialled service changed: its faults placed again. */
  refreshDialled(candidates: Candidates): Listing[] {
    return DIALLED_KINDS.flatMap((kind) => this.recomputeTracked(kind, candidates));
  }

  /** The services this class's traffic reaches: its outbounds' and those their routes send to. */
  reachedServices(): Set<string> {
    return new Set([
      ...this.interfaces.outbounds.map((o) => o.service),
      ...this.reached,
      ...this.dialledServices(),
    ]);
  }

  /** The cells of one location by kind, as the items list them (undefined when none). */
  policiesAt(location: string, kind: string): readonly PolicyResource[] {
    const c = this.cells.get(location)?.[kind];
    if (c === undefined) return [];
    return Array.isArray(c) ? c.map((p) => p.policy) : [c.policy];
  }

  /** True when a policy named `name` of `kind` is in a cell. */
  lists(kind: string, name: string): boolean {
    for (const cells of this.cells.values()) {
      const c = cells[kind];
      if (c === undefined) continue;
      if (Array.isArray(c) ? c.some((p) => p.policy.name === name) : c.policy.name === name) return true;
    }
    return false;
  }

  /** The names of the policies of `kind` in any cell. */
  namesOf(kind: string): Set<string> {
    const names = new Set<string>();
    for (const cells of this.cells.values()) {
      const c = cells[kind];
      if (c === undefined) continue;
      if (Array.isArray(c)) for (const p of c) names.add(p.policy.name);
      else names.add(c.policy.name);
    }
    return names;
  }

  /**
   * The matched-policies items (spec 2.20) of one proxy of the class, exactly as `matchSidecar`
   * gives them; `proxy` names its inbounds and outbounds (the class's own when absent).
   */
  items(proxy: ProxyInterfaces = this.interfaces): SidecarItem[] {
    const { inbounds, outbounds } = proxy;
    const items: SidecarItem[] = [];
    const item = (
      type: SidecarItem['type'],
      name: string,
      service: string,
      location: string,
      kinds: readonly string[],
    ): void => {
      const cells = this.cells.get(location);
      if (!cells) return;
      const matched: Record<string, PolicyResource[]> = {};
      for (const kind of kinds) {
        const c = cells[kind];
        if (c !== undefined) matched[kind] = Array.isArray(c) ? c.map((p) => p.policy) : [c.policy];
      }
      if (Object.keys(matched).length === 0) return;
      items.push({ type, name, service, matchedPolicies: matched });
    };
    const inboundKinds = [...ATTACHMENT_KINDS.inbound.best, ...ATTACHMENT_KINDS.inbound.all];
    inbounds.forEach((ib, i) => item('inbound', ib.name, ib.service, `i${i}`, inboundKinds));
    outbounds.forEach((ob, j) => item('outbound', ob.name, ob.service, `o${j}`, OUTBOUND_ITEM_KINDS));
    for (const location of this.cells.keys()) {
      if (location[0] === 's')
        item('service', location.slice(1), location.slice(1), location, ATTACHMENT_KINDS.service);
    }
    item('dataplane', '', '', 'd', [
      ...ATTACHMENT_KINDS.dataplane.best,
      ...ATTACHMENT_KINDS.dataplane.all,
      ...TARGET_REF_POLICY_KINDS,
    ]);
    return items.sort((a, b) => cmp(a.type, b.type) || cmp(a.name, b.name));
  }

  /** Where the policy `name` of `kind` is listed on `proxy`: the attachments of the affected-proxies view. */
  attachmentsOf(
    kind: string,
    name: string,
    proxy: ProxyInterfaces = this.interfaces,
  ): Array<{ type: SidecarItem['type']; name: string; service: string }> {
    const out: Array<{ type: SidecarItem['type']; name: string; service: string }> = [];
    for (const [location, cells] of this.cells) {
      const c = cells[kind];
      if (c === undefined) continue;
      if (!(Array.isArray(c) ? c.some((p) => p.policy.name === name) : c.policy.name === name)) continue;
      const at = location[0];
      if (at === 'd') out.push({ type: 'dataplane', name: '', service: '' });
      else if (at === 's') out.push({ type: 'service', name: location.slice(1), service: location.slice(1) });
      else {
        const i = (at === 'i' ? proxy.inbounds : proxy.outbounds)[Number(location.slice(1))];
        out.push({ type: at === 'i' ? 'inbound' : 'outbound', name: i.name, service: i.service });
      }
    }
    // The order of the matched-policies items: by type, then name (stable for equal names).
    return out.sort((x, y) => cmp(x.type, y.type) || cmp(x.name, y.name));
  }

  private set(location: string, kind: string, value: Placed | Placed[] | undefined): void {
    let cells = this.cells.get(location);
    if (value === undefined) {
      if (!cells) return;
      delete cells[kind];
      if (Object.keys(cells).length === 0) this.cells.delete(location);
      return;
    }
    if (!cells) this.cells.set(location, (cells = {}));
    cells[kind] = value;
  }

  /** Clears `kind` from every cell and places every candidate of it again. */
  private recomputeKind(kind: string, candidates: Candidates): void {
    for (const location of [...this.cells.keys()]) this.set(location, kind, undefined);
    for (const policy of candidates.get(kind)?.values() ?? []) {
      for (const [location, rank] of this.places(kind, policy)) {
        const placed = { policy, rank };
        if (isAll(location, kind)) {
          const list = (this.cells.get(location)?.[kind] as Placed[] | undefined) ?? [];
          list.push(placed);
          this.set(location, kind, list);
        } else {
          const current = this.cells.get(location)?.[kind] as Placed | undefined;
          if (!current || comparePlaced(placed, current) < 0) this.set(location, kind, placed);
        }
      }
    }
    for (const cells of this.cells.values()) {
      const c = cells[kind];
      if (Array.isArray(c)) c.sort((a, b) => compareAll(kind, a, b));
    }
  }

  /** The best candidate of `kind` at each of some `best` locations (sources ranked once per candidate). */
  private bestAt(
    kind: string,
    locations: readonly string[],
    candidates: Candidates,
  ): Array<Placed | undefined> {
    const { inbounds, outbounds, tagSets } = this.interfaces;
    const best: Array<Placed | undefined> = locations.map(() => undefined);
    for (const policy of candidates.get(kind)?.values() ?? []) {
      let source: number | undefined | null = null;
      for (let i = 0; i < locations.length; i++) {
        const location = locations[i];
        const at = location[0];
        let rank: number | undefined;
        if (at === 'i') {
          const r = bestSelectorRank(policy.destinations, [inbounds[Number(location.slice(1))].tags]);
          rank = r && rankNumber(r);
        } else if (at === 'd') {
          const r = bestSelectorRank(policy.selectors, tagSets);
          rank = r && rankNumber(r);
        } else {
          if (source === null) {
            const r = bestSelectorRank(policy.sources, tagSets);
            source = r && rankNumber(r);
          }
          if (source === undefined) break;
          const service = at === 'o' ? outbounds[Number(location.slice(1))].service : location.slice(1);
          rank = serviceRank(policy, source, service);
        }
        if (rank === undefined) continue;
        const placed = { policy, rank };
        const current = best[i];
        if (!current || comparePlaced(placed, current) < 0) best[i] = placed;
      }
    }
    return best;
  }

  /** Recomputes `kind` and returns the listing changes. */
  private recomputeTracked(kind: string, candidates: Candidates): Listing[] {
    const before = this.namesOf(kind);
    this.recomputeKind(kind, candidates);
    const after = this.namesOf(kind);
    const changes: Listing[] = [];
    for (const n of before) if (!after.has(n)) changes.push({ kind, name: n, listed: false });
    for (const n of after) if (!before.has(n)) changes.push({ kind, name: n, listed: true });
    return changes;
  }

  /** After a route change: the routed kinds follow the services the routes now reach. */
  private refreshRouted(candidates: Candidates): Listing[] {
    const reached = this.routedServices();
    if (reached.size === this.reached.size && [...reached].every((s) => this.reached.has(s))) return [];
    this.reached = reached;
    return ROUTED_KINDS.flatMap((kind) => this.recomputeTracked(kind, candidates));
  }

  private routedServices(): Set<string> {
    const reached = new Set<string>();
    this.interfaces.outbounds.forEach((ob, j) => {
      const route = this.cells.get(`o${j}`)?.[ROUTE_KIND] as Placed | undefined;
      for (const s of routeDestinations(ob.service, route?.policy)) reached.add(s);
    });
    return reached;
  }
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
