/**
 * The match view: which policies apply to which proxy, kept as a projection (issue 16 point 6).
 *
 * A mesh's matches are built on its first inspect read (like mesh insights: start-up replays nothing
 * into them), then every committed write keeps them current before the write answers, because the
 * resource views call their listeners synchronously as they apply an entry:
 * - a proxy write re-matches that proxy alone;
 * - a Mesh write that changes its enabled Prometheus backend (every proxy's metrics inbound,
 *   metrics-inbound.ts) drops the mesh's matches: they are built again on the next read;
 * - sidecars that match identically (same inbound tags, outbound services and gateway tags, in
 *   order: replicas of one workload) share one match class and its cells (`matchClassKey`), so the
 *   work of a write scales with the distinct workloads it reaches, not with their replicas;
 * - a policy write re-matches only the classes its selectors can reach (`reachSelectors`, looked up
 *   through a tag index of the classes), and on each only the places of that one policy (`SidecarCells`);
 * - the reverse index (policy → the classes and gateway proxies that list it) moves with each change,
 *   so "proxies affected by a policy" is a look-up, not a scan of the mesh (the reference recomputes
 *   every proxy of the mesh per request); its sorted proxy names are kept until they may change.
 * Building a mesh goes the same way, policy by policy through its reach, so its cost is the number of
 * (policy, reached proxy) pairs rather than proxies × policies.
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
import { isBuiltinGateway, proxyInterfaces, type Networking } from './proxy-interfaces.js';
import { reachSelectors } from './reach-selectors.js';
import { matchClassKey, SidecarCells, SIDECAR_KINDS, type Candidates } from './sidecar-cells.js';
import { MATCH_ALL, tagSelectorMatches } from './tag-selector.js';

type ChangeEntry = Parameters<Parameters<ResourceViews['onChange']>[0]>[0];

/** The kinds that shape gateway proxies' views besides the policies. */
export const GATEWAY_KINDS: readonly string[] = ['MeshGateway', 'MeshGatewayRoute'];

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

/** One proxy's matches; a sidecar's cells are shared with every proxy of its match class. */
export type ProxyMatches<V> =
  | { kind: 'SidecarDataplane'; networking: Networking; cells: SidecarCells }
  | { kind: 'MeshGatewayDataplane'; networking: Networking; view: V | undefined };

/** Sidecars that match identically (`matchClassKey`): one set of cells, the proxies that share it. */
interface MatchClass {
  key: string;
  cells: SidecarCells;
  members: Set<string>;
}

interface SidecarProxy {
  kind: 'SidecarDataplane';
  networking: Networking;
  cls: MatchClass;
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
  /** `key\0value` and `key` → the classes one of whose tag sets has that tag (or key). */
  classIndex: Map<string, Set<MatchClass>>;
  /** Built-in gateway proxies, re-matched whole on any change that can reach them. */
  gateways: Set<string>;
  /** `Kind/name` → the match classes whose cells list it. */
  affectedClasses: Map<string, Set<MatchClass>>;
  /** `Kind/name` → the gateway proxies whose views list it. */
  affectedGateways: Map<string, Set<string>>;
  /** The sorted proxies of each policy, made on read and dropped when they may have changed. */
  sorted: Map<string, string[]>;
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
}

const policyKey = (kind: string, name: string): string => `${kind}/${name}`;
const tagKey = (k: string, v: string): string => `${k}\u0000${v}`;

