/**
 * A TrafficRoute as one outbound uses it (Kuma 2.0 `resolveTrafficRouteWildcards`, which the
 * reference's inspect answer shows): each destination of the route drops its `*` tags, then takes
 * every tag of the outbound it does not name, so `{mesh.io/service: '*'}` on the outbound to
 * `backend` reads `{mesh.io/service: backend}`. Destinations are `conf.destination`,
 * `conf.split[].destination` and the same two under each `conf.http[]` route.
 */
import { ROUTE_KIND } from './kind-sets.js';
import { SERVICE_TAG } from '../resources/fragments.js';
import type { SidecarItem } from './match-sidecar.js';
import type { PolicyResource } from './policy-resource.js';
import { proxyInterfaces, type Networking } from './proxy-interfaces.js';
import { MATCH_ALL } from './tag-selector.js';

type Tags = Readonly<Record<string, string>>;

interface Split {
  destination: Tags;
}

interface RouteConf {
  destination?: Tags;
  split?: readonly Split[];
  http?: ReadonlyArray<{ destination?: Tags; split?: readonly Split[] }>;
}

/** One destination resolved against the outbound's tags; the same map when nothing changes. */
function resolveTags(destination: Tags, outbound: Tags): Tags {
  const out: Record<string, string> = {};
  for (const k in destination) if (destination[k] !== MATCH_ALL) out[k] = destination[k];
  for (const k in outbound) if (!(k in out)) out[k] = outbound[k];
  const keys = Object.keys(out);
  const same =
    keys.length === Object.keys(destination).length && keys.every((k) => destination[k] === out[k]);
  return same ? destination : out;
}

/** A split list resolved; the same list when no destination in it changes. */
function resolveSplit(split: readonly Split[], outbound: Tags): readonly Split[] {
  let changed = false;
  const out = split.map((s) => {
    const destination = resolveTags(s.destination, outbound);
    if (destination === s.destination) return s;
    changed = true;
    return { ...s, destination };
  });
  return changed ? out : split;
}

/** A `destination`/`split` pair resolved, as a copy, or the same object when nothing changes. */
function resolvePair<T extends { destination?: Tags; split?: readonly Split[] }>(conf: T, outbound: Tags): T {
  // The reference resolves a destination only when it has tags (an empty map stays empty).
  const destination =
    conf.destination && Object.keys(conf.destination).length > 0
      ? resolveTags(conf.destination, outbound)
      : conf.destination;
  const split = conf.split && resolveSplit(conf.split, outbound);
  if (destination === conf.destination && split === conf.split) return conf;
  return {
    ...conf,
    ...(destination !== conf.destination ? { destination } : {}),
    ...(split !== conf.split ? { split } : {}),
  };
}

/**
 * `route` as the outbound with `outboundTags` uses it: a copy with its destinations resolved, or
 * `route` itself when resolving changes none of them (the stored resource is never modified).
 */
export function resolveRouteWildcards<P extends object>(route: P, outboundTags: Tags): P {
  const conf = (route as { conf?: RouteConf }).conf;
  if (!conf) return route;
  let resolved = resolvePair(conf, outboundTags);
  if (conf.http) {
    let changed = false;
    const http = conf.http.map((h) => {
      const r = resolvePair(h, outboundTags);
      if (r !== h) changed = true;
      return r;
    });
    if (changed) resolved = { ...resolved, http };
  }
  return resolved === conf ? route : { ...route, conf: resolved };
}

/**
 * The matched-policies items with the TrafficRoute of each outbound item resolved for that outbound
 * (its tags, or `{mesh.io/service: service}` for the legacy `service` field); other items and
 * policies are returned as they are. Outbounds are found by name; of two with one name, the last.
 */
export function resolveOutboundRoutes<T extends SidecarItem<PolicyResource>>(
  items: readonly T[],
  networking: Networking,
): T[] {
  const outbounds = networking.outbound ?? [];
  const names = proxyInterfaces({ address: networking.address, outbound: outbounds }).outbounds;
  const tagsByName = new Map<string, Tags>();
  outbounds.forEach((ob, i) => tagsByName.set(names[i].name, ob.tags ?? { [SERVICE_TAG]: ob.service ?? '' }));
  return items.map((item) => {
    const routes = item.matchedPolicies[ROUTE_KIND];
    const tags = tagsByName.get(item.name);
    if (item.type !== 'outbound' || !routes || !tags) return item;
    const resolved = routes.map((r) => resolveRouteWildcards(r, tags));
    if (resolved.every((r, i) => r === routes[i])) return item;
    return { ...item, matchedPolicies: { ...item.matchedPolicies, [ROUTE_KIND]: resolved } };
  });
}
