/**
 * The match view: which policies apply to which proxy, kept as a projection. It is the one place
 * that decides: the inspect API lists its entries and the xDS server renders each proxy's config
 * from its entry, so what inspect says is what the proxy gets.
 *
 * Every mesh that has proxies is built at start (`buildAll`, in slices that yield the event loop);
 * a mesh created later is built on its first read. Then every committed write keeps the view current
 * for any read after the write answers, because the resource views call their listeners
 * synchronously as they apply an entry:
 * - a proxy write re-matches that proxy alone;
 * - a Mesh write that changes its enabled Prometheus backend (every proxy's metrics inbound,
 *   metrics-inbound.ts) drops the mesh's matches: they are built again on the next read;
 * - sidecars that match identically (same inbound tags, outbound services and gateway tags, in
 *   order: replicas of one workload) share one match class and its cells (`matchClassKey`), so the
 *   work of a write scales with the distinct workloads it reaches, not with their replicas;
 * - a policy write re-matches only the classes its selectors can reach (`reachSelectors`, looked up
 *   through a tag index of the classes), and on each only the places of that one policy (`SidecarCells`);
 *   for most kinds a class notes the write and applies it at its next read (`settle`: a proxy's
 *   entry, the policy's affected proxies, or another change to the class), so a write answers after
 *   the reach walk alone, and a burst of writes to one policy is applied as its net change. The
 *   proxies of the reached classes are still named to the listeners at once. Routes and the faults
 *   that proxyless callers apply move indexes beside the reverse one, and are applied at once;
 * - the reverse index (policy → the classes and gateway proxies that list it) moves with each change,
 *   so "proxies affected by a policy" is a look-up, not a scan of the mesh (the reference recomputes
 *   every proxy of the mesh per request); its sorted proxy names are kept until they may change.
 * Building a mesh turns that reach around: the policies first, then the proxies, then each policy's
 * reach is noted on the classes it reaches, and each class is matched once against the policies
 * noted on it. Its cost is the number of (policy, reached class) pairs rather than proxies ×
 * policies, and a class is matched once rather than once per policy.
 *
 * The services a proxyless client dials (the Listener names its xDS streams ask for) are outbounds of
 * its entry (`setDialled`). The view also keeps the mesh's endpoints (every inbound, by service) and
 * which classes reach each service, so that after each write it tells its listeners exactly which
 * proxies' served config may have changed (`onProxiesChanged`): those whose own matches it touched,
 * and those that reach a service whose endpoints, or whose inbounds' matches, it touched.
 *
 * Built-in gateway proxies are matched by the gateway half (`GatewayMatcher`): their view is
 * recomputed whole when anything in the mesh that can change it is written (few proxies, small views).
 */
import type { ResourceViews, ViewItem } from '../projections/resource-views.js';
import { deepEqual } from '../util/deep-equal.js';
import type { SidecarItem } from './match-sidecar.js';
import type { PolicyResource } from './policy-resource.js';
import { gatewayReach } from './match-gateway.js';
import { matchNetworking, meshPrometheus, type PrometheusConf } from './metrics-inbound.js';
import {
  isBuiltinGateway,
  proxyInterfaces,
  type Networking,
  type ProxyInterfaces,
} from './proxy-interfaces.js';
import { compileSelector, matches, type CompiledSelector } from './policy-facts.js';
import { reachSelectors } from './reach-selectors.js';
import {
  matchClassKey,
  SidecarCells,
  SIDECAR_KINDS,
  type Candidates,
  type SlotDiff,
} from './sidecar-cells.js';
import { SERVICE_TAG } from '../resources/fragments.js';
import {
  inboundLocation,
  itemKey,
  kindOfPolicyKey,
  nameOfPolicyKey,
  policyKey,
  tagIndexKey,
} from '../resources/keys.js';
import { MATCH_ALL, tagSelectorMatches } from './tag-selector.js';
import { DIALLED_KINDS, GATEWAY_KIND, GATEWAY_ROUTE_KIND, ROUTE_KIND } from './kind-sets.js';
import { DialledServices } from './dialled-services.js';

type ChangeEntry = Parameters<Parameters<ResourceViews['onChange']>[0]>[0];

/** The kinds that shape gateway proxies' views besides the policies. */
export const GATEWAY_KINDS: readonly string[] = [GATEWAY_KIND, GATEWAY_ROUTE_KIND];

/** The inbound kinds whose matches the callers of an inbound read (they apply them themselves). */
const DIALLED: ReadonlySet<string> = new Set(DIALLED_KINDS);
/**
 * The sidecar kinds whose writes a class applies at its next read (`settle`) rather than at once:
 * those whose update changes only the class's own cells and the reverse index. A route moves the
 * reach index and a dialled kind marks the callers of the class's inbounds: both are applied at once.
 */
const DEFERRED: ReadonlySet<string> = new Set(
  SIDECAR_KINDS.filter((k) => k !== ROUTE_KIND && !DIALLED.has(k)),
);

/** Every kind whose resources the view keeps as candidates. */
export const MATCHED_KINDS: ReadonlySet<string> = new Set([...SIDECAR_KINDS, ...GATEWAY_KINDS]);

/** An attachment through which a policy applies to a sidecar (spec 2.20). */
export interface Attachment {
  type: SidecarItem['type'];
  name: string;
  service: string;
}

/** The gateway half: what a built-in gateway proxy's view is, computed whole. */
export interface GatewayMatcher<V> {
  /** The view of one gateway proxy, or undefined when no MeshGateway selects it. */
  view(networking: Networking, candidates: Candidates): V | undefined;
  /** The names (`Kind/name`) of the policies listed anywhere in a view. */
  policiesIn(view: V): Iterable<string>;
}

/**
 * One proxy's matches; a sidecar's cells are shared with every proxy of its match class, its
 * `interfaces` name its own inbounds and outbounds (the services it dials among them).
 */
export type ProxyMatches<V> =
  | {
      kind: 'SidecarDataplane';
      networking: Networking;
      interfaces: ProxyInterfaces;
      cells: SidecarCells;
      /** The match class (`matchClassKey`): proxies with equal keys have equal entries. */
      classKey: string;
      /** The services it dials as a proxyless client with an open stream (undefined: none open). */
      dialled: readonly string[] | undefined;
    }
  | { kind: 'MeshGatewayDataplane'; networking: Networking; view: V | undefined };

/** One inbound of a proxy of the mesh, as an endpoint of its service. */
export interface EndpointRef {
  /** The Dataplane's name. */
  proxy: string;
  /** The inbound's index in the Dataplane's `networking.inbound`. */
  index: number;
  /** The inbound's own address, else the proxy's. */
  address: string;
  port: number;
  tags: Readonly<Record<string, string>>;
  /** `health.ready`, absent = ready. */
  ready: boolean;
}

/** Which proxies' served config a write may have changed. */
export type ProxiesChange =
  | { all: true }
  | {
      all: false;
      proxies: ReadonlySet<string>;
      /** A Dataplane was written (proxies that read every Dataplane, such as servers' callers, care). */
      dataplanes: boolean;
    };

/** What `buildAll` built. */
export interface BuildReport {
  meshes: number;
  proxies: number;
  /** The longest stretch the build held the event loop, in milliseconds. */
  longestSliceMs: number;
  /** When the build began (epoch milliseconds, as log lines' `time`). */
  startedAt: number;
  /** Its wall time, yields included, in milliseconds. */
  ms: number;
}

