import type { GatewayRouteSpec } from '../../src/policies/gateway-hosts.js';
import type { GatewayResource } from '../../src/policies/match-gateway.js';
import type { PolicyResource, Selector } from '../../src/policies/policy-resource.js';
import type { TargetRef, TargetRefPolicy } from '../../src/policies/target-ref-match.js';

/** `mesh.io/service` (the reference's `kuma.io/service`). */
export const SVC = 'mesh.io/service';

/** A list of `{match}` selectors from tag maps. */
export const sel = (...matches: Array<Record<string, string>>): Selector[] =>
  matches.map((match) => ({ match }));

/** Seconds since the epoch as a creation time, as the reference's tests write `time.Unix(s, 0)`. */
export const at = (seconds: number): string => new Date(seconds * 1000).toISOString();

/** A policy resource of `type` for the matcher tests; created at the epoch unless told. */
export function policy(
  type: string,
  name: string,
  fields: {
    sources?: Selector[];
    destinations?: Selector[];
    selectors?: Selector[];
    creationTime?: string;
    conf?: unknown;
  },
): PolicyResource & { conf?: unknown } {
  return { type, name, creationTime: at(0), ...fields };
}

/** A `targetRef` policy as stored (`{type, mesh, name, spec}`), in mesh `default` unless told. */
export function targetRefPolicy(
  type: string,
  name: string,
  spec: TargetRefPolicy['spec'],
  mesh = 'default',
): TargetRefPolicy {
  return { type, mesh, name, spec };
}

/** A `from`/`to` entry: `{targetRef, default}`. */
export const entry = (targetRef: TargetRef, conf: unknown) => ({ targetRef, default: conf });

/** A MeshGateway resource (wire form) for the gateway matcher tests. */
export function meshGateway(
  name: string,
  fields: {
    selectors: Selector[];
    tags?: Record<string, string>;
    listeners: Array<{ port: number; protocol: string; hostname?: string; tags?: Record<string, string> }>;
    creationTime?: string;
  },
): GatewayResource {
  const { listeners, ...rest } = fields;
  return {
    type: 'MeshGateway',
    mesh: 'default',
    name,
    creationTime: at(0),
    ...rest,
    conf: { listeners },
  };
}

/** A backend `{weight, destination}` of a MeshGatewayRoute rule: the service and any other tags. */
export const backend = (service: string, tags: Record<string, string> = {}) => ({
  weight: 1,
  destination: { [SVC]: service, ...tags },
});

type Backend = ReturnType<typeof backend>;

/** An HTTP MeshGatewayRoute: rules of backends and mirror backends, optional hostnames. */
export function httpRoute(
  name: string,
  fields: {
    selectors: Selector[];
    hostnames?: string[];
    rules: Array<{ backends?: Backend[]; mirrors?: Backend[]; redirect?: boolean }>;
  },
): GatewayRouteSpec & PolicyResource & { mesh: string } {
  const rules = fields.rules.map((r) => ({
    matches: [{ path: { match: 'PREFIX', value: '/' } }],
    ...(r.backends ? { backends: r.backends } : {}),
    filters: [
      ...(r.mirrors ?? []).map((b) => ({ mirror: { backend: b } })),
      ...(r.redirect ? [{ redirect: { statusCode: 301 } }] : []),
    ] as Array<{ mirror?: { backend: Backend }; redirect?: { statusCode: number } }>,
  }));
  const http = fields.hostnames ? { hostnames: fields.hostnames, rules } : { rules };
  return {
    type: 'MeshGatewayRoute',
    mesh: 'default',
    name,
    creationTime: at(0),
    selectors: fields.selectors,
    conf: { http },
  };
}

/** A TCP MeshGatewayRoute with one rule of backends. */
export function tcpRoute(
  name: string,
  fields: { selectors: Selector[]; backends: Backend[] },
): GatewayRouteSpec & PolicyResource & { mesh: string } {
  return {
    type: 'MeshGatewayRoute',
    mesh: 'default',
    name,
    creationTime: at(0),
    selectors: fields.selectors,
    conf: { tcp: { rules: [{ backends: fields.backends }] } },
  };
}
