/**
 * What a decided write would do to the mesh's proxies (a change's impact): every proxy whose matched
 * policies or served xDS config would change, with the policies added, removed or replaced at each
 * of its attachments and the xDS resources that would change. Computed by the policy engine on the
 * decided state, never by applying and undoing: the state after is the views with the decided
 * entries laid over them (`overlayViews`), and the config of a proxy is rendered from each state.
 *
 * Two ways, by what the write touches in a mesh:
 * - policies only: the engine's preview diffs each match class it reaches once, so the total is
 *   exact at the cost of the classes, and only the proxies of the page asked for are rendered. A
 *   proxy's config reads its own matches and the faults at its endpoints' inbounds: it cannot change
 *   unless its matches do, or it calls a service whose inbound faults change (those callers are
 *   rendered in both states to see);
 * - a Dataplane or the Mesh itself: endpoints, callers and every proxy's settings may move, so a
 *   match view of the state after is built and every proxy of the mesh is matched and rendered in
 *   both states.
 * Other kinds (secrets, zones, external services…) reach no proxy's matches or config.
 */
import { createTwoFilesPatch } from 'diff';
import type { EventInput } from '../events/types.js';
import { gatewayMatcher } from '../policies/gateway-matcher.js';
import {
  diffItems,
  diffPolicyKeys,
  MATCHED_KINDS,
  type AttachmentImpact,
  type MatchImpact,
  type MatchReads,
  type MatchView,
  type ProxyMatches,
} from '../policies/match-view.js';
import type { GatewayView } from '../policies/match-gateway.js';
import { overlayViews } from '../projections/overlay-views.js';
import { deepEqual } from '../util/deep-equal.js';
import type { ResourceViews } from '../projections/resource-views.js';
import { policyKey, splitServedKey } from '../resources/keys.js';

/** A proxy's served xDS resources (`servedKey` → the resource), or undefined when it has none. */
export type Render = (
  views: ResourceViews,
  matches: MatchReads<unknown>,
  mesh: string,
  name: string,
  /** Only the resources of these dialled services (undefined: all of them). */
  only?: ReadonlySet<string>,
) => ReadonlyMap<string, Readonly<Record<string, unknown>>> | undefined;

/** How a proxy's served xDS config is rendered, given by the xDS layer. */
export interface RenderResources {
  /** A renderer for one computation: the proxies rendered from one state share what they read of the mesh. */
  begin(): Render;
  /** Whether a change of policies at this attachment can change the config (else it is not rendered to see). */
  reads(at: AttachmentImpact): boolean;
}

/** One xDS resource that would change. */
export interface ResourceChange {
  /** `Listener`, `Cluster` or `ClusterLoadAssignment`. */
  type: string;
  name: string;
  change: 'added' | 'removed' | 'changed';
  /** The unified diff of its JSON, when asked for. */
  diff?: string;
}

/** One proxy a write would change. */
export interface ProxyImpact {
  mesh: string;
  name: string;
  /** The zone it runs in (null on a standalone control plane). */
  zone: string | null;
  kind: 'sidecar' | 'gateway' | 'proxyless';
  /** The proxy itself is created or deleted by the write. */
  proxy?: 'created' | 'deleted';
  attachments: AttachmentImpact[];
  resources: ResourceChange[];
}

/** A page of the impact, with the exact total. */
export interface Impact {
  total: number;
  items: ProxyImpact[];
}

export interface ImpactQuery {
  offset: number;
  size: number;
  /** Add each changed resource's diff. */
  diff: boolean;
}

export interface ImpactDeps {
  views: ResourceViews;
  matches: MatchView<GatewayView>;
  render: RenderResources;
  /** This control plane's zone (zone mode): the zone of its own proxies. */
  localZone?: string;
}

type Matches = MatchReads<unknown>;

/** No render (the proxy or its mesh is not in that state), as a key. */
const NO_RENDER: ReadonlyMap<string, unknown> = new Map();

/** The proxies of one mesh a write changes: how many, which (sorted), and each one's impact. */
interface MeshImpact {
  total: number;
  names(): readonly string[];
  /** The proxy's impact, resources filled (with their diffs when `diff`). */
  item(name: string, diff: boolean): ProxyImpact;
}

/** The mesh a change is in (a Mesh is in itself); undefined for global kinds. */
const meshOf = (e: EventInput): string | undefined => (e.kind === 'Mesh' ? e.name : e.mesh);