/** Sidecars that match identically (`matchClassKey`): one set of cells, the proxies that share it. */
interface MatchClass {
  key: string;
  cells: SidecarCells;
  /** Its cells' `interfaces.reachTagSets`, at hand for the walks of policies' reach. */
  tagSets: ReadonlyArray<Readonly<Record<string, string>>>;
  members: Set<string>;
  /** The services this class reaches, as indexed in `reachIndex`. */
  reach: Set<string>;
  /** The last walk of a written policy's reach that met this class (`policyClasses`), and which versions reached it then. */
  walk: number;
  by: number;
  /**
   * Policy writes this class has not applied to its cells yet (`settle`): kind → name → the version
   * its cells hold (undefined: none). A later write of the same policy keeps the first entry, so a
   * burst of writes is applied as its net change.
   */
  pending?: Map<string, Map<string, PolicyResource | undefined>>;
  /**
   * The class keys its members that declare no outbounds get with other dialled services (by the
   * shared list, `redial`): such a member's key follows from the class and the list alone, and the
   * proxyless clients of a workload all move the same way when their streams open.
   */
  redials?: Map<readonly string[] | undefined, string>;
}

/**
 * A sidecar proxy of the view: its interfaces are not kept (with 10,000 proxies they are most of an
 * entry) but made from its networking and dialled services when its entry is read (`SidecarEntry`).
 */
interface SidecarProxy {
  kind: 'SidecarDataplane';
  networking: Networking;
  /** The services it dials (a shared list, `DialledServices`), as its entry was matched with. */
  dialled: readonly string[] | undefined;
  cls: MatchClass;
}

/** A sidecar proxy's entry as read: its interfaces made on first use (most reads need only the class). */
class SidecarEntry {
  readonly kind = 'SidecarDataplane';
  private made: ProxyInterfaces | undefined = undefined;

  constructor(
    readonly networking: Networking,
    readonly dialled: readonly string[] | undefined,
    readonly cells: SidecarCells,
    readonly classKey: string,
  ) {}

  get interfaces(): ProxyInterfaces {
    return (this.made ??= proxyInterfaces(this.networking, this.dialled));
  }
}

interface GatewayProxy<V> {
  kind: 'MeshGatewayDataplane';
  networking: Networking;
  view: V | undefined;
}

interface MeshMatches<V> {
  /** The mesh's enabled Prometheus backend the proxies were matched with (their metrics inbound). */
  prometheus: PrometheusConf | undefined;
  candidates: Map<string, Map<string, PolicyResource>>;
  proxies: Map<string, SidecarProxy | GatewayProxy<V>>;
  classes: Map<string, MatchClass>;
  /** `tagIndexKey(key, value)` and `key` → the classes one of whose tag sets has that tag (or key). */
  classIndex: Map<string, Set<MatchClass>>;
  /** Built-in gateway proxies, re-matched whole on any change that can reach them. */
  gateways: Set<string>;
  /** `Kind/name` → the match classes whose cells list it (as far as they have applied their pending writes). */
  affectedClasses: Map<string, Set<MatchClass>>;
  /** The classes with pending policy writes (`MatchClass.pending`). */
  dirty: Set<MatchClass>;
  /** `Kind/name` → the gateway proxies whose views list it. */
  affectedGateways: Map<string, Set<string>>;
  /** The sorted proxies of each policy, made on read and dropped when they may have changed. */
  sorted: Map<string, string[]>;
  /** Every proxy's name, sorted: made on read, dropped when a proxy is put or removed. */
  names?: string[];
  /** Service → the classes that reach it (their outbounds' services and their routes' destinations). */
  reachIndex: Map<string, Set<MatchClass>>;
  /** Service → proxy name → that proxy's inbounds of the service. */
  served: Map<string, Map<string, EndpointRef[]>>;
  /** Service → its endpoints' distinct inbound tag sets (by JSON) with how many inbounds have each. */
  tagSets: Map<string, Map<string, { tags: Readonly<Record<string, string>>; count: number }>>;
  /** What `endpointTags` answers, per service, until its tag sets change. */
  tagSetLists: Map<string, Array<Readonly<Record<string, string>>>>;
  /** While the mesh is built in slices: the remaining steps (a read finishes them at once). */
  steps?: Generator<void, void, void>;
  /**
   * While the mesh is built: the classes the build created and has not matched yet, each with the
   * sidecar policies (kind → names) noted as reaching it. Their cells are empty until their step.
   */
  unmatched?: Map<MatchClass, Map<string, string[]>>;
  /**
   * While the mesh is built: the sidecar policies (kind → names) whose reach is checked by each
   * unmatched class at its step instead of noted on it, for they may reach half the classes or more.
   */
  broad?: Map<string, string[]>;
}

/** Read side of the match view. */
export interface MatchView<V> {
  /** A proxy's matches; undefined when the mesh or the proxy does not exist. */
  proxy(mesh: string, name: string): ProxyMatches<V> | undefined;
  /** The proxies whose matches list the policy, sorted by name. */
  affected(mesh: string, kind: string, name: string): readonly string[];
  /** The mesh's current candidates of `kind` (the policies the view matched against). */
  candidates(mesh: string, kind: string): readonly PolicyResource[];
  /** The mesh's built-in gateway proxies, by name. */
  gatewayProxies(mesh: string): ReadonlyArray<readonly [string, ProxyMatches<V>]>;
  /** Every inbound of the mesh's proxies that serves `service` (ready or not), by proxy name then index. */
  endpoints(mesh: string, service: string): EndpointRef[];
  /** The policies of `kind` listed on inbound `index` of proxy `name` (empty when none or no such proxy). */
  inboundPolicies(mesh: string, name: string, index: number, kind: string): readonly PolicyResource[];
  /**
   * The services a proxyless client dials on one of its streams (`stream`: any key unique per open
   * stream); `undefined` when the stream ends. The proxy's dialled services are the union over its
   * open streams, and are outbounds of its entry.
   */
  setDialled(mesh: string, name: string, stream: string, services: readonly string[] | undefined): void;
  /** Calls `listener` after each change with the proxies whose served config it may have changed. */
  onProxiesChanged(listener: (mesh: string, change: ProxiesChange) => void): () => void;
  /** Builds every mesh that has proxies, in slices of at most `sliceMs` of work, yielding between them. */
  buildAll(opts?: { sliceMs?: number }): Promise<BuildReport>;
  /**
   * What writing `writes` (policies, in order, each seeing the ones before it) would do to the
   * matches of the mesh's proxies, computed on copies of the match classes they reach and of the
   * candidates: the view is not changed. Diffed once per class; a proxy's own impact is made when
   * asked for (a mesh-wide change lists every proxy, and a page of them is read).
   */
  preview(mesh: string, writes: ReadonlyArray<PolicyWrite>): MatchPreview<V>;
  /**
   * A match view of its own over other views (a state to compare with this one's), built on first
   * read of each mesh; it takes the services the proxyless clients dial now from this view (they are
   * runtime state, not in the views).
   */
  over(views: ResourceViews): MatchView<V>;
}

/** The reads that render a proxy's config: the view, or the state a preview would leave. */
export type MatchReads<V> = Pick<MatchView<V>, 'proxy' | 'endpoints' | 'inboundPolicies'>;

/**
 * What a set of policy writes would do to one mesh's matches (`MatchView.preview`). Parts of it are
 * made when read, from the view as it is: read it before the view changes.
 */
export interface MatchPreview<V> {
  /** How many proxies' matches would change. */
  readonly total: number;
  /** Those proxies, sorted by name. */
  names(): readonly string[];
  /** One of them: what would change at its attachments (undefined for a proxy not among them). */
  impact(name: string): MatchImpact | undefined;
  /**
   * Proxies whose config may change even where their own matches do not: they call a service at an
   * inbound whose dialled-kind policies (faults) would change, and apply those themselves. Sorted;
   * some may be among `names()` too.
   */
  callers(): readonly string[];
  /** The matches as the writes would leave them (the rest of the view as it is). */
  after: MatchReads<V>;
}

/** One policy write of a preview: its new version, or undefined for a delete. */
export interface PolicyWrite {
  kind: string;
  name: string;
  after: PolicyResource | undefined;
}

/** What a preview would change at one attachment of a proxy, for one policy kind; `gateway` for a gateway proxy's view. */
export type AttachmentImpact = Omit<SlotDiff, 'type'> & { type: SlotDiff['type'] | 'gateway' };

