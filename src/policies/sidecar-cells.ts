/**
 * The matches of one sidecar proxy kept as cells, so that a policy write updates them without
 * matching the proxy again (the incremental half of the policy engine; `matchSidecar` is the whole
 * computation and the definition these cells must always agree with).
 *
 * A cell is one place a kind attaches (an inbound by index, an outbound by index, a service, the
 * proxy) and one kind. Each holds every policy that matches there with its rank, in the order they
 * apply; an `all` cell lists them all, a `best` cell only the first, and keeps the others so that
 * when the best falls the next one is at hand (no candidate is matched again). When one policy
 * changes, only its own places move: at each, its old version leaves the sorted list and its new
 * one goes in at its rank.
 * A TrafficRoute that changes where an outbound's traffic goes changes the services that
 * HealthCheck, CircuitBreaker and Retry attach to: those three kinds are then recomputed for the proxy.
 *
 * Ranks are numbers here (policy-facts.ts): tags × 2^16 + exact values, so a pair's rank is the sum
 * of its ranks and comparing is `-` (decisions §10: more tags, then more exact values).
 */
import {
  ATTACHMENT_KINDS,
  DIALLED_KINDS,
  PASS_THROUGH_SERVICE,
  TARGET_REF_POLICY_KINDS,
  type SidecarItem,
} from './match-sidecar.js';
import {
  bestRank,
  NO_MATCH,
  placedIn,
  policyFacts,
  rankFor,
  serviceRank,
  type Placed,
  type PolicyFacts,
} from './policy-facts.js';
import { LOGGED_KINDS, ROUTE_KIND, ROUTED_KINDS, SIDECAR_ATTACHED_KINDS } from './kind-sets.js';
import { selectsByTargetRef, type PolicyResource } from './policy-resource.js';
import { proxyInterfaces, type Networking, type ProxyInterfaces } from './proxy-interfaces.js';
import { callDestinations, routeDestinations } from './route-destinations.js';
import { compareByTargetRef, targetRefListeners } from './target-ref-match.js';
import { locationIndex, locationPlace, locationService, type LocationPlace } from '../resources/keys.js';

/**
 * The cells of one kind, by slot: every policy that matches there, in the order they apply (empty
 * cells are holes). A class numbers its places: its inbounds, its outbounds, the proxy itself, then
 * the services as they are met.
 */
type KindCells = Array<Placed[] | undefined>;

/** Where a policy attaches on a class, flat: a slot, its rank there, the next slot, its rank, … */
type Places = number[];

/** One policy's move through the cells of its kind in `SidecarCells.update`. */
interface Moving {
  info: KindInfo;
  name: string;
  cells: KindCells;
  /** Whether the policy was listed at a place it left or kept, and whether it is listed at a place it holds now. */
  wasListed: boolean;
  isListed: boolean;
  /**
   * The other policies a `best` cell stopped or started listing (few: kept in arrays), each with
   * whether it was listed before, and whether it is now (true when a cell started listing it;
   * otherwise read at the end).
   */
  others: string[];
  othersWere: boolean[];
  othersAre: boolean[];
}

/** True when no slot has a cell. */
function isEmpty(cells: KindCells): boolean {
  for (let slot = 0; slot < cells.length; slot++) if (cells[slot] !== undefined) return false;
  return true;
}

/** True when `places` has `slot`. */
function hasPlace(places: Places, slot: number): boolean {
  for (let k = 0; k < places.length; k += 2) if (places[k] === slot) return true;
  return false;
}

/** A policy that became listed on a class, or stopped being listed. */
export interface Listing {
  kind: string;
  name: string;
  listed: boolean;
}

/** Candidate policies of one mesh by kind and name, as the view keeps them. */
export type Candidates = ReadonlyMap<string, ReadonlyMap<string, PolicyResource>>;

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

const NO_PLACES: Places = [];

const NO_NAMES: ReadonlySet<string> = new Set();

/** The kinds an outbound item lists, in order: those of every outbound, then those of dialled ones. */
const OUTBOUND_ITEM_KINDS = [...ATTACHMENT_KINDS.outbound, ...DIALLED_KINDS];

export { ROUTED_KINDS };

