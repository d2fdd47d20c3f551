import type { WireResource } from '../events/types.js';
import { SERVICE_TAG } from '../resources/fragments.js';
import type { Registry } from '../resources/registry.js';
import type { ProxyState } from './overviews.js';
import { proxyState } from './overviews.js';
import type { ResourceViews } from './resource-views.js';
import type { StatusReader } from './status-reader.js';

interface Counts {
  total: number;
  online: number;
  offline: number;
  partiallyDegraded: number;
}

const zero = (): Counts => ({ total: 0, online: 0, offline: 0, partiallyDegraded: 0 });

/** What one data plane adds to its mesh's insights; subtracted again when it changes. */
interface Contribution {
  state: ProxyState;
  gateway: boolean;
  meshDp: string;
  proxy: string;
  issued?: string;
  supported: string[];
  services: Array<{ name: string; serviceType: string }>;
  time: string;
}

interface ServiceAcc {
  serviceType: string;
  total: number;
  online: number;
  offline: number;
  degraded: number;
  creationTime: string;
  modificationTime: string;
}

/** Incrementally kept counters of one mesh. */
interface MeshState {
  dataplanes: Counts;
  byType: { standard: Counts; gateway: Counts };
  meshDp: Map<string, Counts>;
  proxy: Map<string, Counts>;
  issued: Map<string, Counts>;
  supported: Map<string, Counts>;
  services: Map<string, ServiceAcc>;
  contributions: Map<string, Contribution>;
  lastChange?: string;
  cached?: MeshSummary;
}

/** The MeshInsight and ServiceInsights of one mesh. */
export interface MeshSummary {
  insight: Record<string, unknown>;
  /** Service insights sorted by service name. */
  services: Array<Record<string, unknown>>;
  serviceIndex: Map<string, Record<string, unknown>>;
}

/**
 * Per-mesh insights (spec 2.3, 2.9). A mesh's counters are built on its first read, then kept
 * current by every data plane change and status change (O(1) each), so insights never lag the
 * data they summarise (decisions §6) and a read costs O(services), not O(data planes).
 */