/** What a preview would change for one proxy. */
export interface MatchImpact {
  proxy: string;
  kind: 'sidecar' | 'gateway' | 'proxyless';
  attachments: AttachmentImpact[];
}

/** The order of a proxy's attachment impacts: by type, name, then policy kind. */
export const byAttachment = (x: AttachmentImpact, y: AttachmentImpact): number =>
  cmp(x.type, y.type) || cmp(x.name, y.name) || cmp(x.policyKind, y.policyKind);

/**
 * The impact on a gateway proxy, from the policies (`Kind/name`) its view listed before and after:
 * one attachment per policy kind; `written` (the keys written) tells a replaced policy.
 */
export function diffPolicyKeys(
  before: Iterable<string>,
  after: Iterable<string>,
  written: ReadonlySet<string>,
): AttachmentImpact[] {
  const was = new Set(before);
  const now = new Set(after);
  const byKind = new Map<string, AttachmentImpact>();
  const at = (key: string): AttachmentImpact => {
    const policyKind = kindOfPolicyKey(key);
    let a = byKind.get(policyKind);
    if (!a) {
      a = { type: 'gateway', name: '', service: '', policyKind, added: [], removed: [], replaced: [] };
      byKind.set(policyKind, a);
    }
    return a;
  };
  for (const k of now) if (!was.has(k)) at(k).added.push(nameOfPolicyKey(k));
  for (const k of was) if (!now.has(k)) at(k).removed.push(nameOfPolicyKey(k));
  for (const k of now) if (was.has(k) && written.has(k)) at(k).replaced.push(nameOfPolicyKey(k));
  return [...byKind.values()].sort(byAttachment);
}

