/**
 * The endpoints a proxyless client may be sent, as a full recomputation reads them: every inbound
 * of the mesh's proxies, at the inbound's own address or else the proxy's, with the inbound's tags
 * (the service, version, zone... that destinations select on) and `ready: false` when its
 * `health.ready` says so (spec 2.4; absent = ready). Only ready ones are sent; every one makes its
 * service known. Gateway proxies and outbound-only proxies serve nothing.
 */
import type { ServedEndpoint } from './config.js';

interface DataplaneNetworking {
  address: string;
  inbound?: ReadonlyArray<{
    port: number;
    address?: string;
    tags: Readonly<Record<string, string>>;
    health?: { ready?: boolean };
  }>;
}

/** Every inbound of `dataplanes` (their `networking`) as an endpoint. */
export function inboundEndpoints(networkings: Iterable<DataplaneNetworking>): ServedEndpoint[] {
  const out: ServedEndpoint[] = [];
  for (const n of networkings) {
    for (const ib of n.inbound ?? []) {
      const e: ServedEndpoint = { address: ib.address ?? n.address, port: ib.port, tags: ib.tags };
      if (ib.health?.ready === false) e.ready = false;
      out.push(e);
    }
  }
  return out;
}