export interface MeshSummaries {
  get(mesh: string): MeshSummary | undefined;
}

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Creates the per-mesh summaries over the views and the status store. */
export function createMeshSummaries(deps: {
  registry: Registry;
  views: ResourceViews;
  status: StatusReader;
}): MeshSummaries {
  const { registry, views, status } = deps;
  const meshes = new Map<string, MeshState>();
  const policyKinds = registry.stored
    .filter((d) => d.countedInMeshInsight && d.scope === 'mesh')
    .map((d) => d.kind);

  const contributionOf = (mesh: string, r: WireResource): Contribution => {
    const insight = status.dataplaneInsight(mesh, r.name);
    const networking = (r.networking ?? {}) as {
      gateway?: { tags?: Record<string, string>; type?: string };
      inbound?: Array<{ tags?: Record<string, string> }>;
    };
    const subs = insight?.subscriptions ?? [];
    const version = subs[subs.length - 1]?.version as
      { meshDp?: { version?: string }; proxy?: { version?: string } } | undefined;
    const mtls = insight?.mTLS as { issuedBackend?: string; supportedBackends?: string[] } | undefined;
    // A gateway without `type` is DELEGATED, Kuma's enum default (isBuiltinGateway agrees).
    const serviceType = networking.gateway
      ? networking.gateway.type === 'BUILTIN'
        ? 'gateway_builtin'
        : 'gateway_delegated'
      : 'internal';
    const names = new Set<string>();
    if (networking.gateway?.tags?.[SERVICE_TAG]) names.add(networking.gateway.tags[SERVICE_TAG]);
    for (const i of networking.inbound ?? []) if (i.tags?.[SERVICE_TAG]) names.add(i.tags[SERVICE_TAG]);
    return {
      state: proxyState(r, insight),
      gateway: networking.gateway !== undefined,
      meshDp: version?.meshDp?.version ?? 'unknown',
      proxy: version?.proxy?.version ?? 'unknown',
      issued: mtls?.issuedBackend || undefined,
      supported: mtls?.supportedBackends ?? [],
      services: [...names].map((name) => ({ name, serviceType })),
      time: r.modificationTime,
    };
  };

  // online, offline and partiallyDegraded are exclusive: they add up to total.
  const tally = (c: Counts, state: ProxyState, d: number): void => {
    c.total += d;
    if (state === 'offline') c.offline += d;
    else if (state === 'online') c.online += d;
    else c.partiallyDegraded += d;
  };
  const tallyMap = (m: Map<string, Counts>, key: string, state: ProxyState, d: number): void => {
    let c = m.get(key);
    if (!c) m.set(key, (c = zero()));
    tally(c, state, d);
    if (c.total === 0) m.delete(key);
  };

  const applyContribution = (s: MeshState, c: Contribution, d: 1 | -1, time: string): void => {
    tally(s.dataplanes, c.state, d);
    tally(c.gateway ? s.byType.gateway : s.byType.standard, c.state, d);
    tallyMap(s.meshDp, c.meshDp, c.state, d);
    tallyMap(s.proxy, c.proxy, c.state, d);
    if (c.issued) tallyMap(s.issued, c.issued, c.state, d);
    for (const b of c.supported) tallyMap(s.supported, b, c.state, d);
    for (const svc of c.services) {
      let acc = s.services.get(svc.name);
      if (!acc) {
        acc = {
          serviceType: svc.serviceType,
          total: 0,
          online: 0,
          offline: 0,
          degraded: 0,
          creationTime: c.time,
          modificationTime: c.time,
        };
        s.services.set(svc.name, acc);
      }
      acc.total += d;
      if (c.state === 'offline') acc.offline += d;
      else acc.online += d;
      if (c.state === 'partially_degraded') acc.degraded += d;
      if (time > acc.modificationTime) acc.modificationTime = time;
      if (acc.total === 0) s.services.delete(svc.name);
    }
  };

  const build = (mesh: string): MeshState => {
    const s: MeshState = {
      dataplanes: zero(),
      byType: { standard: zero(), gateway: zero() },
      meshDp: new Map(),
      proxy: new Map(),
      issued: new Map(),
      supported: new Map(),
      services: new Map(),
      contributions: new Map(),
    };
    views.each('Dataplane', mesh, (item) => {
      const c = contributionOf(mesh, item.resource);
      s.contributions.set(item.name, c);
      applyContribution(s, c, 1, c.time);
    });
    return s;
  };

  /** Re-counts one data plane of a mesh whose counters are built. */
  const update = (mesh: string, name: string, time: string): void => {
    const s = meshes.get(mesh);
    if (!s) return;
    s.cached = undefined;
    const old = s.contributions.get(name);
    if (old) applyContribution(s, old, -1, time);
    const item = views.get('Dataplane', mesh, name);
    if (item) {
      const c = contributionOf(mesh, item.resource);
      s.contributions.set(name, c);
      applyContribution(s, c, 1, time);
    } else s.contributions.delete(name);
  };

  const lastChange = new Map<string, string>();
  views.onChange((entry) => {
    const mesh = entry.kind === 'Mesh' ? entry.name : entry.mesh;
    if (mesh === undefined) return;
    // Keep the latest time: start-up may apply entries newest first (load-latest.ts).
    if ((lastChange.get(mesh) ?? '') < entry.time) lastChange.set(mesh, entry.time);
    if (entry.kind === 'Mesh' && entry.operation === 'delete') meshes.delete(mesh);
    else if (entry.kind === 'Dataplane') update(mesh, entry.name, entry.time);
    else {
      const s = meshes.get(mesh);
      if (s) s.cached = undefined;
    }
  });
  status.onChange((mesh, name) => {
    // One proxy's status re-counts that proxy; a zone's change re-counts every mesh on next read.
    // (The time is read only for a mesh whose counters are built: insights change often.)
    if (name !== undefined) {
      if (meshes.has(mesh)) update(mesh, name, new Date().toISOString());
    } else if (mesh === '') meshes.clear();
    else meshes.delete(mesh);
  });

  const mapCounts = (m: Map<string, Counts>) =>
    Object.fromEntries(
      [...m.entries()]
        .sort((a, b) => cmp(a[0], b[0]))
        .map(([k, c]) => [k, { total: c.total, online: c.online, partiallyDegraded: c.partiallyDegraded }]),
    );

  const summarize = (mesh: string, s: MeshState, meshResource: WireResource): MeshSummary => {
    const list: Array<Record<string, unknown>> = [];
    for (const [name, acc] of s.services) {
      const statusText =
        acc.online === acc.total && acc.degraded === 0
          ? 'online'
          : acc.online === 0
            ? 'offline'
            : 'partially_degraded';
      list.push({
        type: 'ServiceInsight',
        mesh,
        name,
        creationTime: acc.creationTime,
        modificationTime: acc.modificationTime,
        serviceType: acc.serviceType,
        status: statusText,
        dataplanes: { online: acc.online, offline: acc.offline, total: acc.total },
      });
    }
    const internal = list.length;
    let external = 0;
    views.each('ExternalService', mesh, (item) => {
      const r = item.resource;
      const svc = (r.tags as Record<string, string> | undefined)?.[SERVICE_TAG];
      if (!svc || s.services.has(svc)) return;
      external++;
      const out: Record<string, unknown> = {
        type: 'ServiceInsight',
        mesh,
        name: svc,
        creationTime: r.creationTime,
        modificationTime: r.modificationTime,
        serviceType: 'external',
        status: 'not_available',
      };
      const address = (r.networking as { address?: string } | undefined)?.address;
      if (address) out.addressPort = address;
      list.push(out);
    });
    list.sort((a, b) => cmp(a.name as string, b.name as string));

    const policies: Record<string, { total: number }> = {};
    for (const kind of policyKinds) {
      const n = views.count(kind, mesh);
      if (n > 0) policies[kind] = { total: n };
    }
    const changed = lastChange.get(mesh) ?? meshResource.modificationTime;
    const insight: Record<string, unknown> = {
      type: 'MeshInsight',
      name: mesh,
      creationTime: meshResource.creationTime,
      modificationTime: changed,
      lastSync: changed,
      dataplanes: { ...s.dataplanes },
      dataplanesByType: { standard: { ...s.byType.standard }, gateway: { ...s.byType.gateway } },
      policies,
      dpVersions: { meshDp: mapCounts(s.meshDp), proxy: mapCounts(s.proxy) },
      mTLS: { issuedBackends: mapCounts(s.issued), supportedBackends: mapCounts(s.supported) },
      services: { total: internal + external, internal, external },
    };
    return { insight, services: list, serviceIndex: new Map(list.map((x) => [x.name as string, x])) };
  };

  return {
    get(mesh) {
      const meshItem = views.get('Mesh', undefined, mesh);
      if (!meshItem) return undefined;
      let s = meshes.get(mesh);
      if (!s) meshes.set(mesh, (s = build(mesh)));
      return (s.cached ??= summarize(mesh, s, meshItem.resource));
    },
  };
}