/** Creates the impact computation over the live views and match view. */
export function createImpact(deps: ImpactDeps): (events: readonly EventInput[], q: ImpactQuery) => Impact {
  const { views, matches } = deps;
  const { reads } = deps.render;
  /** The renderer of the computation under way (one per computation: the states it reads are its own). */
  let render: Render;

  const zoneOf = (v: ResourceViews, mesh: string, name: string): string | null => {
    const item = v.get('Dataplane', mesh, name);
    if (!item || item.origin === 'local') return deps.localZone ?? null;
    return item.origin;
  };

  const kindOf = (entry: ProxyMatches<unknown>): ProxyImpact['kind'] =>
    entry.kind === 'MeshGatewayDataplane' ? 'gateway' : entry.dialled ? 'proxyless' : 'sidecar';

  /**
   * What `resourceChanges` found per pair of renders, in the computation under way: a renderer may
   * hand one render to every proxy that shares it (a match class), and their changes are then
   * compared once.
   */
  let pairs: WeakMap<object, WeakMap<object, { plain?: ResourceChange[]; diffed?: ResourceChange[] }>>;
  const changesOnce = (
    before: ReadonlyMap<string, unknown> | undefined,
    after: ReadonlyMap<string, unknown> | undefined,
    diff: boolean,
  ): ResourceChange[] => {
    const b = before ?? NO_RENDER;
    const a = after ?? NO_RENDER;
    let byAfter = pairs.get(b);
    if (!byAfter) pairs.set(b, (byAfter = new WeakMap()));
    let found = byAfter.get(a);
    if (!found) byAfter.set(a, (found = {}));
    return diff
      ? (found.diffed ??= resourceChanges(before, after, true))
      : (found.plain ??= resourceChanges(before, after, false));
  };

  /** The xDS resources that differ between two renders, sorted by type then name. */
  const resourceChanges = (
    before: ReadonlyMap<string, unknown> | undefined,
    after: ReadonlyMap<string, unknown> | undefined,
    diff: boolean,
  ): ResourceChange[] => {
    const out: ResourceChange[] = [];
    const keys = new Set([...(before?.keys() ?? []), ...(after?.keys() ?? [])]);
    for (const key of [...keys].sort()) {
      const b = before?.get(key);
      const a = after?.get(key);
      if (deepEqual(b, a)) continue;
      const [type, name] = splitServedKey(key);
      const change = b === undefined ? 'added' : a === undefined ? 'removed' : 'changed';
      const item: ResourceChange = { type, name, change };
      if (diff) item.diff = jsonDiff(`${type}/${name}`, b, a);
      out.push(item);
    }
    return out;
  };

  /** A mesh whose written resources are policies only: the engine's preview. */
  const previewed = (mesh: string, events: readonly EventInput[]): MeshImpact => {
    const preview = matches.preview(
      mesh,
      events.map((e) => ({
        kind: e.kind,
        name: e.name,
        after: e.operation === 'delete' ? undefined : (e.resource as never),
      })),
    );
    const resourcesOf = (name: string, diff: boolean, only?: ReadonlySet<string>): ResourceChange[] =>
      changesOnce(
        render(views, matches, mesh, name, only),
        render(views, preview.after, mesh, name, only),
        diff,
      );
    // Callers whose matches stay but whose config reads the faults that change: rendered to see,
    // and what they showed kept for the page (asked again only for the diffs).
    const callerSet = new Set(preview.callers());
    const callerResources = new Map<string, ResourceChange[]>();
    for (const name of callerSet) {
      if (preview.impact(name)) continue;
      const resources = resourcesOf(name, false);
      if (resources.length > 0) callerResources.set(name, resources);
    }
    const callers = [...callerResources.keys()];
    /**
     * The resources that change for one proxy: rendered only when a change its config reads is
     * among its attachments, or it calls where faults change; and when the changes it reads are all
     * at outbounds, only those outbounds' services (a service's resources are its own).
     */
    const resourcesAfter = (
      name: string,
      found: MatchImpact | undefined,
      diff: boolean,
    ): ResourceChange[] => {
      const seen = diff ? undefined : callerResources.get(name);
      if (seen) return seen;
      if (!found || callerSet.has(name)) return resourcesOf(name, diff);
      const read = found.attachments.filter(reads);
      if (read.length === 0) return [];
      const outbounds = read.every((a) => a.type === 'outbound');
      return resourcesOf(name, diff, outbounds ? new Set(read.map((a) => a.service)) : undefined);
    };
    let names: readonly string[] | undefined;
    return {
      total: preview.total + callers.length,
      names() {
        if (names) return names;
        names = callers.length === 0 ? preview.names() : [...preview.names(), ...callers].sort();
        return names;
      },
      item(name, diff) {
        const found = preview.impact(name);
        const entry = matches.proxy(mesh, name);
        if (!entry) throw new Error(`proxy ${name} is not in mesh ${mesh}`);
        return {
          mesh,
          name,
          zone: zoneOf(views, mesh, name),
          kind: found?.kind ?? kindOf(entry),
          attachments: found?.attachments ?? [],
          resources: resourcesAfter(name, found, diff),
        };
      },
    };
  };

  /** A mesh whose proxies or Mesh the write changes: every proxy compared in both states. */
  const compared = (mesh: string, events: readonly EventInput[]): MeshImpact => {
    const afterViews = overlayViews(views, events);
    const afterMatches = matches.over(afterViews);
    const written = new Set(events.map((e) => policyKey(e.kind, e.name)));
    const names = new Set<string>();
    views.each('Dataplane', mesh, (item) => names.add(item.name));
    afterViews.each('Dataplane', mesh, (item) => names.add(item.name));
    const meshBefore = views.get('Mesh', undefined, mesh) !== undefined;
    const meshAfter = afterViews.get('Mesh', undefined, mesh) !== undefined;
    const entryIn = (m: Matches, there: boolean, name: string): ProxyMatches<unknown> | undefined =>
      there ? m.proxy(mesh, name) : undefined;
    const found = new Map<string, ProxyImpact>();
    const make = (name: string, diff: boolean): ProxyImpact | undefined => {
      const b = entryIn(matches, meshBefore, name);
      const a = entryIn(afterMatches, meshAfter, name);
      const entry = (a ?? b) as ProxyMatches<unknown> | undefined;
      if (!entry) return undefined;
      const attachments = attachmentsBetween(b, a, written);
      const resources = changesOnce(
        meshBefore ? render(views, matches, mesh, name) : undefined,
        meshAfter ? render(afterViews, afterMatches, mesh, name) : undefined,
        diff,
      );
      const proxy = !b ? 'created' : !a ? 'deleted' : undefined;
      if (!proxy && attachments.length === 0 && resources.length === 0) return undefined;
      return {
        mesh,
        name,
        zone: zoneOf(a ? afterViews : views, mesh, name),
        kind: kindOf(entry),
        ...(proxy ? { proxy } : {}),
        attachments,
        resources,
      };
    };
    for (const name of [...names].sort()) {
      const item = make(name, false);
      if (item) found.set(name, item);
    }
    const sorted = [...found.keys()];
    return {
      total: sorted.length,
      names: () => sorted,
      item: (name, diff) => (diff ? (make(name, true) as ProxyImpact) : (found.get(name) as ProxyImpact)),
    };
  };

  return (events, q) => {
    render = deps.render.begin();
    pairs = new WeakMap();
    const byMesh = new Map<string, EventInput[]>();
    for (const e of events) {
      const mesh = meshOf(e);
      if (mesh === undefined) continue;
      if (e.kind !== 'Mesh' && e.kind !== 'Dataplane' && !MATCHED_KINDS.has(e.kind)) continue;
      let list = byMesh.get(mesh);
      if (!list) byMesh.set(mesh, (list = []));
      list.push(e);
    }
    const meshes = [...byMesh.keys()].sort().map((mesh) => {
      const mine = byMesh.get(mesh) as EventInput[];
      const policiesOnly = mine.every((e) => MATCHED_KINDS.has(e.kind));
      // A policy-only write is previewed on its mesh alone; the rest sees every change of the set.
      return policiesOnly ? previewed(mesh, mine) : compared(mesh, events);
    });
    const total = meshes.reduce((n, m) => n + m.total, 0);
    const items: ProxyImpact[] = [];
    let skip = q.offset;
    for (const m of meshes) {
      if (items.length >= q.size) break;
      if (skip >= m.total) {
        skip -= m.total;
        continue;
      }
      const names = m.names();
      for (let i = skip; i < names.length && items.length < q.size; i++) items.push(m.item(names[i], q.diff));
      skip = 0;
    }
    return { total, items };
  };
}

/** The attachments whose policies differ between a proxy's entries before and after (either may be missing). */
function attachmentsBetween(
  b: ProxyMatches<unknown> | undefined,
  a: ProxyMatches<unknown> | undefined,
  written: ReadonlySet<string>,
): AttachmentImpact[] {
  const sidecarItems = (e: ProxyMatches<unknown> | undefined) =>
    e?.kind === 'SidecarDataplane' ? e.cells.items(e.interfaces) : [];
  const gatewayKeys = (e: ProxyMatches<unknown> | undefined): Iterable<string> =>
    e?.kind === 'MeshGatewayDataplane' && e.view !== undefined
      ? gatewayMatcher.policiesIn(e.view as GatewayView)
      : [];
  return [
    ...diffPolicyKeys(gatewayKeys(b), gatewayKeys(a), written),
    ...diffItems(sidecarItems(b), sidecarItems(a)),
  ];
}

/** The unified diff of a resource's JSON (pretty), from before to after. */
function jsonDiff(label: string, before: unknown, after: unknown): string {
  const pretty = (resource: unknown): string =>
    resource === undefined ? '' : `${JSON.stringify(resource, null, 2)}\n`;
  return createTwoFilesPatch(label, label, pretty(before), pretty(after), 'before', 'after');
}
