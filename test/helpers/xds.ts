import type { DataplaneLookup, DataplaneResource } from '../../src/xds/node-identity.js';

/** A sidecar Dataplane with one inbound per tag set (ports 8080, 8081, …). */
export function sidecar(
  mesh: string,
  name: string,
  ...inbounds: Array<Record<string, string>>
): DataplaneResource {
  return {
    mesh,
    name,
    networking: { address: '10.0.0.1', inbound: inbounds.map((tags, i) => ({ port: 8080 + i, tags })) },
  };
}

/** A gateway Dataplane with these gateway tags. */
export function gatewayProxy(mesh: string, name: string, tags: Record<string, string>): DataplaneResource {
  return { mesh, name, networking: { address: '10.0.0.2', gateway: { tags, type: 'BUILTIN' } } };
}

/** A lookup over a fixed set of Dataplanes. */
export function lookupOf(...dataplanes: DataplaneResource[]): DataplaneLookup {
  const byKey = new Map(dataplanes.map((dp) => [`${dp.mesh}\u0000${dp.name}`, dp]));
  return (mesh, name) => byKey.get(`${mesh}\u0000${name}`);
}
