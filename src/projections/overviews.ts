import type { WireResource } from '../events/types.js';
import type { ViewItem } from './resource-views.js';
import type { Insight } from './status-reader.js';
import { isOnline } from './status-reader.js';

const META = new Set(['type', 'mesh', 'name', 'creationTime', 'modificationTime']);

/** The spec fields of a wire resource, without type, mesh, name and times. */
export function specOf(resource: WireResource): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(resource)) if (!META.has(k)) out[k] = v;
  return out;
}

/** Connection state of a proxy (decisions §6). */
export type ProxyState = 'online' | 'offline' | 'partially_degraded';

/** Online, offline, or online with some inbound not ready. */
export function proxyState(resource: WireResource, insight: Insight | undefined): ProxyState {
  if (!isOnline(insight)) return 'offline';
  const inbound = ((resource.networking as Record<string, unknown> | undefined)?.inbound ?? []) as Array<{
    health?: { ready?: boolean };
  }>;
  return inbound.some((i) => i.health?.ready === false) ? 'partially_degraded' : 'online';
}

/**
 * Builds an overview: the resource's meta, its spec under `specKey`, its insight under `insightKey`.
 * The insight always has `subscriptions` (`[]` for a proxy or zone that never connected): the GUI reduces it.
 */
export function buildOverview(
  type: string,
  item: ViewItem,
  specKey: string,
  insightKey: string,
  insight: Insight | undefined,
): Record<string, unknown> {
  const r = item.resource;
  const out: Record<string, unknown> = { type };
  if (r.mesh !== undefined) out.mesh = r.mesh;
  out.name = r.name;
  out.creationTime = r.creationTime;
  out.modificationTime = r.modificationTime;
  out[specKey] = specOf(r);
  out[insightKey] = insight?.subscriptions ? insight : { ...insight, subscriptions: [] };
  return out;
}