/** The attachments whose policies differ between two matched-policies item lists of one proxy. */
export function diffItems(before: readonly SidecarItem[], after: readonly SidecarItem[]): AttachmentImpact[] {
  const key = (i: SidecarItem): string => itemKey(i.type, i.name);
  const was = new Map(before.map((i) => [key(i), i]));
  const now = new Map(after.map((i) => [key(i), i]));
  const out: AttachmentImpact[] = [];
  for (const k of new Set([...was.keys(), ...now.keys()])) {
    const b = was.get(k);
    const a = now.get(k);
    const item = (a ?? b) as SidecarItem;
    const kinds = new Set([
      ...Object.keys(b?.matchedPolicies ?? {}),
      ...Object.keys(a?.matchedPolicies ?? {}),
    ]);
    for (const policyKind of kinds) {
      const bs = b?.matchedPolicies[policyKind] ?? [];
      const as = a?.matchedPolicies[policyKind] ?? [];
      const byName = new Map(bs.map((p) => [p.name, p]));
      const names = new Set(as.map((p) => p.name));
      const added = as.filter((p) => !byName.has(p.name)).map((p) => p.name);
      const removed = bs.filter((p) => !names.has(p.name)).map((p) => p.name);
      const replaced = as.filter((p) => byName.has(p.name) && byName.get(p.name) !== p).map((p) => p.name);
      if (added.length + removed.length + replaced.length === 0) continue;
      out.push({
        type: item.type,
        name: item.name,
        service: item.service,
        policyKind,
        added,
        removed,
        replaced,
      });
    }
  }
  return out.sort((x, y) => cmp(x.type, y.type) || cmp(x.name, y.name) || cmp(x.policyKind, y.policyKind));
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Keys kept per class for its members' other dialled services (`MatchClass.redials`). */
const REDIALS_PER_CLASS = 16;

const NO_CLASSES: ReadonlySet<never> = new Set();

/** True when a (reach) selector matches one of a class's tag sets. */
function selects(
  selector: CompiledSelector,
  cls: { tagSets: ReadonlyArray<Readonly<Record<string, string>>> },
): boolean {
  for (const tags of cls.tagSets) if (matches(selector, tags)) return true;
  return false;
}

/** Which versions of a written policy reach a class (`policyClasses`). */
const BEFORE = 1;
const AFTER = 2;

/** How many walks of written policies' reach have been made (`policyClasses`). */
let walks = 0;
/** One reach selector of a policy version: its keys in the class index (`tagIndexKey` or the key alone for `*`), and itself compiled. */
interface ReachSelector {
  index: readonly string[];
  selector: CompiledSelector;
}

const reachCache = new WeakMap<PolicyResource, readonly ReachSelector[]>();

/** The reach selectors of a policy version (`reachSelectors`), made once per version. */
function reachOf(policy: PolicyResource): readonly ReachSelector[] {
  let reach = reachCache.get(policy);
  if (reach === undefined) {
    reach = (reachSelectors(policy) ?? []).map(({ match }) => ({
      index: Object.keys(match ?? {}).map((k) => (match[k] === MATCH_ALL ? k : tagIndexKey(k, match[k]))),
      selector: compileSelector(match),
    }));
    reachCache.set(policy, reach);
  }
  return reach;
}

/** Creates the view over the resource views; it follows their changes from now on. */
export function createMatchView<V>(
  views: ResourceViews,
  gateway: GatewayMatcher<V>,
  dialledBy = new DialledServices(),
): MatchView<V> {
  const meshes = new Map<string, MeshMatches<V>>();
  /** The services each proxy's streams dial (kept whether or not the mesh is built). */
  const listeners = new Set<(mesh: string, change: ProxiesChange) => void>();
  /** The proxies marked by the change being applied, per mesh (`true`: all of them). */
  const pending = new Map<string, { all: boolean; proxies: Set<string>; dataplanes: boolean }>();

  /** A proxy's networking as it is matched: with the metrics inbound of its mesh's backend. */
  const networkingOf = (m: MeshMatches<V>, item: Pick<ViewItem, 'resource'>): Networking =>
    matchNetworking(item.resource, m.prometheus);

  const dialledOf = (mesh: string, name: string): readonly string[] | undefined => dialledBy.of(mesh, name);

  const marks = (mesh: string) => {
    let p = pending.get(mesh);
    if (!p) pending.set(mesh, (p = { all: false, proxies: new Set(), dataplanes: false }));
    return p;
  };
  /**
   * True while a mesh's build steps run. They make the mesh's first state, from which nothing has
   * been served yet (a Mesh write that makes a mesh build again marks every proxy itself), so they
   * mark nothing: otherwise the first write after a start would name every proxy of the mesh.
   */
  let building = false;
  const stepQuietly = (steps: Generator<void, void, void>): boolean => {
    const was = building;
    building = true;
    try {
      return !!steps.next().done;
    } finally {
      building = was;
    }
  };
  const markProxy = (mesh: string, name: string): void => {
    if (listeners.size > 0 && !building) marks(mesh).proxies.add(name);
  };
  const markClass = (mesh: string, cls: MatchClass): void => {
    if (listeners.size === 0 || building) return;
    const p = marks(mesh);
    for (const n of cls.members) p.proxies.add(n);
  };
  const markService = (m: MeshMatches<V>, mesh: string, service: string): void => {
    for (const cls of m.reachIndex.get(service) ?? []) markClass(mesh, cls);
  };
  const flush = (): void => {
    if (pending.size === 0) return;
    const done = [...pending];
    pending.clear();
    for (const [mesh, p] of done) {
      const change: ProxiesChange = p.all
        ? { all: true }
        : { all: false, proxies: p.proxies, dataplanes: p.dataplanes };
      if (!change.all && p.proxies.size === 0 && !p.dataplanes) continue;
      for (const l of listeners) l(mesh, change);
    }
  };

  /** `Kind/name` keys made once per policy name: a key made anew is hashed at each look-up. */
  const policyKeys = new Map<string, Map<string, string>>();
  const keyOf = (kind: string, name: string): string => {
    let byName = policyKeys.get(kind);
    if (!byName) policyKeys.set(kind, (byName = new Map()));
    let key = byName.get(name);
    if (key === undefined) byName.set(name, (key = policyKey(kind, name)));
    return key;
  };

  /** Drops the sorted proxies of the policies a class lists (its members changed). */
  const forgetSorted = (m: MeshMatches<V>, cls: MatchClass): void => {
    for (const kind of SIDECAR_KINDS)
      for (const n of cls.cells.namesOf(kind)) m.sorted.delete(keyOf(kind, n));
  };

  const link = <T>(
    m: MeshMatches<V>,
    index: Map<string, Set<T>>,
    key: string,
    target: T,
    on: boolean,
  ): void => {
    let set = index.get(key);
    if (on) {
      if (!set) index.set(key, (set = new Set()));
      if (set.has(target)) return;
      set.add(target);
    } else {
      if (!set?.delete(target)) return;
      if (set.size === 0) index.delete(key);
    }
    if (m.sorted.size > 0) m.sorted.delete(key);
  };

  /** Moves the class's entries in the reach index to the services it reaches now. */
  const indexReach = (m: MeshMatches<V>, cls: MatchClass, on: boolean): void => {
    const now = on ? cls.cells.reachedServices() : new Set<string>();
    for (const s of cls.reach) if (!now.has(s)) link(m, m.reachIndex, s, cls, false);
    for (const s of now) if (!cls.reach.has(s)) link(m, m.reachIndex, s, cls, true);
    cls.reach = now;
  };

  /** Runs `change` on a class's cells and moves the reverse index by what it changed for `kinds`. */
  const tracked = (
    m: MeshMatches<V>,
    cls: MatchClass,
    kinds: readonly string[],
    change: () => void,
  ): void => {
    settle(m, cls);
    const before = kinds.map((k) => cls.cells.namesOf(k));
    change();
    let kind = '';
    let last: string | undefined;
    // A policy listed in several cells comes once per cell, often in a row (a wide one on every
    // outbound): linked once for the row.
    const linkNew = (n: string): void => {
      if (n !== last) link(m, m.affectedClasses, keyOf(kind, (last = n)), cls, true);
    };
    for (let i = 0; i < kinds.length; i++) {
      kind = kinds[i];
      // Listed nowhere before (a class matched for the first time): whatever it lists now is new.
      if (before[i].size === 0) {
        last = undefined;
        cls.cells.eachListed(kind, linkNew);
        continue;
      }
      const after = cls.cells.namesOf(kind);
      for (const n of before[i]) if (!after.has(n)) link(m, m.affectedClasses, keyOf(kind, n), cls, false);
      for (const n of after) if (!before[i].has(n)) link(m, m.affectedClasses, keyOf(kind, n), cls, true);
    }
  };

  const gatewayPolicies = (p: GatewayProxy<V>): Set<string> =>
    new Set(p.view !== undefined ? gateway.policiesIn(p.view) : []);

  const rematchGateway = (m: MeshMatches<V>, mesh: string, name: string): void => {
    const p = m.proxies.get(name);
    if (p?.kind !== 'MeshGatewayDataplane') return;
    const before = gatewayPolicies(p);
    p.view = gateway.view(p.networking, m.candidates);
    const after = gatewayPolicies(p);
    for (const k of before) if (!after.has(k)) link(m, m.affectedGateways, k, name, false);
    for (const k of after) if (!before.has(k)) link(m, m.affectedGateways, k, name, true);
    markProxy(mesh, name);
  };

  const classTags = (cls: MatchClass): Set<string> => {
    const keys = new Set<string>();
    for (const tags of cls.tagSets) {
      for (const k in tags) {
        keys.add(k);
        keys.add(tagIndexKey(k, tags[k]));
      }
    }
    return keys;
  };

  /** Indexes (or un-indexes) a proxy's inbounds as endpoints of their services; marks their callers. */
  const indexServed = (
    m: MeshMatches<V>,
    mesh: string,
    name: string,
    networking: Networking | undefined,
    on: boolean,
  ): void => {
    if (!networking) return;
    const byService = new Map<string, EndpointRef[]>();
    (networking.inbound ?? []).forEach((ib, index) => {
      const service = ib.tags?.[SERVICE_TAG] ?? '';
      const ref: EndpointRef = {
        proxy: name,
        index,
        address: ib.address ?? networking.address,
        port: ib.port,
        tags: ib.tags,
        ready: (ib as { health?: { ready?: boolean } }).health?.ready !== false,
      };
      const list = byService.get(service);
      if (list) list.push(ref);
      else byService.set(service, [ref]);
    });
    for (const [service, refs] of byService) {
      markService(m, mesh, service);
      for (const ref of refs) countTagSet(m, mesh, service, ref.tags, on ? 1 : -1);
      let owners = m.served.get(service);
      if (on) {
        if (!owners) m.served.set(service, (owners = new Map()));
        owners.set(name, refs);
      } else if (owners?.delete(name) && owners.size === 0) {
        m.served.delete(service);
      }
    }
  };

  /**
   * Counts one inbound tag set of a service's endpoints in or out. When a tag set appears or goes,
   * the faults the service's proxyless callers apply may change: their dialled faults are placed again.
   */
  const countTagSet = (
    m: MeshMatches<V>,
    mesh: string,
    service: string,
    tags: Readonly<Record<string, string>>,
    delta: 1 | -1,
  ): void => {
    const key = JSON.stringify(tags);
    let sets = m.tagSets.get(service);
    if (!sets) m.tagSets.set(service, (sets = new Map()));
    const entry = sets.get(key);
    const count = (entry?.count ?? 0) + delta;
    if (count > 0) {
      if (entry) entry.count = count;
      else sets.set(key, { tags, count });
      if (entry) return;
    } else {
      sets.delete(key);
      if (sets.size === 0) m.tagSets.delete(service);
    }
    m.tagSetLists.delete(service);
    for (const cls of m.reachIndex.get(service) ?? []) {
      if (!cls.cells.dialledServices().includes(service)) continue;
      tracked(m, cls, DIALLED_KINDS, () => cls.cells.refreshDialled(m.candidates));
      markClass(mesh, cls);
    }
  };

  const endpointTags = (m: MeshMatches<V>) => (service: string) => {
    let list = m.tagSetLists.get(service);
    if (!list) {
      list = [...(m.tagSets.get(service)?.values() ?? [])].map((e) => e.tags);
      m.tagSetLists.set(service, list);
    }
    return list;
  };

  const removeProxy = (m: MeshMatches<V>, mesh: string, name: string): void => {
    const p = m.proxies.get(name);
    if (!p) return;
    markProxy(mesh, name);
    m.proxies.delete(name);
    m.names = undefined;
    indexServed(m, mesh, name, p.networking, false);
    if (p.kind === 'MeshGatewayDataplane') {
      for (const k of gatewayPolicies(p)) link(m, m.affectedGateways, k, name, false);
      m.gateways.delete(name);
      return;
    }
    leaveClass(m, p.cls, name);
  };

  /** Takes a proxy out of its match class; the last member gone, the class and its links go too. */
  const leaveClass = (m: MeshMatches<V>, cls: MatchClass, name: string): void => {
    cls.members.delete(name);
    forgetSorted(m, cls);
    if (cls.members.size > 0) return;
    settle(m, cls);
    m.classes.delete(cls.key);
    m.unmatched?.delete(cls);
    for (const kind of SIDECAR_KINDS) {
      for (const n of cls.cells.namesOf(kind)) link(m, m.affectedClasses, keyOf(kind, n), cls, false);
    }
    for (const t of classTags(cls)) link(m, m.classIndex, t, cls, false);
    indexReach(m, cls, false);
  };

  /**
   * Puts a proxy. A class it creates is matched at once, unless `deferred` (the build's own proxies):
   * then it waits in `unmatched` for its step.
   */
  const putProxy = (
    m: MeshMatches<V>,
    mesh: string,
    name: string,
    networking: Networking,
    deferred = false,
  ): void => {
    removeProxy(m, mesh, name);
    markProxy(mesh, name);
    m.names = undefined;
    indexServed(m, mesh, name, networking, true);
    if (networking.gateway && isBuiltinGateway(networking)) {
      m.proxies.set(name, { kind: 'MeshGatewayDataplane', networking, view: undefined });
      m.gateways.add(name);
      if (!m.steps) rematchGateway(m, mesh, name);
      return;
    }
    const dialled = dialledOf(mesh, name);
    const cls = joinClass(m, name, matchClassKey(networking, dialled), networking, dialled, deferred);
    m.proxies.set(name, { kind: 'SidecarDataplane', networking, dialled, cls });
  };

  /**
   * A sidecar's dialled services changed: it joins the class of its new outbounds. Its inbounds, and
   * so the endpoints its callers are served, stay as they are (nothing to index again).
   */
  const redial = (m: MeshMatches<V>, mesh: string, name: string, p: SidecarProxy): void => {
    markProxy(mesh, name);
    const dialled = dialledOf(mesh, name);
    const before = p.cls;
    const plain = !p.networking.outbound?.length;
    let key = plain ? before.redials?.get(dialled) : undefined;
    if (key === undefined) {
      key = matchClassKey(p.networking, dialled);
      if (plain) {
        before.redials ??= new Map();
        if (before.redials.size >= REDIALS_PER_CLASS) before.redials.clear();
        before.redials.set(dialled, key);
      }
    }
    if (key !== before.key) {
      p.cls = joinClass(m, name, key, p.networking, dialled, false);
      leaveClass(m, before, name);
    }
    p.dialled = dialled;
  };

  /** Adds a proxy to the class of `key`, made (and matched, unless `deferred`) when it is new. */
  const joinClass = (
    m: MeshMatches<V>,
    name: string,
    key: string,
    networking: Networking,
    dialled: readonly string[] | undefined,
    deferred: boolean,
  ): MatchClass => {
    let cls = m.classes.get(key);
    if (!cls) {
      const cells = new SidecarCells(networking, dialled, endpointTags(m));
      const created: MatchClass = {
        key,
        cells,
        tagSets: cells.interfaces.reachTagSets,
        members: new Set(),
        reach: new Set(),
        walk: 0,
        by: 0,
      };
      cls = created;
      m.classes.set(key, cls);
      for (const t of classTags(cls)) link(m, m.classIndex, t, cls, true);
      if (deferred && m.unmatched) m.unmatched.set(cls, new Map());
      else tracked(m, cls, SIDECAR_KINDS, () => created.cells.recomputeAll(m.candidates));
      indexReach(m, cls, true);
    }
    cls.members.add(name);
    forgetSorted(m, cls);
    return cls;
  };

  /** Visits the classes one of whose tag sets one of `policy`'s reach selectors matches (a class once per selector that reaches it). */
  const reached = (m: MeshMatches<V>, policy: PolicyResource, visit: (cls: MatchClass) => void): void => {
    for (const { index, selector } of reachOf(policy)) {
      for (const cls of poolOf(m, index) ?? m.classes.values()) if (selects(selector, cls)) visit(cls);
    }
  };

  /**
   * The classes a reach selector is checked against: those of the rarest of its index keys (each
   * has them all only if it has that one); undefined for a selector without keys (every class).
   */
  const poolOf = (m: MeshMatches<V>, index: readonly string[]): ReadonlySet<MatchClass> | undefined => {
    let pool: ReadonlySet<MatchClass> | undefined;
    for (const key of index) {
      const set = m.classIndex.get(key);
      if (!set) return NO_CLASSES;
      if (!pool || set.size < pool.size) pool = set;
    }
    return pool;
  };

  /**
   * True when the policy reaches the class, as `reached` finds it; without the index, for the
   * policies the build checks on every class (`broad`).
   */
  const reaches = (policy: PolicyResource, cls: MatchClass): boolean => {
    for (const { selector } of reachOf(policy)) if (selects(selector, cls)) return true;
    return false;
  };

  /** Puts `after` (or nothing) as the mesh's candidate `kind`/`name`; returns the version it replaced. */
  const setCandidate = (
    m: MeshMatches<V>,
    kind: string,
    name: string,
    after: PolicyResource | undefined,
  ): PolicyResource | undefined => {
    let byName = m.candidates.get(kind);
    if (!byName) m.candidates.set(kind, (byName = new Map()));
    const before = byName.get(name);
    if (after) byName.set(name, after);
    else byName.delete(name);
    return before;
  };

  /**
   * The classes a sidecar policy's old or new version reaches, each with the versions that reach it
   * (`BEFORE`, `AFTER` or both): a version that does not reach a class has no place on it.
   */
  const policyClasses = (
    m: MeshMatches<V>,
    before: PolicyResource | undefined,
    after: PolicyResource | undefined,
  ): MatchClass[] => {
    // Each walk marks the classes it meets with its number: no set of classes to look them up in.
    const walk = ++walks;
    const classes: MatchClass[] = [];
    const meet = (cls: MatchClass, by: number): void => {
      if (cls.walk !== walk) {
        cls.walk = walk;
        cls.by = 0;
        classes.push(cls);
      }
      cls.by |= by;
    };
    if (before) reached(m, before, (cls) => meet(cls, BEFORE));
    if (after) reached(m, after, (cls) => meet(cls, AFTER));
    return classes;
  };

  /** Moves one class's cells from a policy's `before` version to its `after` version, and the reverse index with them. */
  const moveCells = (
    m: MeshMatches<V>,
    kind: string,
    cls: MatchClass,
    before: PolicyResource | undefined,
    after: PolicyResource | undefined,
  ) => {
    const update = cls.cells.update(kind, before, after, m.candidates);
    for (const c of update.listings) {
      link(m, m.affectedClasses, keyOf(c.kind, c.name), cls, c.listed);
    }
    return update;
  };

  /**
   * Applies a class's pending policy writes (`MatchClass.pending`): each policy moves from the
   * version its cells hold to its current one (if that reaches the class). Every read of a class's
   * cells or of the reverse index comes here first, and so does every change applied at once.
   */
  const settle = (m: MeshMatches<V>, cls: MatchClass): void => {
    const { pending } = cls;
    if (pending === undefined) return;
    cls.pending = undefined;
    m.dirty.delete(cls);
    for (const [kind, held] of pending) {
      const byName = m.candidates.get(kind);
      for (const [name, before] of held) {
        const current = byName?.get(name);
        const after = current !== undefined && reaches(current, cls) ? current : undefined;
        if (after !== before) moveCells(m, kind, cls, before, after);
        if (current === undefined) policyKeys.get(kind)?.delete(name);
      }
    }
  };

  /** Settles every class of the mesh that has pending writes (before a read of the reverse index). */
  const settleAll = (m: MeshMatches<V>): void => {
    for (const cls of m.dirty) settle(m, cls);
  };

  /**
   * Notes a write of a `DEFERRED` kind on a class it reaches (`held`: the version its cells hold if
   * nothing is pending for the policy yet), and marks the class's proxies: the write may change
   * what they are served (they settle the class when their config is made).
   */
  const defer = (
    m: MeshMatches<V>,
    mesh: string,
    kind: string,
    name: string,
    cls: MatchClass,
    held: PolicyResource | undefined,
  ): void => {
    let pending = cls.pending;
    if (pending === undefined) {
      cls.pending = pending = new Map();
      m.dirty.add(cls);
    }
    let byName = pending.get(kind);
    if (byName === undefined) pending.set(kind, (byName = new Map()));
    if (!byName.has(name)) byName.set(name, held);
    markClass(mesh, cls);
  };

  /** Moves one class's cells from a policy's `before` version to its `after` version, and the indexes with them. */
  const updateClass = (
    m: MeshMatches<V>,
    mesh: string,
    kind: string,
    cls: MatchClass,
    before: PolicyResource | undefined,
    after: PolicyResource | undefined,
  ): void => {
    settle(m, cls);
    const update = moveCells(m, kind, cls, before, after);
    if (!update.touched) return;
    markClass(mesh, cls);
    if (kind === ROUTE_KIND) indexReach(m, cls, true);
    // Callers of this class's inbounds apply the faults those inbounds list.
    if (update.inbound && DIALLED.has(kind)) {
      for (const ib of cls.cells.interfaces.inbounds) markService(m, mesh, ib.service);
    }
  };

  const putPolicy = (
    m: MeshMatches<V>,
    mesh: string,
    kind: string,
    name: string,
    after: PolicyResource | undefined,
  ): void => {
    const before = setCandidate(m, kind, name, after);
    if (SIDECAR_KINDS.includes(kind)) {
      for (const cls of policyClasses(m, before, after)) {
        const { by } = cls;
        const notes = m.unmatched?.get(cls);
        if (notes) note(notes, kind, name);
        else if (DEFERRED.has(kind)) defer(m, mesh, kind, name, cls, by & BEFORE ? before : undefined);
        else
          updateClass(m, mesh, kind, cls, by & BEFORE ? before : undefined, by & AFTER ? after : undefined);
      }
      // The key of a deleted policy is not kept (it is made again if the name comes back).
      if (!after) policyKeys.get(kind)?.delete(name);
    }
    // Gateway views read gateways, routes and per-destination policies: re-match the gateway proxies
    // the old or the new version can reach (`gatewayReach`: most kinds reach every gateway proxy).
    if (!m.steps && m.gateways.size > 0) {
      const selectors = [
        ...((before && gatewayReach(before)) ?? []),
        ...((after && gatewayReach(after)) ?? []),
      ];
      if (selectors.length === 0) return;
      for (const g of m.gateways) {
        const p = m.proxies.get(g) as GatewayProxy<V>;
        const tagSets = proxyInterfaces(p.networking).tagSets;
        if (selectors.some(({ match }) => tagSets.some((tags) => tagSelectorMatches(match, tags)))) {
          rematchGateway(m, mesh, g);
        }
      }
    }
  };

  /** Notes that the policy `kind`/`name` reaches a class not matched yet (a name may be noted more than once). */
  const note = (notes: Map<string, string[]>, kind: string, name: string): void => {
    const names = notes.get(kind);
    if (!names) notes.set(kind, [name]);
    else if (names[names.length - 1] !== name) names.push(name);
  };

  /** Notes one sidecar policy (its current version) on the unmatched classes it reaches. */
  const noteReach = (m: MeshMatches<V>, kind: string, name: string): void => {
    const policy = m.candidates.get(kind)?.get(name);
    const { unmatched, broad } = m;
    if (!policy || !unmatched || !broad) return;
    let pools = 0;
    for (const { index } of reachOf(policy)) pools += (poolOf(m, index) ?? m.classes).size;
    if (pools * 2 >= unmatched.size) {
      note(broad, kind, name);
      return;
    }
    reached(m, policy, (cls) => {
      const notes = unmatched.get(cls);
      if (notes) note(notes, kind, name);
    });
  };

  /** Matches a class the build created against the current versions of the policies noted on it (each once). */
  const matchNoted = (
    m: MeshMatches<V>,
    mesh: string,
    cls: MatchClass,
    notes: Map<string, string[]>,
  ): void => {
    const noted = (kind: string): PolicyResource[] | undefined => {
      const byName = m.candidates.get(kind);
      const names = notes.get(kind);
      const broad = m.broad?.get(kind);
      if (!byName || (!names && !broad)) return undefined;
      const policies: PolicyResource[] = [];
      for (const n of names ?? []) {
        const policy = byName.get(n);
        if (policy) policies.push(policy);
      }
      for (const n of broad ?? []) {
        const policy = byName.get(n);
        if (policy && reaches(policy, cls)) policies.push(policy);
      }
      return policies;
    };
    tracked(m, cls, SIDECAR_KINDS, () => cls.cells.recomputeFrom(noted));
    indexReach(m, cls, true);
    markClass(mesh, cls);
    // Callers of this class's inbounds apply the faults those inbounds list.
    if (DIALLED_KINDS.some((kind) => cls.cells.namesOf(kind).size > 0)) {
      for (const ib of cls.cells.interfaces.inbounds) markService(m, mesh, ib.service);
    }
  };

  const emptyMesh = (mesh: string): MeshMatches<V> => ({
    prometheus: meshPrometheus(views.get('Mesh', undefined, mesh)?.resource),
    candidates: new Map(),
    proxies: new Map(),
    classes: new Map(),
    classIndex: new Map(),
    gateways: new Set(),
    affectedClasses: new Map(),
    affectedGateways: new Map(),
    dirty: new Set(),
    sorted: new Map(),
    reachIndex: new Map(),
    served: new Map(),
    tagSets: new Map(),
    tagSetLists: new Map(),
  });

  /**
   * The steps of building a mesh, one item per step: every policy as a candidate (no class exists
   * yet, so this matches nothing), the proxies (the classes they create wait, unmatched), each
   * sidecar policy's reach noted on those classes (or, for a policy that may reach half of them or
   * more, left for each class to check), then each class matched once against the policies noted
   * on it or that it checks. Writes applied between steps keep the partial view current: a policy
   * write notes itself on the unmatched classes it reaches and updates the others, a proxy write
   * matches a class it creates at once (the candidates are complete by then, or the policies still
   * to come reach it as candidates); a step reads the item's current version and skips what a write
   * already put.
   */
  function* buildSteps(mesh: string, m: MeshMatches<V>): Generator<void, void, void> {
    const policies: Array<[kind: string, name: string]> = [];
    for (const kind of MATCHED_KINDS) views.each(kind, mesh, (item) => policies.push([kind, item.name]));
    for (const [kind, name] of policies) {
      const resource = views.get(kind, mesh, name)?.resource as unknown as PolicyResource | undefined;
      if (resource && m.candidates.get(kind)?.get(name) !== resource)
        putPolicy(m, mesh, kind, name, resource);
      yield;
    }
    m.unmatched = new Map();
    m.broad = new Map();
    const names: string[] = [];
    views.each('Dataplane', mesh, (item) => names.push(item.name));
    for (const name of names) {
      const item = views.get('Dataplane', mesh, name);
      if (item && m.proxies.get(name)?.networking !== item.resource.networking) {
        putProxy(m, mesh, name, networkingOf(m, item), true);
      }
      yield;
    }
    // Every sidecar candidate now, those written since the build began included.
    const sidecar: Array<[kind: string, name: string]> = [];
    for (const kind of SIDECAR_KINDS)
      for (const name of m.candidates.get(kind)?.keys() ?? []) sidecar.push([kind, name]);
    for (const [kind, name] of sidecar) {
      noteReach(m, kind, name);
      yield;
    }
    for (const [cls, notes] of m.unmatched) {
      m.unmatched.delete(cls);
      matchNoted(m, mesh, cls, notes);
      yield;
    }
    m.unmatched = undefined;
    m.broad = undefined;
    m.steps = undefined;
    for (const g of m.gateways) rematchGateway(m, mesh, g);
  }

  /** Starts building a mesh; its steps run when `finish` or the slicer drives them. */
  const start = (mesh: string): MeshMatches<V> => {
    const m = emptyMesh(mesh);
    meshes.set(mesh, m);
    m.steps = buildSteps(mesh, m);
    return m;
  };

  const finish = (m: MeshMatches<V>): MeshMatches<V> => {
    const steps = m.steps as Generator<void, void, void> | undefined;
    if (steps) while (!stepQuietly(steps));
    return m;
  };

  const meshOf = (mesh: string): MeshMatches<V> | undefined => {
    if (!views.get('Mesh', undefined, mesh)) return undefined;
    return finish(meshes.get(mesh) ?? start(mesh));
  };

  views.onChange((e: ChangeEntry) => {
    try {
      if (e.kind === 'Mesh') {
        if (meshes.has(e.name) && listeners.size > 0) marks(e.name).all = true;
        // A new Prometheus backend moves every proxy's metrics inbound: the mesh is built again on its next read.
        if (e.operation === 'delete' || metricsChanged(meshes.get(e.name), e.resource)) meshes.delete(e.name);
        return;
      }
      const mesh = e.mesh;
      const m = mesh === undefined ? undefined : meshes.get(mesh);
      if (!m || mesh === undefined) return;
      if (e.kind === 'Dataplane') {
        if (listeners.size > 0) marks(mesh).dataplanes = true;
        if (e.operation === 'delete' || !e.resource) removeProxy(m, mesh, e.name);
        else putProxy(m, mesh, e.name, networkingOf(m, { resource: e.resource }));
        return;
      }
      if (!MATCHED_KINDS.has(e.kind)) return;
      const after =
        e.operation === 'delete' ? undefined : (e.resource as unknown as PolicyResource | undefined);
      putPolicy(m, mesh, e.kind, e.name, after);
    } finally {
      flush();
    }
  });

  const self: MatchView<V> = {
    proxy(mesh, name) {
      const m = meshOf(mesh);
      const p = m?.proxies.get(name);
      if (p?.kind !== 'SidecarDataplane') return p;
      settle(m as MeshMatches<V>, p.cls);
      return new SidecarEntry(p.networking, p.dialled, p.cls.cells, p.cls.key);
    },
    affected(mesh, kind, name) {
      const m = meshOf(mesh);
      if (!m) return [];
      settleAll(m);
      const key = policyKey(kind, name);
      let sorted = m.sorted.get(key);
      if (!sorted) {
        const names: string[] = [...(m.affectedGateways.get(key) ?? [])];
        for (const cls of m.affectedClasses.get(key) ?? []) for (const n of cls.members) names.push(n);
        sorted = names.sort();
        m.sorted.set(key, sorted);
      }
      return sorted;
    },
    candidates(mesh, kind) {
      return [...(meshOf(mesh)?.candidates.get(kind)?.values() ?? [])];
    },
    gatewayProxies(mesh) {
      const m = meshOf(mesh);
      if (!m) return [];
      return [...m.gateways].sort().map((g) => [g, m.proxies.get(g) as GatewayProxy<V>] as const);
    },
    endpoints(mesh, service) {
      const owners = meshOf(mesh)?.served.get(service);
      if (!owners) return [];
      const out: EndpointRef[] = [];
      for (const name of [...owners.keys()].sort()) out.push(...(owners.get(name) as EndpointRef[]));
      return out;
    },
    preview(mesh, writes) {
      const m = meshOf(mesh);
      if (!m) return { total: 0, names: () => [], impact: () => undefined, callers: () => [], after: self };
      settleAll(m);
      // The candidates as the writes leave them, each write seeing the ones before it (the kinds
      // written are copies, the rest shared).
      const written = new Set(writes.map((w) => w.kind));
      const routed = written.has(ROUTE_KIND);
      const candidates = new Map(m.candidates);
      for (const kind of written) candidates.set(kind, new Map(m.candidates.get(kind)));
      const copies = new Map<MatchClass, SidecarCells>();
      // A set that only rewrites what sidecar policies set, not what they select, leaves each one
      // where it is: the classes that list it list the new version at the same attachments, and
      // nothing else moves. No class is matched again; a class's copy is made when it is read.
      const versions = new Map<string, PolicyResource | undefined>();
      const resettings =
        !routed &&
        writes.every(({ kind, name, after }) => {
          const key = policyKey(kind, name);
          const before = versions.has(key) ? versions.get(key) : m.candidates.get(kind)?.get(name);
          versions.set(key, after);
          return (
            SIDECAR_KINDS.includes(kind) &&
            SidecarCells.listingKept(kind) &&
            !!before &&
            !!after &&
            samePlacement(before, after)
          );
        });
      /** Per class, in order, the new versions of the policies it lists (the set resets them). */
      const reset = new Map<MatchClass, Array<[kind: string, policy: PolicyResource]>>();
      const gateways = new Set<string>();
      for (const { kind, name, after } of writes) {
        const byName = candidates.get(kind) as Map<string, PolicyResource>;
        const before = byName.get(name);
        if (after) byName.set(name, after);
        else byName.delete(name);
        // The gateway proxies either version can reach are matched again, as a write does.
        if (m.gateways.size > 0) {
          const selectors = [
            ...((before && gatewayReach(before)) ?? []),
            ...((after && gatewayReach(after)) ?? []),
          ];
          for (const g of selectors.length === 0 ? [] : m.gateways) {
            const tagSets = proxyInterfaces((m.proxies.get(g) as GatewayProxy<V>).networking).tagSets;
            if (selectors.some(({ match }) => tagSets.some((tags) => tagSelectorMatches(match, tags))))
              gateways.add(g);
          }
        }
        if (!SIDECAR_KINDS.includes(kind)) continue;
        if (resettings) {
          for (const cls of m.affectedClasses.get(policyKey(kind, name)) ?? []) {
            const list = reset.get(cls) ?? [];
            list.push([kind, after as PolicyResource]);
            reset.set(cls, list);
          }
          continue;
        }
        for (const cls of policyClasses(m, before, after)) {
          const { by } = cls;
          const was = by & BEFORE ? before : undefined;
          const now = by & AFTER ? after : undefined;
          let copy = copies.get(cls);
          // A version placed here where the old one is: reset like the whole set above, unless
          // this class is already being matched on a copy.
          if (
            !copy &&
            !routed &&
            was &&
            now &&
            SidecarCells.listingKept(kind) &&
            cls.cells.samePlaces(kind, was, now)
          ) {
            // Listed here, it is listed anew; placed but not listed (or not placed), nothing moves.
            if (m.affectedClasses.get(policyKey(kind, name))?.has(cls)) {
              const list = reset.get(cls) ?? [];
              list.push([kind, now]);
              reset.set(cls, list);
            }
            continue;
          }
          if (!copy) {
            copy = cls.cells.clone(routed ? undefined : written);
            // What the set reset here so far goes into the copy first.
            for (const [k, p] of reset.get(cls) ?? []) copy.swapPolicy(k, p);
            reset.delete(cls);
            copies.set(cls, copy);
          }
          copy.update(kind, was, now, candidates);
        }
      }
      let total = 0;
      // Diffed once per class, on the class's own interfaces: a member differs only in the names of
      // its inbounds and outbounds (the same ones, in the same order), put in when it is asked for.
      // The listings that may differ are the kinds written; every kind's when a route is (it moves
      // the services that the routed and dialled kinds attach to).
      const diffs = new Map<MatchClass, AttachmentImpact[]>();
      // A class whose policies the set resets changes for every member: counted now, diffed when read.
      for (const cls of reset.keys()) total += cls.members.size;
      const diffOf = (cls: MatchClass): AttachmentImpact[] | undefined => {
        const made = diffs.get(cls);
        if (made) return made;
        const list = reset.get(cls);
        if (!list) return undefined;
        const kinds = new Set(list.map(([kind]) => kind));
        const diff = cls.cells.diffKinds(copyOf(cls) as SidecarCells, kinds, cls.cells.interfaces);
        diffs.set(cls, diff);
        return diff;
      };
      /** The class's cells as the writes leave them; undefined when they do not change. */
      const copyOf = (cls: MatchClass): SidecarCells | undefined => {
        const made = copies.get(cls);
        if (made) return made;
        const list = reset.get(cls);
        if (!list) return undefined;
        let copy = cls.cells;
        for (const [kind, p] of list) copy = copy.withPolicy(kind, p);
        copies.set(cls, copy);
        return copy;
      };
      for (const [cls, copy] of copies) {
        const own = cls.cells.interfaces;
        const diff = routed
          ? diffItems(cls.cells.items(own), copy.items(own))
          : cls.cells.diffKinds(copy, written, own);
        if (diff.length === 0) continue;
        diffs.set(cls, diff);
        total += cls.members.size;
      }
      const gatewayViews = new Map<string, V | undefined>();
      const gatewayDiffs = new Map<string, AttachmentImpact[]>();
      if (gateways.size > 0) {
        const keys = new Set(writes.map((w) => policyKey(w.kind, w.name)));
        for (const g of gateways) {
          const p = m.proxies.get(g) as GatewayProxy<V>;
          const view = gateway.view(p.networking, candidates);
          gatewayViews.set(g, view);
          const was = p.view === undefined ? [] : gateway.policiesIn(p.view);
          const diff = diffPolicyKeys(was, view === undefined ? [] : gateway.policiesIn(view), keys);
          if (diff.length === 0) continue;
          gatewayDiffs.set(g, diff);
          total++;
        }
      }
      let names: string[] | undefined;
      let callers: string[] | undefined;
      const after: MatchReads<V> = {
        proxy(meshName, name) {
          const p = meshName === mesh ? m.proxies.get(name) : undefined;
          if (p?.kind === 'SidecarDataplane') {
            const copy = copyOf(p.cls);
            if (copy) return new SidecarEntry(p.networking, p.dialled, copy, p.cls.key);
          } else if (p && gatewayViews.has(name)) {
            return { kind: 'MeshGatewayDataplane', networking: p.networking, view: gatewayViews.get(name) };
          }
          return self.proxy(meshName, name);
        },
        endpoints: (meshName, service) => self.endpoints(meshName, service),
        inboundPolicies(meshName, name, index, kind) {
          // The copies differ from the view in the kinds written only (unless a route is).
          if (!routed && !written.has(kind)) return self.inboundPolicies(meshName, name, index, kind);
          const p = meshName === mesh ? m.proxies.get(name) : undefined;
          const copy = p?.kind === 'SidecarDataplane' ? copyOf(p.cls) : undefined;
          if (copy) return copy.policiesAt(inboundLocation(index), kind);
          return self.inboundPolicies(meshName, name, index, kind);
        },
      };
      return {
        total,
        names() {
          if (names) return names;
          names = [];
          if (total === 0) return names;
          m.names ??= [...m.proxies.keys()].sort();
          for (const name of m.names) {
            const p = m.proxies.get(name) as SidecarProxy | GatewayProxy<V>;
            const changed =
              p.kind === 'SidecarDataplane' ? diffs.has(p.cls) || reset.has(p.cls) : gatewayDiffs.has(name);
            if (changed) names.push(name);
          }
          return names;
        },
        impact(name) {
          const p = m.proxies.get(name);
          if (p?.kind === 'MeshGatewayDataplane') {
            const attachments = gatewayDiffs.get(name);
            return attachments && { proxy: name, kind: 'gateway', attachments };
          }
          const diff = p && diffOf(p.cls);
          if (!p || !diff) return undefined;
          const own = p.cls.cells.interfaces;
          const inboundAt = new Map(own.inbounds.map((ib, i) => [ib.name, i]));
          const outboundAt = new Map(own.outbounds.map((ob, j) => [ob.name, j]));
          const mine = proxyInterfaces(p.networking, p.dialled);
          const renamed = (a: AttachmentImpact): string => {
            if (a.type === 'inbound') return mine.inbounds[inboundAt.get(a.name) as number].name;
            if (a.type === 'outbound') return mine.outbounds[outboundAt.get(a.name) as number].name;
            return a.name;
          };
          const attachments = diff.map((a) => ({ ...a, name: renamed(a) })).sort(byAttachment);
          return { proxy: name, kind: p.dialled ? 'proxyless' : 'sidecar', attachments };
        },
        callers() {
          if (callers) return callers;
          const services = new Set<string>();
          // Reset classes list only the kinds written: their diffs matter when one is dialled.
          if (writes.some((w) => DIALLED.has(w.kind))) for (const cls of reset.keys()) diffOf(cls);
          for (const diff of diffs.values())
            for (const a of diff)
              if (a.type === 'inbound' && DIALLED.has(a.policyKind)) services.add(a.service);
          const reaching = new Set<MatchClass>();
          for (const service of services)
            for (const cls of m.reachIndex.get(service) ?? []) reaching.add(cls);
          callers = [];
          for (const cls of reaching) for (const name of cls.members) callers.push(name);
          return callers.sort();
        },
        after,
      };
    },
    inboundPolicies(mesh, name, index, kind) {
      const m = meshOf(mesh);
      const p = m?.proxies.get(name);
      if (p?.kind !== 'SidecarDataplane') return [];
      settle(m as MeshMatches<V>, p.cls);
      return p.cls.cells.policiesAt(inboundLocation(index), kind);
    },
    setDialled(mesh, name, stream, services) {
      if (!dialledBy.set(mesh, name, stream, services)) return;
      const m = meshes.get(mesh);
      const p = m?.proxies.get(name);
      if (!m || p?.kind !== 'SidecarDataplane') return;
      try {
        redial(m, mesh, name, p);
      } finally {
        flush();
      }
    },
    over(other) {
      return createMatchView(other, gateway, dialledBy);
    },
    onProxiesChanged(listener) {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    async buildAll(opts = {}) {
      const sliceMs = opts.sliceMs ?? 10;
      const startedAt = Date.now();
      const t0 = performance.now();
      const todo: string[] = [];
      views.each('Mesh', undefined, (item) => {
        if (!meshes.has(item.name) && views.count('Dataplane', item.name) > 0) todo.push(item.name);
      });
      let longest = 0;
      let proxies = 0;
      for (const mesh of todo) {
        if (!views.get('Mesh', undefined, mesh) || meshes.has(mesh)) continue;
        const m = start(mesh);
        const steps = m.steps as Generator<void, void, void>;
        for (;;) {
          const began = performance.now();
          let done = false;
          // Time is read after every step: one step is a proxy or a policy through its reach, and a
          // policy that reaches every class of a large mesh is milliseconds on its own.
          while (!(done = stepQuietly(steps)) && performance.now() - began < sliceMs);
          longest = Math.max(longest, performance.now() - began);
          if (done) break;
          await new Promise<void>((resolve) => setImmediate(resolve));
          if (meshes.get(mesh) !== m) break; // deleted meanwhile
        }
        proxies += m.proxies.size;
      }
      const round = (ms: number): number => Math.round(ms * 10) / 10;
      return {
        meshes: todo.length,
        proxies,
        longestSliceMs: round(longest),
        startedAt,
        ms: round(performance.now() - t0),
      };
    },
  };
  return self;
}

/**
 * True when two versions of a policy select the same proxies at the same ranks: they differ only in
 * what they set (`conf`; a targetRef rule's `default`) and when they were written. Matching reads
 * the rest (selectors, target refs, creation time), so the new version is placed where the old is.
 */
function samePlacement(before: PolicyResource, after: PolicyResource): boolean {
  return deepEqual(placementOf(before), placementOf(after));
}

function placementOf(policy: PolicyResource): Record<string, unknown> {
  const {
    conf: _conf,
    modificationTime: _time,
    spec,
    ...rest
  } = policy as unknown as Record<string, unknown>;
  if (typeof spec !== 'object' || spec === null) return rest;
  const withoutDefault = (rules: unknown): unknown =>
    Array.isArray(rules)
      ? rules.map((r: unknown) => {
          if (typeof r !== 'object' || r === null) return r;
          const { default: _default, ...selects } = r as Record<string, unknown>;
          return selects;
        })
      : rules;
  const s = spec as Record<string, unknown>;
  return { ...rest, spec: { ...s, from: withoutDefault(s.from), to: withoutDefault(s.to) } };
}

/** True when a Mesh write changes the Prometheus backend its built matches used. */
function metricsChanged(
  m: { prometheus: PrometheusConf | undefined } | undefined,
  mesh: object | undefined,
): boolean {
  return m !== undefined && !deepEqual(m.prometheus, meshPrometheus(mesh));
}
