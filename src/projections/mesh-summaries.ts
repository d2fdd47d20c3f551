import type { Registry } from '../resources/registry.js';
import { SERVICE_TAG } from '../resources/fragments.js';
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

interface ServiceAcc {
  serviceType: string;
  dataplanes: { online: number; offline: number; total: number };
  degraded: number;
  creationTime: string;
  modificationTime: string;
  addressPort?: string;
}

/** The MeshInsight and ServiceInsights of one mesh, computed together. */
export interface MeshSummary {
  insight: Record<string, unknown>;
  /** Service insights sorted by service name. */
  services: Array<Record<string, unknown>>;
  serviceIndex: Map<string, Record<string, unknown>>;
}

/**
 * Per-mesh insights (spec 2.3, 2.9), recomputed lazily: a change to a mesh marks it dirty and the
 * next read recomputes it, so insights never lag the data they summarise (decisions §6).
 */
export interface MeshSummaries {
  get(mesh: string): MeshSummary | undefined;
}

const maxTime = (a: string, b: string): string => (a > b ? a : b);
const minTime = (a: string, b: string): string => (a < b ? a : b);

/** Creates the lazily recomputed per-mesh summaries over the views and the status store. */
export function createMeshSummaries(deps: {
  registry: Registry;
  views: ResourceViews;
  status: StatusReader;
}): MeshSummaries {
  const { registry, views, status } = deps;
  const cache = new Map<string, MeshSummary>();
  const lastChange = new Map<string, string>();
  const policyKinds = registry.stored.filter((d) => d.isPolicy && d.scope === 'mesh').map((d) => d.kind);

  views.onChange((entry) => {
    const mesh = entry.kind === 'Mesh' ? entry.name : entry.mesh;
    if (mesh === undefined) return;
    cache.delete(mesh);
    lastChange.set(mesh, entry.time);
  });
  status.onChange((mesh) => {
    if (mesh === '') cache.clear();
    else cache.delete(mesh);
  });

  const compute = (mesh: string): MeshSummary | undefined => {
    const meshItem = views.get('Mesh', undefined, mesh);
    if (!meshItem) return undefined;
    const dataplanes = zero();
    const byType = { standard: zero(), gateway: zero() };
    const versions: Record<string, Counts> = {};
    const proxyVersions: Record<string, Counts> = {};
    const issued: Record<string, Counts> = {};
    const supported: Record<string, Counts> = {};
    const services = new Map<string, ServiceAcc>();
    const tally = (c: Counts, state: string): void => {
      // online, offline and partiallyDegraded are exclusive: they add up to total.
      c.total++;
      if (state === 'offline') c.offline++;
      else if (state === 'online') c.online++;
      else c.partiallyDegraded++;
    };
    const tallyMap = (m: Record<string, Counts>, key: string, state: string): void => {
      tally((m[key] ??= zero()), state);
    };

    views.each('Dataplane', mesh, (item) => {
      const r = item.resource;
      const insight = status.dataplaneInsight(mesh, item.name);
      const state = proxyState(r, insight);
      const networking = (r.networking ?? {}) as {
        gateway?: { tags?: Record<string, string>; type?: string };
        inbound?: Array<{ tags?: Record<string, string> }>;
      };
      tally(dataplanes, state);
      tally(networking.gateway ? byType.gateway : byType.standard, state);
      const subs = insight?.subscriptions ?? [];
      const version = subs[subs.length - 1]?.version as
        { meshDp?: { version?: string }; proxy?: { version?: string } } | undefined;
      tallyMap(versions, version?.meshDp?.version ?? 'unknown', state);
      tallyMap(proxyVersions, version?.proxy?.version ?? 'unknown', state);
      const mtls = insight?.mTLS as { issuedBackend?: string; supportedBackends?: string[] } | undefined;
      if (mtls?.issuedBackend) tallyMap(issued, mtls.issuedBackend, state);
      for (const b of mtls?.supportedBackends ?? []) tallyMap(supported, b, state);

      const serviceType = networking.gateway
        ? networking.gateway.type === 'DELEGATED'
          ? 'gateway_delegated'
          : 'gateway_builtin'
        : 'internal';
      const names = new Set<string>();
      if (networking.gateway?.tags?.[SERVICE_TAG]) names.add(networking.gateway.tags[SERVICE_TAG]);
      for (const i of networking.inbound ?? []) if (i.tags?.[SERVICE_TAG]) names.add(i.tags[SERVICE_TAG]);
      for (const svc of names) {
        let acc = services.get(svc);
        if (!acc) {
          acc = {
            serviceType,
            dataplanes: { online: 0, offline: 0, total: 0 },
            degraded: 0,
            creationTime: r.creationTime,
            modificationTime: r.modificationTime,
          };
          services.set(svc, acc);
        }
        acc.dataplanes.total++;
        if (state === 'offline') acc.dataplanes.offline++;
        else acc.dataplanes.online++;
        if (state === 'partially_degraded') acc.degraded++;
        acc.creationTime = minTime(acc.creationTime, r.creationTime);
        acc.modificationTime = maxTime(acc.modificationTime, r.modificationTime);
      }
    });
    const internal = services.size;
    let external = 0;
    views.each('ExternalService', mesh, (item) => {
      const r = item.resource;
      const svc = (r.tags as Record<string, string> | undefined)?.[SERVICE_TAG];
      if (!svc || services.has(svc)) return;
      external++;
      services.set(svc, {
        serviceType: 'external',
        dataplanes: { online: 0, offline: 0, total: 0 },
        degraded: 0,
        creationTime: r.creationTime,
        modificationTime: r.modificationTime,
        addressPort: (r.networking as { address?: string } | undefined)?.address,
      });
    });

    const policies: Record<string, { total: number }> = {};
    for (const kind of policyKinds) {
      const n = views.count(kind, mesh);
      if (n > 0) policies[kind] = { total: n };
    }
    const changed = lastChange.get(mesh) ?? meshItem.resource.modificationTime;
    const stripOnline = (c: Counts) => ({
      total: c.total,
      online: c.online,
      partiallyDegraded: c.partiallyDegraded,
    });
    const mapCounts = (m: Record<string, Counts>) =>
      Object.fromEntries(Object.entries(m).map(([k, c]) => [k, stripOnline(c)]));
    const insight: Record<string, unknown> = {
      type: 'MeshInsight',
      name: mesh,
      creationTime: meshItem.resource.creationTime,
      modificationTime: changed,
      lastSync: changed,
      dataplanes: dataplanes,
      dataplanesByType: byType,
      policies,
      dpVersions: { meshDp: mapCounts(versions), proxy: mapCounts(proxyVersions) },
      mTLS: { issuedBackends: mapCounts(issued), supportedBackends: mapCounts(supported) },
      services: { total: internal + external, internal, external },
    };

    const names = [...services.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
    const list = names.map((svc) => {
      const acc = services.get(svc) as ServiceAcc;
      const d = acc.dataplanes;
      const statusText =
        acc.serviceType === 'external'
          ? 'not_available'
          : d.online === d.total && acc.degraded === 0
            ? 'online'
            : d.online === 0
              ? 'offline'
              : 'partially_degraded';
      const out: Record<string, unknown> = {
        type: 'ServiceInsight',
        mesh,
        name: svc,
        creationTime: acc.creationTime,
        modificationTime: acc.modificationTime,
        serviceType: acc.serviceType,
        status: statusText,
      };
      if (acc.serviceType === 'external') {
        if (acc.addressPort) out.addressPort = acc.addressPort;
      } else out.dataplanes = d;
      return out;
    });
    return { insight, services: list, serviceIndex: new Map(list.map((s) => [s.name as string, s])) };
  };

  return {
    get(mesh) {
      let s = cache.get(mesh);
      if (!s) {
        s = compute(mesh);
        if (s) cache.set(mesh, s);
      }
      return s;
    },
  };
}
