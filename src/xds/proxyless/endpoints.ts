/**
 * The endpoints a proxyless client may be sent: every ready inbound of the mesh's proxies (spec 2.4
 * `health.ready`, absent = ready), at the inbound's own address or else the proxy's, with the
 * inbound's tags (the service, version, zone... that destinations select on). Gateway proxies and
 * outbound-only proxies serve nothing.
 */
import type { Endpoint } from './clusters.js';

interface DataplaneNetworking {
  address: string;
  inbound?: ReadonlyArray<{
    port: number;
    address?: string;
    tags: Readonly<Record<string, string>>;
    health?: { ready?: boolean };
  }>;
}

/** The ready inbounds of `dataplanes` (their `networking`) as endpoints. */
export function readyEndpoints(networkings: Iterable<DataplaneNetworking>): Endpoint[] {
  const out: Endpoint[] = [];
  for (const n of networkings) {
    for (const ib of n.inbound ?? []) {
      if (ib.health?.ready === false) continue;
      out.push({ address: ib.address ?? n.address, port: ib.port, tags: ib.tags });
    }
  }
  return out;
}