/** Every kind a sidecar's cells hold, the router first (the routed kinds' places depend on it). */
export const SIDECAR_KINDS: readonly string[] = [
  ROUTE_KIND,
  ...SIDECAR_ATTACHED_KINDS.filter((k) => k !== ROUTE_KIND),
];

const isAll = (place: Place, kind: string): boolean =>
  place === 'i'
    ? INBOUND_ALL.has(kind)
    : place === 'o'
      ? DIALLED.has(kind)
      : place === 'd' && (DATAPLANE_ALL.has(kind) || TARGET_REF.has(kind));

/** Negative when `a` applies before `b` among targetRef policies (`compareByTargetRef`). */
const compareTargetRefs = (a: Placed, b: Placed): number =>
  selectsByTargetRef(a.policy) && selectsByTargetRef(b.policy) ? compareByTargetRef(a.policy, b.policy) : 0;

/** Negative when `a` is listed before `b` in a cell of `kind`. */
const orderOf = (kind: string): ((a: Placed, b: Placed) => number) =>
  TARGET_REF.has(kind) ? compareTargetRefs : comparePlaced;

/** A place of a class, the first letter of its locations: `i` an inbound, `o` an outbound, `d` the proxy, `s` a service. */
type Place = LocationPlace;

/** What the cells of one sidecar kind go by, derived once per kind from the declarations above. */
interface KindInfo {
  /** Its index in `SIDECAR_KINDS`: where a class keeps its cells of the kind. */
  index: number;
  /** Whether its cells list every match (else the first) at each place. */
  all: Readonly<Record<Place, boolean>>;
  /** The order of its cells. */
  order: (a: Placed, b: Placed) => number;
}

const KINDS: ReadonlyMap<string, KindInfo> = new Map(
  SIDECAR_KINDS.map((kind, index) => [
    kind,
    {
      index,
      all: { i: isAll('i', kind), o: isAll('o', kind), d: isAll('d', kind), s: isAll('s', kind) },
      order: orderOf(kind),
    },
  ]),
);

/** Negative when `a` applies before `b`: higher rank, later creation, the name that sorts first. */
function comparePlaced(a: Placed, b: Placed): number {
  if (a.rank !== b.rank) return b.rank - a.rank;
  const byTime = b.time - a.time;
  if (byTime !== 0 && !Number.isNaN(byTime)) return byTime;
  return a.policy.name < b.policy.name ? -1 : a.policy.name > b.policy.name ? 1 : 0;
}

/** Inserts `placed` into `list`, sorted by `compare`, after every entry that comes before it. */
function insertSorted(list: Placed[], placed: Placed, compare: (a: Placed, b: Placed) => number): void {
  let lo = 0;
  let hi = list.length;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (compare(list[mid], placed) < 0) lo = mid + 1;
    else hi = mid;
  }
  // By hand rather than with `splice`, which makes an array of what it removes (here none).
  list.push(placed);
  for (let k = list.length - 1; k > lo; k--) list[k] = list[k - 1];
  list[lo] = placed;
}

/** Removes the entry at `index` of `list`. */
function removeAt(list: Placed[], index: number): void {
  for (let k = index; k < list.length - 1; k++) list[k] = list[k + 1];
  list.pop();
}

/**
 * Buffers `placeAll` reuses (written by index: a buffer emptied by its length is reallocated as it
 * fills again): the places of one kind's policies, and what is placed at each.
 */
const PLACES: Places = [];
const FOUND: Array<Placed | undefined> = [];

/**
 * Sorts `list` and keeps each entry once (a policy placed twice at one rank is one object, so its
 * copies end up side by side).
 */
function sortOnce(list: Placed[], order: (a: Placed, b: Placed) => number): void {
  // Most lists are short: an insertion sort here costs less than the builtin's calls to `order`.
  if (list.length > 16) list.sort(order);
  else {
    for (let k = 1; k < list.length; k++) {
      const p = list[k];
      let j = k;
      for (; j > 0 && order(list[j - 1], p) > 0; j--) list[j] = list[j - 1];
      list[j] = p;
    }
  }
  let n = 0;
  for (let k = 0; k < list.length; k++) if (k === 0 || list[k] !== list[k - 1]) list[n++] = list[k];
  list.length = n;
}

