import { SERVICE_TAG } from '../resources/fragments.js';
import { MATCH_ALL } from './tag-selector.js';

/** The part of a TrafficRoute that says where traffic goes (spec 2.6). */
interface RouteConf {
  conf?: {
    destination?: Record<string, string>;
    split?: ReadonlyArray<{ destination: Record<string, string> }>;
  };
}

/**
 * The services an outbound's traffic reaches (Kuma's BuildDestinationMap): the `mesh.io/service` of
 * each destination of its TrafficRoute, `*` standing for the outbound's own service; without a
 * route, the outbound's service. Service-level kinds other than TrafficLog attach to these.
 */
export function routeDestinations(outboundService: string, route: object | undefined): string[] {
  if (route === undefined) return [outboundService];
  const conf = (route as RouteConf).conf;
  const destinations = conf?.destination ? [conf.destination] : (conf?.split ?? []).map((s) => s.destination);
  const services: string[] = [];
  for (const destination of destinations) {
    const service = destination[SERVICE_TAG];
    if (service !== undefined) services.push(service === MATCH_ALL ? outboundService : service);
  }
  return services;
}
