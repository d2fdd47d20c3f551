/**
 * The match view: which policies apply to which proxy, kept as a projection (issue 16 point 6).
 *
 * A mesh's matches are built on its first inspect read (like mesh insights: start-up replays nothing
 * into them), then every committed write keeps them current before the write answers, because the
 * resource views call their listeners synchronously as they apply an entry:
 * - a proxy write re-matches that proxy alone;
 * - a policy write re-matches only the proxies its selectors can reach (`reachSelectors`, looked up
 *   through the views' tag index), and on each only the places of that one policy (`SidecarCells`);
 * - the reverse index (policy → the proxies it is listed on) moves with each change, so "proxies
 *   affected by a policy" is a look-up, not a scan of the mesh (the reference recomputes every proxy of
 *   the mesh per request).
 * Building a mesh goes the same way, policy by policy through its reach, so its cost is the number of
 * (policy, reached proxy) pairs rather than proxies × policies.
 *
 * Built-in gateway proxies are matched by the gateway half (`GatewayMatcher`): their view is
 * recomputed whole when anything in the mesh that can change it is written (few proxies, small views).
 */
import type { ResourceViews, ViewItem } from '../projections/resource-views.js';
import { TARGET_REF_POLICY_KINDS, type SidecarItem } from './match-sidecar.js';
import type { PolicyResource } from './policy-resource.js';
import { isBuiltinGateway, type Networking } from './proxy-interfaces.js';
import { reachSelectors } from './reach-selectors.js';
import { SidecarCells, SIDECAR_KINDS, type Candidates } from './sidecar-cells.js';

type ChangeEntry = Parameters<Parameters<ResourceViews['onChange']>[0]>[0];

/** The kinds that shape gateway proxies' views besides the policies. */
export const GATEWAY_KINDS: readonly string[] = ['MeshGateway', 'MeshGatewayRoute'];

/** Every kind whose resources the view keeps as candidates. */
export const MATCHED_KINDS: ReadonlySet<string> = new Set([...SIDECAR_KINDS, ...GATEWAY_KINDS]);

/** An attachment through which a policy applies to a sidecar (spec 2.20). */
export interface Attachment {
  type: SidecarItem['type'];
  name: string;
  service?: string;
}

/** The gateway half: what a built-in gateway proxy's view is, computed whole. */
export interface GatewayMatcher<V> {
  /** The view of one gateway proxy, or undefined when no MeshGateway selects it. */
  view(networking: Networking, candidates: Candidates): V | undefined;
  /** The names (`Kind/name`) of the policies listed anywhere in a view. */
  policiesIn(view: V): Iterable<string>;
}

/** One proxy's matches. */
export type ProxyMatches<V> =
  | { kind: 'SidecarDataplane'; cells: SidecarCells }
  | { kind: 'MeshGatewayDataplane'; networking: Networking; view: V | undefined };