/** The index of the entry of the policy `name` in `list`, -1 when it has none. */
function indexOfNamed(list: readonly Placed[], name: string): number {
  for (let i = 0; i < list.length; i++) if (list[i].policy.name === name) return i;
  return -1;
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
/** What changed at one attachment of a proxy for one policy kind (`SidecarCells.diffKinds`). */
export interface SlotDiff {
  type: SidecarItem['type'];
  name: string;
  service: string;
  policyKind: string;
  /** Listed after and not before. */
  added: string[];
  /** Listed before and not after. */
  removed: string[];
  /** Listed before and after, in another version. */
  replaced: string[];
}

export class SidecarCells {
  readonly interfaces: ProxyInterfaces;
  /** Each kind's cells by slot, in `SIDECAR_KINDS` order; undefined for a kind without cells. */
  private readonly cells: Array<KindCells | undefined> = [];
  /** The services the outbounds' routes reach (the routed kinds' places), also as a list to walk. */
  private reached: Set<string>;
  private reachedList: readonly string[];
  /** The services the logged kinds attach to, as a list to walk. */
  private readonly logged: readonly string[];
  /** The first outbound's slot (inbounds come first), and the proxy's (after the outbounds). */
  private readonly outboundSlot: number;
  private readonly proxySlot: number;
  /** What placing reads of the interfaces, at hand: the inbounds' tags, the outbounds' services, the tag sets. */
  private readonly inboundTags: ReadonlyArray<Readonly<Record<string, string>>>;
  private readonly outboundServices: readonly string[];
  private readonly tagSets: ReadonlyArray<Readonly<Record<string, string>>>;
  /** The slots of the services met so far, and the services of those slots in order. */
  private readonly serviceSlots = new Map<string, number>();
  private readonly slotServices: string[] = [];

  constructor(
    readonly networking: Networking,
    readonly dialled?: readonly string[],
    private readonly endpointTags: EndpointTags = NO_ENDPOINTS,
  ) {
    this.interfaces = proxyInterfaces(networking, dialled);
    this.outboundSlot = this.interfaces.inbounds.length;
    this.proxySlot = this.outboundSlot + this.interfaces.outbounds.length;
    this.inboundTags = this.interfaces.inbounds.map((ib) => ib.tags);
    this.outboundServices = this.interfaces.outbounds.map((ob) => ob.service);
    this.tagSets = this.interfaces.tagSets;
    this.logged = [...new Set([...this.interfaces.outbounds.map((o) => o.service), PASS_THROUGH_SERVICE])];
    this.reached = this.routedServices();
    this.reachedList = [...this.reached];
  }

  /**
   * A copy whose cells can be changed without changing these (what a change would do, seen before it
   * is made): its own cell lists and service slots, the interfaces and endpoints shared. With
   * `kinds`, only those kinds' cells are its own and the rest is shared: enough for updates of those
   * kinds other than the router's (an update of a kind writes only that kind's cells; a route also
   * moves the routed kinds and the service slots).
   */
  clone(kinds?: ReadonlySet<string>): SidecarCells {
    const c = Object.create(SidecarCells.prototype) as SidecarCells;
    Object.assign(c, this);
    const copy = c as unknown as {
      cells: Array<KindCells | undefined>;
      reached: Set<string>;
      serviceSlots: Map<string, number>;
      slotServices: string[];
    };
    if (kinds) {
      copy.cells = this.cells.slice();
      for (const kind of kinds) {
        const info = KINDS.get(kind);
        if (info) copy.cells[info.index] = this.cells[info.index]?.map((list) => list?.slice());
      }
      return c;
    }
    copy.cells = this.cells.map((kind) => kind?.map((list) => list?.slice()));
    copy.reached = new Set(this.reached);
    copy.serviceSlots = new Map(this.serviceSlots);
    copy.slotServices = [...this.slotServices];
    return c;
  }

  /**
   * A copy where `policy` (of `kind`) stands in for the version of it these cells hold, at the same
   * places and ranks: for a new version that selects what the old one did (it differs in what it
   * sets only), so it is placed exactly where the old one is.
   */
  withPolicy(kind: string, policy: PolicyResource): SidecarCells {
    const copy = this.clone(new Set([kind]));
    copy.swapPolicy(kind, policy);
    return copy;
  }

  /**
   * {@link withPolicy} in place: only on a copy whose cells of `kind` are its own. Each cell takes
   * the old version out and puts the new one in at its rank, as an update does: among targetRef
   * policies that rank alike, the one written goes first.
   */
  swapPolicy(kind: string, policy: PolicyResource): void {
    const info = KINDS.get(kind) as KindInfo;
    this.cells[info.index]?.forEach((list) => {
      if (!list) return;
      const i = indexOfNamed(list, policy.name);
      if (i < 0) return;
      const placed = { ...list[i], policy };
      removeAt(list, i);
      insertSorted(list, placed, info.order);
    });
  }

  /**
   * True when a new version placed where the old one is leaves every cell of `kind` listing the
   * same policies: their order is total (rank, time, then name), so the new version takes the old
   * one's place, or its cells list every match.
   */
  static listingKept(kind: string): boolean {
    const info = KINDS.get(kind);
    if (!info) return false;
    // targetRef kinds are listed on the proxy as a whole only.
    return info.order === comparePlaced || (TARGET_REF.has(kind) && info.all.d);
  }

  /**
   * True when two versions of a policy of `kind` are placed at the same slots with the same ranks
   * and creation time here: the cells list the new one exactly where they list the old one.
   */
  samePlaces(kind: string, before: PolicyResource, after: PolicyResource): boolean {
    if (policyFacts(before).time !== policyFacts(after).time) return false;
    const was = this.places(kind, before);
    const now = this.places(kind, after);
    return was.length === now.length && was.every((x, i) => x === now[i]);
  }

  /**
   * Where the listings of `kinds` differ between these cells and `after` (a `clone(kinds)` changed
   * by updates of those kinds, so with the same slots): per attachment and kind, the policies listed
   * after and not before, before and not after, and in both in another version. As `diffItems` of
   * the two `items` lists, without making them.
   */
  diffKinds(
    after: SidecarCells,
    kinds: ReadonlySet<string>,
    proxy: ProxyInterfaces = this.interfaces,
  ): SlotDiff[] {
    const out: SlotDiff[] = [];
    for (const kind of kinds) {
      const info = KINDS.get(kind);
      if (!info) continue;
      const was = this.cells[info.index];
      const now = after.cells[info.index];
      if (was === now) continue;
      const slots = Math.max(was?.length ?? 0, now?.length ?? 0);
      for (let slot = 0; slot < slots; slot++) {
        if (was?.[slot] === undefined && now?.[slot] === undefined) continue;
        const b = this.listedAt(slot, kind);
        const a = after.listedAt(slot, kind);
        if (a.length === b.length && a.every((p, i) => p === b[i])) continue;
        const added: string[] = [];
        const removed: string[] = [];
        const replaced: string[] = [];
        // Lists are short (most cells list one policy): looked up by scanning.
        for (const p of a) {
          const q = b.find((x) => x.name === p.name);
          if (!q) added.push(p.name);
          else if (q !== p) replaced.push(p.name);
        }
        for (const q of b) if (!a.some((p) => p.name === q.name)) removed.push(q.name);
        if (added.length + removed.length + replaced.length === 0) continue;
        const { type, name, service } = this.attachmentAt(slot, proxy);
        out.push({ type, name, service, policyKind: kind, added, removed, replaced });
      }
    }
    return out;
  }

  /** The attachment a slot stands for on `proxy`. */
  private attachmentAt(slot: number, proxy: ProxyInterfaces): Pick<SlotDiff, 'type' | 'name' | 'service'> {
    const at = this.placeOf(slot);
    if (at === 'd') return { type: 'dataplane', name: '', service: '' };
    if (at === 's') {
      const service = this.slotServices[slot - this.proxySlot - 1];
      return { type: 'service', name: service, service };
    }
    if (at === 'i')
      return { type: 'inbound', name: proxy.inbounds[slot].name, service: proxy.inbounds[slot].service };
    const ob = proxy.outbounds[slot - this.outboundSlot];
    return { type: 'outbound', name: ob.name, service: ob.service };
  }

  /** Where `policy` (of `kind`) attaches on this proxy, with its rank at each place (flat: slot, rank, …). */
  places(kind: string, policy: PolicyResource): Places {
    const out: Places = [];
    this.placesOf(kind, policy, policyFacts(policy), out, 0);
    return out;
  }

  /**
   * `places`, with the policy's facts at hand, written into `out` from index `n` on (what is there
   * beyond is left as it is: `out` may be a buffer reused); returns the index after the last.
   */
  private placesOf(kind: string, policy: PolicyResource, facts: PolicyFacts, out: Places, n: number): number {
    const { inboundTags, outboundServices, tagSets } = this;
    if (INBOUND_BEST.has(kind)) {
      for (let i = 0; i < inboundTags.length; i++) {
        const r = rankFor(facts.destinations, inboundTags[i]);
        if (r !== NO_MATCH) {
          out[n++] = i;
          out[n++] = r;
        }
      }
      return n;
    }
    if (INBOUND_ALL.has(kind)) {
      const sourceRank = facts.sourceOrder;
      for (let i = 0; i < inboundTags.length; i++) {
        if (rankFor(facts.destinations, inboundTags[i]) !== NO_MATCH) {
          out[n++] = i;
          out[n++] = sourceRank;
        }
      }
      // A proxyless client applies, per service it dials, the faults its endpoints' inbounds list
      // for it: sources against the client, destinations against those inbounds' tags.
      if (DIALLED.has(kind) && bestRank(facts.sources, tagSets) !== NO_MATCH) {
        for (let j = 0; j < outboundServices.length; j++) {
          if (this.interfaces.outbounds[j].dialled && this.dialledReaches(j, facts)) {
            out[n++] = this.outboundSlot + j;
            out[n++] = sourceRank;
          }
        }
      }
    }
    if (OUTBOUND.has(kind) || SERVICE.has(kind)) {
      const s = bestRank(facts.sources, tagSets);
      if (s === NO_MATCH) return n;
      if (OUTBOUND.has(kind)) {
        for (let j = 0; j < outboundServices.length; j++) {
          const r = serviceRank(facts.destinations, outboundServices[j]);
          if (r !== NO_MATCH) {
            out[n++] = this.outboundSlot + j;
            out[n++] = s + r;
          }
        }
      } else {
        for (const service of LOGGED.has(kind) ? this.logged : this.reachedList) {
          const r = serviceRank(facts.destinations, service);
          if (r !== NO_MATCH) {
            out[n++] = this.serviceSlot(service);
            out[n++] = s + r;
          }
        }
      }
      return n;
    }
    if (DATAPLANE_BEST.has(kind) || DATAPLANE_ALL.has(kind)) {
      const r = bestRank(facts.selectors, tagSets);
      if (r !== NO_MATCH) {
        out[n++] = this.proxySlot;
        out[n++] = r;
      }
    } else if (TARGET_REF.has(kind)) {
      const ref = policy.spec?.targetRef;
      if (ref && targetRefListeners(ref, this.networking).length > 0) {
        out[n++] = this.proxySlot;
        out[n++] = 0;
      }
    }
    return n;
  }

  /** True when a call through dialled outbound `j` may reach an endpoint inbound the destinations match. */
  private dialledReaches(j: number, facts: PolicyFacts): boolean {
    return callDestinations(this.interfaces.outbounds[j].service, this.routeAt(j)).some(
      (service) => bestRank(facts.destinations, this.endpointTags(service)) !== NO_MATCH,
    );
  }

  /** Recomputes every kind from the candidates (a new or changed proxy). */
  recomputeAll(candidates: Candidates): void {
    this.recomputeFrom((kind) => candidates.get(kind)?.values());
  }

  /** Recomputes every kind from the policies `of` gives for it (a policy given more than once counts once). */
  recomputeFrom(of: (kind: string) => Iterable<PolicyResource> | undefined): void {
    this.cells.length = 0;
    this.placeAll(ROUTE_KIND, of(ROUTE_KIND));
    this.reached = this.routedServices();
    this.reachedList = [...this.reached];
    for (const kind of SIDECAR_KINDS) if (kind !== ROUTE_KIND) this.placeAll(kind, of(kind));
  }

  /**
   * Moves one policy of `kind` from its `before` version to its `after` version (either may be
   * undefined: created, deleted). `candidates` already holds `after`. Returns the policies whose
   * listing on this class changed (the reverse index follows them): the policy itself, a best it
   * displaced or that it no longer hides, and on the slow paths whatever a recomputed kind gained or
   * lost.
   */
  update(
    kind: string,
    before: PolicyResource | undefined,
    after: PolicyResource | undefined,
    candidates: Candidates,
  ): CellsUpdate {
    const was = before ? this.places(kind, before) : NO_PLACES;
    const now = after ? this.places(kind, after) : NO_PLACES;
    if (was.length === 0 && now.length === 0) return { listings: [], touched: false, inbound: false };
    const facts = after && policyFacts(after);
    const info = KINDS.get(kind) as KindInfo;
    let cells = this.cells[info.index];
    if (!cells) this.cells[info.index] = cells = [];
    // The policy is in cells of its kind at its places only (where it was, where it is now): whether
    // it was and is listed is read there.
    const moving: Moving = {
      info,
      name: ((after ?? before) as PolicyResource).name,
      cells,
      wasListed: false,
      isListed: false,
      others: [],
      othersWere: [],
      othersAre: [],
    };
    let inbound = false;
    for (let k = 0; k < was.length; k += 2) {
      inbound ||= was[k] < this.outboundSlot;
      if (!hasPlace(now, was[k])) this.move(moving, was[k], true, undefined);
    }
    for (let k = 0; k < now.length; k += 2) {
      inbound ||= now[k] < this.outboundSlot;
      const placed = placedIn(facts as PolicyFacts, after as PolicyResource, now[k + 1]);
      this.move(moving, now[k], hasPlace(was, now[k]), placed);
    }
    if (isEmpty(cells)) this.cells[info.index] = undefined;
    const changes: Listing[] = [];
    if (moving.wasListed !== moving.isListed)
      changes.push({ kind, name: moving.name, listed: moving.isListed });
    for (let i = 0; i < moving.others.length; i++) {
      const listed = moving.othersAre[i] || this.listedElsewhere(info, moving.others[i], -1);
      if (listed !== moving.othersWere[i]) changes.push({ kind, name: moving.others[i], listed });
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
      for (const s of callDestinations(ob.service, this.routeAt(j))) services.add(s);
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

  /**
   * The policies one cell lists, in order (empty when none); `location` is made by
   * `inboundLocation`, `outboundLocation`, `serviceLocation` or is `PROXY_LOCATION` (resources/keys.ts).
   */
  policiesAt(location: string, kind: string): readonly PolicyResource[] {
    const slot = this.slotOf(location);
    return slot === undefined ? [] : this.listedAt(slot, kind);
  }

  /** True when a policy named `name` of `kind` is listed in a cell. */
  lists(kind: string, name: string): boolean {
    const info = KINDS.get(kind);
    return info !== undefined && this.listedElsewhere(info, name, -1);
  }

  /** Calls `fn` with the name of each policy of `kind` a cell lists (a policy listed in several cells, once per cell). */
  eachListed(kind: string, fn: (name: string) => void): void {
    const info = KINDS.get(kind);
    if (!info) return;
    const cells = this.cells[info.index];
    if (!cells) return;
    for (let slot = 0; slot < cells.length; slot++) {
      const c = cells[slot];
      if (c === undefined) continue;
      if (this.allAt(info, slot)) for (const p of c) fn(p.policy.name);
      else fn(c[0].policy.name);
    }
  }

  /** The names of the policies of `kind` listed in any cell. */
  namesOf(kind: string): ReadonlySet<string> {
    const info = KINDS.get(kind);
    const cells = info && this.cells[info.index];
    if (!info || !cells) return NO_NAMES;
    const names = new Set<string>();
    cells.forEach((c, slot) => {
      if (c === undefined) return;
      if (this.allAt(info, slot)) for (const p of c) names.add(p.policy.name);
      else names.add(c[0].policy.name);
    });
    return names;
  }

  /**
   * The matched-policies items (spec 2.20) of one proxy of the class, exactly as `matchSidecar`
   * gives them; `proxy` names its inbounds and outbounds (the class's own when absent); `only`:
   * these kinds alone (an item without any of them is left out).
   */
  items(proxy: ProxyInterfaces = this.interfaces, only?: ReadonlySet<string>): SidecarItem[] {
    const { inbounds, outbounds } = proxy;
    const items: SidecarItem[] = [];
    const item = (
      type: SidecarItem['type'],
      name: string,
      service: string,
      slot: number,
      kinds: readonly string[],
    ): void => {
      const matched: Record<string, PolicyResource[]> = {};
      for (const kind of kinds) {
        if (only !== undefined && !only.has(kind)) continue;
        const listed = this.listedAt(slot, kind);
        if (listed.length > 0) matched[kind] = listed;
      }
      if (Object.keys(matched).length === 0) return;
      items.push({ type, name, service, matchedPolicies: matched });
    };
    const inboundKinds = [...ATTACHMENT_KINDS.inbound.best, ...ATTACHMENT_KINDS.inbound.all];
    inbounds.forEach((ib, i) => item('inbound', ib.name, ib.service, i, inboundKinds));
    outbounds.forEach((ob, j) =>
      item('outbound', ob.name, ob.service, this.outboundSlot + j, OUTBOUND_ITEM_KINDS),
    );
    for (const [service, slot] of this.serviceSlots) {
      item('service', service, service, slot, ATTACHMENT_KINDS.service);
    }
    item('dataplane', '', '', this.proxySlot, [
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
    const info = KINDS.get(kind);
    if (!info) return out;
    this.cells[info.index]?.forEach((c, slot) => {
      if (c !== undefined && listedIn(c, this.allAt(info, slot), name))
        out.push(this.attachmentAt(slot, proxy));
    });
    // The order of the matched-policies items: by type, then name (stable for equal names).
    return out.sort((x, y) => cmp(x.type, y.type) || cmp(x.name, y.name));
  }

  private kindCells(kind: string): KindCells | undefined {
    const info = KINDS.get(kind);
    return info && this.cells[info.index];
  }

  /** Whether the cell of a kind at `slot` lists every match (else the first). */
  private allAt(info: KindInfo, slot: number): boolean {
    if (slot < this.outboundSlot) return info.all.i;
    if (slot < this.proxySlot) return info.all.o;
    return slot === this.proxySlot ? info.all.d : info.all.s;
  }

  /** What kind of place a slot is: `i` an inbound, `o` an outbound, `d` the proxy, `s` a service. */
  private placeOf(slot: number): Place {
    if (slot < this.outboundSlot) return 'i';
    if (slot < this.proxySlot) return 'o';
    return slot === this.proxySlot ? 'd' : 's';
  }

  /** The slot of a location, if the class has it. */
  private slotOf(location: string): number | undefined {
    const at = locationPlace(location);
    if (at === undefined) return undefined;
    if (at === 'd') return this.proxySlot;
    if (at === 's') return this.serviceSlots.get(locationService(location));
    const index = locationIndex(location);
    if (index === undefined) return undefined;
    if (at === 'i') return index < this.outboundSlot ? index : undefined;
    return index < this.proxySlot - this.outboundSlot ? this.outboundSlot + index : undefined;
  }

  /** The policies the cell of `kind` at `slot` lists, in order. */
  private listedAt(slot: number, kind: string): PolicyResource[] {
    const info = KINDS.get(kind);
    const c = info && this.cells[info.index]?.[slot];
    if (!info || c === undefined) return [];
    return this.allAt(info, slot) ? c.map((p) => p.policy) : [c[0].policy];
  }

  /** True when a policy named `name` of `kind` is listed in a cell of another slot than `except`. */
  private listedElsewhere(info: KindInfo, name: string, except: number): boolean {
    const cells = this.cells[info.index];
    if (!cells) return false;
    for (let slot = 0; slot < cells.length; slot++) {
      const c = cells[slot];
      if (c !== undefined && slot !== except && listedIn(c, this.allAt(info, slot), name)) return true;
    }
    return false;
  }

  /**
   * At one slot, takes the moving policy out of its cell (if it was `there`) and puts `placed` (its
   * new version, if it matches there) in at its rank; notes whether the policy was listed there
   * before and is after, and which other policies a `best` cell stopped or started listing.
   */
  private move(moving: Moving, slot: number, there: boolean, placed: Placed | undefined): void {
    const { info, name, cells } = moving;
    const all = this.allAt(info, slot);
    const list = cells[slot] ?? [];
    const head = list[0] as Placed | undefined;
    const i = there ? indexOfNamed(list, name) : -1;
    if (i >= 0) {
      moving.wasListed ||= all || i === 0;
      removeAt(list, i);
    }
    if (placed) insertSorted(list, placed, info.order);
    cells[slot] = list.length > 0 ? list : undefined;
    const first = list[0] as Placed | undefined;
    moving.isListed ||= placed !== undefined && (all || first === placed);
    if (all || head?.policy.name === first?.policy.name) return;
    // A best cell lists another policy now: the one it listed may be listed nowhere else, the one it
    // lists now was perhaps listed nowhere (until now, nothing this update moved was either's).
    if (head && head.policy.name !== name) this.other(moving, head.policy.name, slot, false);
    if (first && first.policy.name !== name) this.other(moving, first.policy.name, slot, true);
  }

  /** Notes a policy the best cell at `slot` stopped listing, or started listing (`rose`). */
  private other(moving: Moving, name: string, slot: number, rose: boolean): void {
    const { others } = moving;
    let i = others.indexOf(name);
    if (i < 0) {
      i = others.push(name) - 1;
      // Until now nothing this update moved was this policy's: it was listed before if it was
      // here (it fell), else if it is listed in another cell.
      moving.othersWere[i] = !rose || this.listedElsewhere(moving.info, name, slot);
      moving.othersAre[i] = false;
    }
    if (rose) moving.othersAre[i] = true;
  }

  /** Clears `kind` from every cell and places every candidate of it again. */
  private recomputeKind(kind: string, candidates: Candidates): void {
    this.cells[(KINDS.get(kind) as KindInfo).index] = undefined;
    this.placeAll(kind, candidates.get(kind)?.values());
  }

  /** Places `policies` of `kind` in its cells, which hold none yet (a policy given more than once counts once). */
  private placeAll(kind: string, policies: Iterable<PolicyResource> | undefined): void {
    if (!policies) return;
    // Every placement first (its slot and rank in PLACES, the placed policy in FOUND), and how many
    // each slot gets: each cell's list is then made at its size.
    let n = 0;
    let f = 0;
    const sizes: number[] = [];
    for (const policy of policies) {
      const facts = policyFacts(policy);
      const from = n;
      n = this.placesOf(kind, policy, facts, PLACES, n);
      for (let k = from; k < n; k += 2) {
        FOUND[f++] = placedIn(facts, policy, PLACES[k + 1]);
        sizes[PLACES[k]] = (sizes[PLACES[k]] ?? 0) + 1;
      }
    }
    if (f === 0) return;
    const cells: KindCells = [];
    for (let k = 0; k < f; k++) {
      const slot = PLACES[2 * k];
      const list = (cells[slot] ??= new Array<Placed>(sizes[slot]));
      list[--sizes[slot]] = FOUND[k] as Placed;
    }
    FOUND.fill(undefined, 0, f);
    const { index, order } = KINDS.get(kind) as KindInfo;
    for (const list of cells) if (list) sortOnce(list, order);
    this.cells[index] = cells;
  }

  /** The policy of the route that outbound `j` lists, if any. */
  private routeAt(j: number): PolicyResource | undefined {
    return this.kindCells(ROUTE_KIND)?.[this.outboundSlot + j]?.[0]?.policy;
  }

  /** The slot of a service's cells (a new one for a service met for the first time). */
  private serviceSlot(service: string): number {
    let slot = this.serviceSlots.get(service);
    if (slot === undefined) {
      slot = this.proxySlot + 1 + this.slotServices.length;
      this.serviceSlots.set(service, slot);
      this.slotServices.push(service);
    }
    return slot;
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
    this.reachedList = [...reached];
    return ROUTED_KINDS.flatMap((kind) => this.recomputeTracked(kind, candidates));
  }

  private routedServices(): Set<string> {
    const reached = new Set<string>();
    this.interfaces.outbounds.forEach((ob, j) => {
      for (const s of routeDestinations(ob.service, this.routeAt(j))) reached.add(s);
    });
    return reached;
  }
}

/** True when a cell lists the policy `name`: any of its policies for an `all` cell, its first for a `best` one. */
function listedIn(cell: readonly Placed[], all: boolean, name: string): boolean {
  return all ? cell.some((p) => p.policy.name === name) : cell[0].policy.name === name;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);
