import { SERVICE_TAG } from '../../resources/fragments.js';
import { trafficRoute } from '../../resources/kinds/traffic-route.js';
import type { SpecOf } from '../../resources/descriptor.js';
import { betweenAllServices, definePolicyKind } from '../policy-kind.js';
import type { RouteSetting } from '../proxyless-settings.js';

type Conf = SpecOf<typeof trafficRoute>['conf'];
type TagMap = Readonly<Record<string, string | null>>;

/** A tag map as a client route reads it: a tag written without a value (YAML `key:`, null) has the empty value. */
const tags = (map: TagMap): Record<string, string> => {
  const out: Record<string, string> = {};
  for (const k in map) out[k] = map[k] ?? '';
  return out;
};

const target = (t: {
  destination?: TagMap;
  split?: ReadonlyArray<{ weight: number; destination: TagMap }>;
}) => ({
  ...(t.destination && { destination: tags(t.destination) }),
  ...(t.split && { split: t.split.map((s) => ({ weight: s.weight, destination: tags(s.destination) })) }),
});

/** The route a proxyless client is given: where calls go (per `http` entry, then the rest) and the load balancer. */
function routeSetting(conf: Conf): RouteSetting {
  return {
    ...target(conf),
    ...(conf.loadBalancer && { loadBalancer: conf.loadBalancer }),
    ...(conf.http && {
      http: conf.http.map((h) => ({ match: h.match, ...(h.modify && { modify: h.modify }), ...target(h) })),
    }),
  };
}

/** TrafficRoute: the best per outbound decides where its calls go (the routed service kinds follow it). */
export const trafficRouteKind = definePolicyKind({
  descriptor: trafficRoute,
  sidecar: [{ at: 'outbound', pick: 'best' }],
  routes: true,
  proxyless: { setting: 'route', read: (p) => routeSetting(p.conf) },
  defaults: (mesh) => [
    {
      name: `route-all-${mesh}`,
      spec: betweenAllServices({ loadBalancer: { roundRobin: {} }, destination: { [SERVICE_TAG]: '*' } }),
    },
  ],
});