interface MeshMatches<V> {
  candidates: Map<string, Map<string, PolicyResource>>;
  proxies: Map<string, ProxyMatches<V>>;
  /** Built-in gateway proxies, re-matched whole on any change that can reach them. */
  gateways: Set<string>;
  /** `Kind/name` → the proxies whose matches list it. */
  affected: Map<string, Set<string>>;
  /** Sorted copies of `affected` sets, made on read and dropped when the set changes. */
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
const TARGET_REF: ReadonlySet<string> = new Set(TARGET_REF_POLICY_KINDS);

/** Creates the view over the resource views; it follows their changes from now on. */
export function createMatchView<V>(views: ResourceViews, gateway: GatewayMatcher<V>): MatchView<V> {
  const meshes = new Map<string, MeshMatches<V>>();
  /** While a mesh is built, gateway proxies wait to be matched once at the end. */
  let building = false;

  const networkingOf = (item: Pick<ViewItem, 'resource'>): Networking =>
    (item.resource.networking ?? { address: '' }) as Networking;

  const link = (m: MeshMatches<V>, key: string, proxy: string, on: boolean): void => {
    let set = m.affected.get(key);
    if (on) {
      if (!set) m.affected.set(key, (set = new Set()));
      if (set.has(proxy)) return;
      set.add(proxy);
    } else {
      if (!set?.delete(proxy)) return;
      if (set.size === 0) m.affected.delete(key);
    }
    m.sorted.delete(key);
  };

  /** Runs `change` on a sidecar and moves the reverse index by what it changed for `kinds`. */
  const tracked = (
    m: MeshMatches<V>,
    proxy: string,
    cells: SidecarCells,
    kinds: readonly string[],
    change: () => void,
  ): void => {
    const before = kinds.map((k) => cells.namesOf(k));
    change();
    kinds.forEach((kind, i) => {
      const after = cells.namesOf(kind);
      for (const n of before[i]) if (!after.has(n)) link(m, policyKey(kind, n), proxy, false);
      for (const n of after) if (!before[i].has(n)) link(m, policyKey(kind, n), proxy, true);
    });
  };

  const gatewayPolicies = (p: ProxyMatches<V> | undefined): Set<string> =>
    new Set(p?.kind === 'MeshGatewayDataplane' && p.view !== undefined ? gateway.policiesIn(p.view) : []);

  const rematchGateway = (m: MeshMatches<V>, name: string): void => {
    const p = m.proxies.get(name);
    if (p?.kind !== 'MeshGatewayDataplane') return;
    const before = gatewayPolicies(p);
    p.view = gateway.view(p.networking, m.candidates);
    const after = gatewayPolicies(p);
    for (const k of before) if (!after.has(k)) link(m, k, name, false);
    for (const k of after) if (!before.has(k)) link(m, k, name, true);
  };

  const removeProxy = (m: MeshMatches<V>, name: string): void => {
    const p = m.proxies.get(name);
    if (!p) return;
    if (p.kind === 'SidecarDataplane') {
      for (const kind of SIDECAR_KINDS)
        for (const n of p.cells.namesOf(kind)) link(m, policyKey(kind, n), name, false);
    } else {
      for (const k of gatewayPolicies(p)) link(m, k, name, false);
      m.gateways.delete(name);
    }
    m.proxies.delete(name);
  };

  const putProxy = (m: MeshMatches<V>, name: string, networking: Networking): void => {
    removeProxy(m, name);
    if (networking.gateway && isBuiltinGateway(networking)) {
      m.proxies.set(name, { kind: 'MeshGatewayDataplane', networking, view: undefined });
      m.gateways.add(name);
      rematchGateway(m, name);
      return;
    }
    const cells = new SidecarCells(networking);
    m.proxies.set(name, { kind: 'SidecarDataplane', cells });
    tracked(m, name, cells, SIDECAR_KINDS, () => cells.recomputeAll(m.candidates));
  };

  /** The sidecar proxies of the mesh that one of `policy`'s reach selectors matches. */
  const reached = (mesh: string, policy: PolicyResource, into: Set<string>): void => {
    for (const { match } of reachSelectors(policy) ?? []) {
      const tags = Object.entries(match);
      const page = views.page('Dataplane', { mesh, offset: 0, size: Number.MAX_SAFE_INTEGER, tags });
      for (const item of page.items) into.add(item.name);
    }
  };

  const putPolicy = (
    m: MeshMatches<V>,
    mesh: string,
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
      const proxies = new Set<string>();
      if (before) reached(mesh, before, proxies);
      if (after) reached(mesh, after, proxies);
      // A route change moves where the routed kinds attach: those are tracked too.
      const kinds =
        kind === 'TrafficRoute' ? ['TrafficRoute', 'HealthCheck', 'CircuitBreaker', 'Retry'] : [kind];
      for (const proxy of proxies) {
        const p = m.proxies.get(proxy);
        if (p?.kind !== 'SidecarDataplane') continue;
        tracked(m, proxy, p.cells, kinds, () => p.cells.update(kind, before, after, m.candidates));
      }
    }
    // Gateway views read gateways, routes and per-destination policies; targetRef listeners carry
    // tags no index holds. Gateway proxies are few: re-match them all.
    if (
      !building &&
      m.gateways.size > 0 &&
      (GATEWAY_KINDS.includes(kind) || SIDECAR_KINDS.includes(kind) || TARGET_REF.has(kind))
    ) {
      for (const g of m.gateways) rematchGateway(m, g);
    }
  };

  /** Builds a mesh: proxies first, then each policy through its reach (routes first). */
  const build = (mesh: string): MeshMatches<V> => {
    const m: MeshMatches<V> = {
      candidates: new Map(),
      proxies: new Map(),
      gateways: new Set(),
      affected: new Map(),
      sorted: new Map(),
    };
    meshes.set(mesh, m);
    building = true;
    try {
      views.each('Dataplane', mesh, (item) => putProxy(m, item.name, networkingOf(item)));
      for (const kind of MATCHED_KINDS) {
        views.each(kind, mesh, (item) =>
          putPolicy(m, mesh, kind, item.name, item.resource as unknown as PolicyResource),
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
      if (e.operation === 'delete') meshes.delete(e.name);
      return;
    }
    const m = e.mesh === undefined ? undefined : meshes.get(e.mesh);
    if (!m || e.mesh === undefined) return;
    if (e.kind === 'Dataplane') {
      if (e.operation === 'delete' || !e.resource) {
        removeProxy(m, e.name);
      } else {
        putProxy(m, e.name, networkingOf({ resource: e.resource }));
      }
      return;
    }
    if (!MATCHED_KINDS.has(e.kind)) return;
    const after =
      e.operation === 'delete' ? undefined : (e.resource as unknown as PolicyResource | undefined);
    putPolicy(m, e.mesh, e.kind, e.name, after);
  });

  return {
    proxy(mesh, name) {
      return meshOf(mesh)?.proxies.get(name);
    },
    affected(mesh, kind, name) {
      const m = meshOf(mesh);
      if (!m) return [];
      const key = policyKey(kind, name);
      let sorted = m.sorted.get(key);
      if (!sorted) {
        sorted = [...(m.affected.get(key) ?? [])].sort();
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
      return [...m.gateways].sort().map((g) => [g, m.proxies.get(g) as ProxyMatches<V>] as const);
    },
  };
}
