import { isIP } from 'node:net';
import { SERVICE_TAG } from '../resources/fragments.js';

type Tags = Record<string, string>;

const NO_SERVICES: readonly string[] = [];

/** The parts of a Dataplane's `networking` that matching reads (spec 2.4). */
export interface Networking {
  address: string;
  inbound?: ReadonlyArray<{ port: number; servicePort?: number; address?: string; tags: Tags }>;
  outbound?: ReadonlyArray<{ port: number; address?: string; tags?: Tags; service?: string }>;
  gateway?: { tags: Tags; type?: string };
  /**
   * The inbound a mesh with Prometheus metrics adds to the proxy (metrics-inbound.ts): not part of
   * a Dataplane, filled in from its mesh for matching.
   */
  metricsInbound?: MetricsInbound;
}

/** The metrics endpoint's inbound: its port and tags (Kuma 2.0 `PrometheusInbound`). */
export interface MetricsInbound {
  port: number;
  tags: Tags;
}

/** One inbound as it attaches: its name, service and tags. */
export interface InboundInterface {
  name: string;
  service: string;
  tags: Tags;
}

/** One outbound as it attaches: its name and the service it reaches. */
export interface OutboundInterface {
  name: string;
  service: string;
  /** True for a service a proxyless client dials without a declared outbound (named by the service). */
  dialled?: boolean;
}

/** The interfaces and tag sets of one proxy, derived once and read by every kind. */
export interface ProxyInterfaces {
  inbounds: InboundInterface[];
  outbounds: OutboundInterface[];
  /** Every inbound's tags, and the gateway's: what sources and selectors match against. */
  tagSets: Tags[];
  /** `tagSets` and the metrics inbound's tags: every tag set some policy can match on this proxy. */
  reachTagSets: Tags[];
}

/**
 * Kuma's InboundInterface/OutboundInterface names: inbound `<address>:<port>:<servicePort>` with the
 * inbound's address or else the proxy's, servicePort defaulting to port; outbound
 * `<address or 127.0.0.1>:<port>` (an IPv6 address in brackets, as Go's JoinHostPort writes it).

 * `dialled`: the services a proxyless gRPC client asks Listeners for (`xds:///<service>`). Each one
 * that no declared outbound reaches is an outbound too, named by the service itself: the client has
 * no outbound port, and matching must see what it is served.
 *
 * The metrics inbound comes last, named `<address>:<port>:<port>` with the proxy's address and no
 * service (the reference names services after the Dataplane's own inbounds only); only the
 * inbound kinds attach to it, so its tags are no tag set of the proxy.
 */
export function proxyInterfaces(
  networking: Networking,
  dialled: readonly string[] = NO_SERVICES,
): ProxyInterfaces {
  const inbounds = (networking.inbound ?? []).map((ib) => ({
    name: `${ib.address ?? networking.address}:${ib.port}:${ib.servicePort ?? ib.port}`,
    service: ib.tags[SERVICE_TAG] ?? '',
    tags: ib.tags,
  }));
  const outbounds: OutboundInterface[] = (networking.outbound ?? []).map((ob) => {
    const address = ob.address ?? '127.0.0.1';
    return {
      name: `${isIP(address) === 6 ? `[${address}]` : address}:${ob.port}`,
      // Kuma: the tags name the service when there are some, else the older `service` field.
      service: ob.tags?.[SERVICE_TAG] ?? ob.service ?? '',
    };
  });
  if (dialled.length > 0) {
    const declared = new Set(outbounds.map((o) => o.service));
    for (const service of dialled) {
      if (declared.has(service)) continue;
      declared.add(service);
      outbounds.push({ name: service, service, dialled: true });
    }
  }
  const tagSets = inbounds.map((ib) => ib.tags);
  if (networking.gateway) tagSets.push(networking.gateway.tags);
  const metrics = networking.metricsInbound;
  if (!metrics) return { inbounds, outbounds, tagSets, reachTagSets: tagSets };
  inbounds.push({
    name: `${networking.address}:${metrics.port}:${metrics.port}`,
    service: '',
    tags: metrics.tags,
  });
  return { inbounds, outbounds, tagSets, reachTagSets: [...tagSets, metrics.tags] };
}

/** True for a built-in gateway proxy; a gateway without `type` is DELEGATED, Kuma's enum default. */
export function isBuiltinGateway(networking: Pick<Networking, 'gateway'>): boolean {
  return networking.gateway?.type === 'BUILTIN';
}
