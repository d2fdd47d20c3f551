import type { WireResource } from '../events/types.js';
import { SERVICE_TAG } from '../resources/fragments.js';
import { deepEqual } from '../util/deep-equal.js';
import { meshNameKey } from '../resources/keys.js';
import type { ResourceViews } from './resource-views.js';

/** One entry of a zone ingress's `availableServices` (spec 2.13). */
export interface AvailableService {
  tags: Record<string, string>;
  instances: number;
  mesh: string;
}

/** The zone tag of available services (spec intro: `mesh.io/zone`). */
const ZONE_TAG = 'mesh.io/zone';

const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

type Inbound = { tags?: Record<string, string>; health?: { ready?: boolean } };

/** One service of a zone: its count, and its key (mesh and tags), the one string every data plane shares. */
interface Counted extends AvailableService {
  key: string;
}

/**
 * What one data plane adds to its zone's services (the keys of its distinct ready inbound tag
 * sets), and the inbounds of its stored resource it was computed from, to see that an update left
 * them as they were (held by the views anyway: no copy is kept).
 */
interface Contribution {
  zone: string;
  mesh: string;
  inbound: readonly Inbound[];
  keys: string[];
}

/** A data plane's inbounds. */
function inboundsOf(resource: WireResource): readonly Inbound[] {
  return ((resource.networking as Record<string, unknown> | undefined)?.inbound ?? []) as Inbound[];
}

/** True when the services of two inbound lists are the same: same tags and readiness, in order. */
const sameInbounds = (a: readonly Inbound[], b: readonly Inbound[]): boolean =>
  a.length === b.length &&
  a.every(
    (ib, i) =>
      (ib.health?.ready === false) === (b[i].health?.ready === false) && deepEqual(ib.tags, b[i].tags),
  );

/**
 * The services a data plane offers in `zone`: per ready inbound with a service tag, its tags with
 * `mesh.io/zone` (the zone unless the inbound names one) in key order; a proxy with two inbounds of
 * the same tags is one instance.
 */
function servicesOf(
  zone: string,
  mesh: string,
  inbound: readonly Inbound[],
): Array<{ key: string; tags: Record<string, string> }> {
  const out: Array<{ key: string; tags: Record<string, string> }> = [];
  const seen = new Set<string>();
  for (const ib of inbound) {
    if (!ib.tags?.[SERVICE_TAG] || ib.health?.ready === false) continue;
    const all = Object.entries(ib.tags);
    if (ib.tags[ZONE_TAG] === undefined) all.push([ZONE_TAG, zone]);
    const tags = Object.fromEntries(all.sort((a, b) => cmp(a[0], b[0])));
    const key = `${mesh}\u0000${JSON.stringify(tags)}`;
    if (seen.has(key)) continue;
    seen.add(key);
    out.push({ key, tags });
  }
  return out;
}

/** Counts of the services of each zone's data planes, kept as the views change. */
export interface ServiceCounts {
  /** The services of `zone`'s data planes, in (mesh, tags) order; fresh objects the caller may keep. */
  of(zone: string): AvailableService[];
}

/**
 * Follows the data planes of `views` and keeps, per zone (the origin of a data plane's last change),
 * the instance count of each (mesh, inbound tag set). A change costs the data plane's inbounds, and
 * a read the zone's distinct services, instead of a pass over every data plane (Global recomputes a
 * zone's ingress services after every batch of that zone's data plane changes).
 */
export function trackServiceCounts(views: ResourceViews): ServiceCounts {
  const byDataplane = new Map<string, Contribution>();
  const byZone = new Map<string, Map<string, Counted>>();

  const remove = (key: string): void => {
    const old = byDataplane.get(key);
    if (!old) return;
    byDataplane.delete(key);
    const counts = byZone.get(old.zone);
    if (!counts) return;
    for (const k of old.keys) {
      const found = counts.get(k);
      if (!found) continue;
      found.instances -= 1;
      if (found.instances === 0) counts.delete(k);
    }
    if (counts.size === 0) byZone.delete(old.zone);
  };

  const add = (key: string, zone: string, mesh: string, inbound: readonly Inbound[]): void => {
    let counts = byZone.get(zone);
    if (!counts) byZone.set(zone, (counts = new Map()));
    const keys: string[] = [];
    for (const s of servicesOf(zone, mesh, inbound)) {
      let found = counts.get(s.key);
      if (found) found.instances += 1;
      else counts.set(s.key, (found = { key: s.key, tags: s.tags, instances: 1, mesh }));
      keys.push(found.key);
    }
    if (counts.size === 0) byZone.delete(zone);
    byDataplane.set(key, { zone, mesh, inbound, keys });
  };

  const set = (
    mesh: string | undefined,
    name: string,
    origin: string,
    resource: WireResource | undefined,
  ): void => {
    const key = meshNameKey(mesh, name);
    if (!resource || mesh === undefined) {
      remove(key);
      return;
    }
    const inbound = inboundsOf(resource);
    const old = byDataplane.get(key);
    if (old && old.zone === origin && old.mesh === mesh && sameInbounds(old.inbound, inbound)) {
      old.inbound = inbound;
      return;
    }
    remove(key);
    add(key, origin, mesh, inbound);
  };

  // Registered before the pass over what the views hold, in the same turn: nothing is missed.
  views.onChange((e) => {
    if (e.kind !== 'Dataplane') return;
    set(e.mesh, e.name, e.origin, e.operation === 'delete' ? undefined : e.resource);
  });
  views.each('Dataplane', undefined, (item) => set(item.mesh, item.name, item.origin, item.resource));

  return {
    of(zone) {
      const counts = byZone.get(zone);
      if (!counts) return [];
      return [...counts.entries()]
        .sort((a, b) => cmp(a[0], b[0]))
        .map(([, s]) => ({ tags: { ...s.tags }, instances: s.instances, mesh: s.mesh }));
    },
  };
}
