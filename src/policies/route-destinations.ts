import { SERVICE_TAG } from '../resources/fragments.js';
import { MATCH_ALL } from './tag-selector.js';

/** The part of a TrafficRoute that says where traffic goes (spec 2.6). */
interface RouteTarget {
  destination?: Record<string, string>;
  split?: ReadonlyArray<{ destination: Record<string, string> }>;
}
interface RouteConf {
  conf?: RouteTarget & { http?: readonly RouteTarget[] };
}

/** The services of one route target (`destination` or `split`), `*` standing for `outboundService`. */
function targetServices(outboundService: string, target: RouteTarget | undefined): string[] {
  const destinations = target?.destination
    ? [target.destination]
    : (target?.split ?? []).map((s) => s.destination);
  const services: string[] = [];
  for (const destination of destinations) {
    const service = destination[SERVICE_TAG];
    if (service !== undefined) services.push(service === MATCH_ALL ? outboundService : service);
  }
  return services;
}

/**
 * The services an outbound's traffic reaches (Kuma's BuildDestinationMap): the `mesh.io/service` of
 * each destination of its TrafficRoute, `*` standing for the outbound's own service; without a
 * route, the outbound's service. Service-level kinds other than TrafficLog attach to these.
 */
export function routeDestinations(outboundService: string, route: object | undefined): string[] {
  if (route === undefined) return [outboundService];
  return targetServices(outboundService, (route as RouteConf).conf);
}

/**
 * Every service a call through the outbound may reach: those of `routeDestinations` and those of
 * the route's `http[]` entries (a proxyless client's calls go where its routes send them).
 */
export function callDestinations(outboundService: string, route: object | undefined): string[] {
  if (route === undefined) return [outboundService];
  const conf = (route as RouteConf).conf;
  const services = new Set(targetServices(outboundService, conf));
  for (const http of conf?.http ?? []) for (const s of targetServices(outboundService, http)) services.add(s);
  return [...services];
}