/** Creates the view over the resource views; it follows their changes from now on. */
export function createMatchView<V>(views: ResourceViews, gateway: GatewayMatcher<V>): MatchView<V> {
  const meshes = new Map<string, MeshMatches<V>>();
  /** While a mesh is built, gateway proxies wait to be matched once at the end. */
  let building = false;

  /** A proxy's networking as it is matched: with the metrics inbound of its mesh's backend. */
  const networkingOf = (m: MeshMatches<V>, item: Pick<ViewItem, 'resource'>): Networking =>
    matchNetworking(item.resource, m.prometheus);

  /** Drops the sorted proxies of the policies a class lists (its members changed). */
  const forgetSorted = (m: MeshMatches<V>, cls: MatchClass): void => {
    for (const kind of SIDECAR_KINDS)
      for (const n of cls.cells.namesOf(kind)) m.sorted.delete(policyKey(kind, n));
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
    m.sorted.delete(key);
  };

  /** Runs `change` on a class's cells and moves the reverse index by what it changed for `kinds`. */
  const tracked = (
    m: MeshMatches<V>,
    cls: MatchClass,
    kinds: readonly string[],
    change: () => void,
  ): void => {
    const before = kinds.map((k) => cls.cells.namesOf(k));
    change();
    kinds.forEach((kind, i) => {
      const after = cls.cells.namesOf(kind);
      for (const n of before[i])
        if (!after.has(n)) link(m, m.affectedClasses, policyKey(kind, n), cls, false);
      for (const n of after) if (!before[i].has(n)) link(m, m.affectedClasses, policyKey(kind, n), cls, true);
    });
  };

  const gatewayPolicies = (p: GatewayProxy<V>): Set<string> =>
    new Set(p.view !== undefined ? gateway.policiesIn(p.view) : []);

  const rematchGateway = (m: MeshMatches<V>, name: string): void => {
    const p = m.proxies.get(name);
    if (p?.kind !== 'MeshGatewayDataplane') return;
    const before = gatewayPolicies(p);
    p.view = gateway.view(p.networking, m.candidates);
    const after = gatewayPolicies(p);
    for (const k of before) if (!after.has(k)) link(m, m.affectedGateways, k, name, false);
    for (const k of after) if (!before.has(k)) link(m, m.affectedGateways, k, name, true);
  };

  const classTags = (cls: MatchClass): Set<string> => {
    const keys = new Set<string>();
    for (const tags of cls.cells.interfaces.reachTagSets) {
      for (const k in tags) {
        keys.add(k);
        keys.add(tagKey(k, tags[k]));
      }
    }
    return keys;
  };

  const removeProxy = (m: MeshMatches<V>, name: string): void => {
    const p = m.proxies.get(name);
    if (!p) return;
    m.proxies.delete(name);
    if (p.kind === 'MeshGatewayDataplane') {
      for (const k of gatewayPolicies(p)) link(m, m.affectedGateways, k, name, false);
      m.gateways.delete(name);
      return;
    }
    const { cls } = p;
    cls.members.delete(name);
    forgetSorted(m, cls);
    if (cls.members.size > 0) return;
    // The last member gone: the class and its links go too.
    m.classes.delete(cls.key);
    for (const kind of SIDECAR_KINDS) {
      for (const n of cls.cells.namesOf(kind)) link(m, m.affectedClasses, policyKey(kind, n), cls, false);
    }
    for (const t of classTags(cls)) link(m, m.classIndex, t, cls, false);
  };

  const putProxy = (m: MeshMatches<V>, name: string, networking: Networking): void => {
    removeProxy(m, name);
    if (networking.gateway && isBuiltinGateway(networking)) {
      m.proxies.set(name, { kind: 'MeshGatewayDataplane', networking, view: undefined });
      m.gateways.add(name);
      if (!building) rematchGateway(m, name);
      return;
    }
    const key = matchClassKey(networking);
    let cls = m.classes.get(key);
    if (!cls) {
      const created: MatchClass = { key, cells: new SidecarCells(networking), members: new Set() };
      cls = created;
      m.classes.set(key, cls);
      for (const t of classTags(cls)) link(m, m.classIndex, t, cls, true);
      tracked(m, cls, SIDECAR_KINDS, () => created.cells.recomputeAll(m.candidates));
    }
    cls.members.add(name);
    forgetSorted(m, cls);
    m.proxies.set(name, { kind: 'SidecarDataplane', networking, cls });
  };

  /** The classes one of whose tag sets one of `policy`'s reach selectors matches. */
  const reached = (m: MeshMatches<V>, policy: PolicyResource, into: Set<MatchClass>): void => {
    for (const { match } of reachSelectors(policy) ?? []) {
      // Walk the classes of the rarest tag the selector names (a concrete value, else the key).
      let pool: Iterable<MatchClass> | undefined;
      let size = Infinity;
      for (const k in match) {
        const set = m.classIndex.get(match[k] === MATCH_ALL ? k : tagKey(k, match[k]));
        if (!set) {
          pool = [];
          break;
        }
        if (set.size < size) {
          pool = set;
          size = set.size;
        }
      }
      for (const cls of pool ?? m.classes.values()) {
        if (cls.cells.interfaces.reachTagSets.some((tags) => tagSelectorMatches(match, tags))) into.add(cls);
      }
    }
  };

  const putPolicy = (
    m: MeshMatches<V>,
    kind: string,
    name: string,
    after: PolicyResource | undefined,
  ): void => {
    let byName = m.candidates.get(kind);
    if (!byName) m.candidates.set(kind, (byName = new Map()));
    const before = byName.get(name);
    if (after) byName.set(name, after);
    else byName.delete(name);
    if (SIDECAR_KINDS.includes(kind)) {
      const classes = new Set<MatchClass>();
      if (before) reached(m, before, classes);
      if (after) reached(m, after, classes);
      for (const cls of classes) {
        for (const c of cls.cells.update(kind, before, after, m.candidates)) {
          link(m, m.affectedClasses, policyKey(c.kind, c.name), cls, c.listed);
        }
      }
    }
    // Gateway views read gateways, routes and per-destination policies: re-match the gateway proxies
    // the old or the new version can reach (`gatewayReach`: most kinds reach every gateway proxy).
    if (!building && m.gateways.size > 0) {
      const selectors = [
        ...((before && gatewayReach(before)) ?? []),
        ...((after && gatewayReach(after)) ?? []),
      ];
      if (selectors.length === 0) return;
      for (const g of m.gateways) {
        const p = m.proxies.get(g) as GatewayProxy<V>;
        const tagSets = proxyInterfaces(p.networking).tagSets;
        if (selectors.some(({ match }) => tagSets.some((tags) => tagSelectorMatches(match, tags)))) {
          rematchGateway(m, g);
        }
      }
    }
  };

  /** Builds a mesh: proxies first, then each policy through its reach (routes first). */
  const build = (mesh: string): MeshMatches<V> => {
    const m: MeshMatches<V> = {
      prometheus: meshPrometheus(views.get('Mesh', undefined, mesh)?.resource),
      candidates: new Map(),
      proxies: new Map(),
      classes: new Map(),
      classIndex: new Map(),
      gateways: new Set(),
      affectedClasses: new Map(),
      affectedGateways: new Map(),
      sorted: new Map(),
    };
    meshes.set(mesh, m);
    building = true;
    try {
      views.each('Dataplane', mesh, (item) => putProxy(m, item.name, networkingOf(m, item)));
      for (const kind of MATCHED_KINDS) {
        views.each(kind, mesh, (item) =>
          putPolicy(m, kind, item.name, item.resource as unknown as PolicyResource),
        );
      }
    } finally {
      building = false;
    }
    for (const g of m.gateways) rematchGateway(m, g);
    return m;
  };

  const meshOf = (mesh: string): MeshMatches<V> | undefined => {
    if (!views.get('Mesh', undefined, mesh)) return undefined;
    return meshes.get(mesh) ?? build(mesh);
  };

  views.onChange((e: ChangeEntry) => {
    if (e.kind === 'Mesh') {
      // A new Prometheus backend moves every proxy's metrics inbound: the mesh is built again on its next read.
      if (e.operation === 'delete' || metricsChanged(meshes.get(e.name), e.resource)) meshes.delete(e.name);
      return;
    }
    const m = e.mesh === undefined ? undefined : meshes.get(e.mesh);
    if (!m) return;
    if (e.kind === 'Dataplane') {
      if (e.operation === 'delete' || !e.resource) removeProxy(m, e.name);
      else putProxy(m, e.name, networkingOf(m, { resource: e.resource }));
      return;
    }
    if (!MATCHED_KINDS.has(e.kind)) return;
    const after =
      e.operation === 'delete' ? undefined : (e.resource as unknown as PolicyResource | undefined);
    putPolicy(m, e.kind, e.name, after);
  });

  return {
    proxy(mesh, name) {
      const p = meshOf(mesh)?.proxies.get(name);
      if (p?.kind !== 'SidecarDataplane') return p;
      return { kind: p.kind, networking: p.networking, cells: p.cls.cells };
    },
    affected(mesh, kind, name) {
      const m = meshOf(mesh);
      if (!m) return [];
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
  };
}

/** True when a Mesh write changes the Prometheus backend its built matches used. */
function metricsChanged(
  m: { prometheus: PrometheusConf | undefined } | undefined,
  mesh: object | undefined,
): boolean {
  return m !== undefined && !deepEqual(m.prometheus, meshPrometheus(mesh));
}
