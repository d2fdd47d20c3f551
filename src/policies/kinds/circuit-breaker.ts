import { circuitBreaker } from '../../resources/kinds/circuit-breaker.js';
import { betweenAllServices, definePolicyKind } from '../policy-kind.js';

/** CircuitBreaker: the best per service the routes reach (each destination's clusters), and per gateway route destination. */
export const circuitBreakerKind = definePolicyKind({
  descriptor: circuitBreaker,
  sidecar: [{ at: 'service', pick: 'best', services: 'routed' }],
  gateway: 'destination',
  proxyless: { setting: 'circuitBreaker', read: (p) => p.conf },
  defaults: (mesh) => [
    {
      name: `circuit-breaker-all-${mesh}`,
      spec: betweenAllServices({
        thresholds: { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3 },
      }),
    },
  ],
});
