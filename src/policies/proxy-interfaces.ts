import { isIP } from 'node:net';
import { SERVICE_TAG } from '../resources/fragments.js';

type Tags = Record<string, string>;

/** The parts of a Dataplane's `networking` that matching reads (spec 2.4). */
export interface Networking {
  address: string;
  inbound?: ReadonlyArray<{ port: number; servicePort?: number; address?: string; tags: Tags }>;
  outbound?: ReadonlyArray<{ port: number; address?: string; tags?: Tags; service?: string }>;
  gateway?: { tags: Tags; type?: string };
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
}

/** The interfaces and tag sets of one proxy, derived once and read by every kind. */
export interface ProxyInterfaces {
  inbounds: InboundInterface[];
  outbounds: OutboundInterface[];
  /** Every inbound's tags, and the gateway's: what sources and selectors match against. */
  tagSets: Tags[];
}

/**
 * Kuma's InboundInterface/OutboundInterface names: inbound `<address>:<port>:<servicePort>` with the
 * inbound's address or else the proxy's, servicePort defaulting to port; outbound
 * `<address or 127.0.0.1>:<port>` (an IPv6 address in brackets, as Go's JoinHostPort writes it).
 */
export function proxyInterfaces(networking: Networking): ProxyInterfaces {
  const inbounds = (networking.inbound ?? []).map((ib) => ({
    name: `${ib.address ?? networking.address}:${ib.port}:${ib.servicePort ?? ib.port}`,
    service: ib.tags[SERVICE_TAG] ?? '',
    tags: ib.tags,
  }));
  const outbounds = (networking.outbound ?? []).map((ob) => {
    const address = ob.address ?? '127.0.0.1';
    return {
      name: `${isIP(address) === 6 ? `[${address}]` : address}:${ob.port}`,
      // Kuma: the tags name the service when there are some, else the older `service` field.
      service: ob.tags?.[SERVICE_TAG] ?? ob.service ?? '',
    };
  });
  const tagSets = inbounds.map((ib) => ib.tags);
  if (networking.gateway) tagSets.push(networking.gateway.tags);
  return { inbounds, outbounds, tagSets };
}

/** True for a built-in gateway proxy; a gateway without `type` is DELEGATED, Kuma's enum default. */
export function isBuiltinGateway(networking: Pick<Networking, 'gateway'>): boolean {
  return networking.gateway?.type === 'BUILTIN';
}
