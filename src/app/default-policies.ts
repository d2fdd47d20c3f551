import { SERVICE_TAG } from '../resources/fragments.js';

const all = [{ match: { [SERVICE_TAG]: '*' } }];

/** A default resource created with a mesh: kind, name and spec (decisions §3). */
export interface DefaultResource {
  kind: string;
  name: string;
  spec: Record<string, unknown>;
}

/** The default policies of a new mesh (decisions §3), named `<kind-prefix>-<mesh>`. */
export function defaultPolicies(mesh: string): DefaultResource[] {
  const backOff = { baseInterval: '25ms', maxInterval: '250ms' };
  return [
    { kind: 'TrafficPermission', name: `allow-all-${mesh}`, spec: { sources: all, destinations: all } },
    {
      kind: 'TrafficRoute',
      name: `route-all-${mesh}`,
      spec: {
        sources: all,
        destinations: all,
        conf: { loadBalancer: { roundRobin: {} }, destination: { [SERVICE_TAG]: '*' } },
      },
    },
    {
      kind: 'Timeout',
      name: `timeout-all-${mesh}`,
      spec: {
        sources: all,
        destinations: all,
        conf: {
          connectTimeout: '5s',
          tcp: { idleTimeout: '1h' },
          http: { requestTimeout: '15s', idleTimeout: '1h' },
          grpc: { streamIdleTimeout: '30m' },
        },
      },
    },
    {
      kind: 'CircuitBreaker',
      name: `circuit-breaker-all-${mesh}`,
      spec: {
        sources: all,
        destinations: all,
        conf: {
          thresholds: { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3 },
        },
      },
    },
    {
      kind: 'Retry',
      name: `retry-all-${mesh}`,
      spec: {
        sources: all,
        destinations: all,
        conf: {
          http: { numRetries: 5, perTryTimeout: '16s', backOff },
          grpc: { numRetries: 5, perTryTimeout: '16s', backOff },
          tcp: { maxConnectAttempts: 5 },
        },
      },
    },
  ];
}

/** Name of a mesh's data plane token signing key secret (decisions §3). */
export function dataplaneSigningKeyName(mesh: string): string {
  return `dataplane-token-signing-key-${mesh}-1`;
}

/**
 * The longest name a mesh's defaults can get: a mesh name may be 253 characters (decisions §2)
 * and its defaults add a prefix and suffix to it, as Kuma does, so a long mesh's defaults are longer.
 */
export const LONGEST_DEFAULT_NAME =
  253 + Math.max(dataplaneSigningKeyName('').length, ...defaultPolicies('').map((p) => p.name.length));

/**
 * The token types whose global signing key `<type>-token-signing-key-1` is created at start on
 * standalone and global when the type has no key (decisions §3).
 */
export const GLOBAL_SIGNING_KEY_TYPES = ['user', 'zone', 'zone-ingress'] as const;
