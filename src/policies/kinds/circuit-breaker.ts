import { SERVICE_TAG } from '../../resources/fragments.js';
import { circuitBreaker } from '../../resources/kinds/circuit-breaker.js';
import { definePolicyKind } from '../policy-kind.js';

const all = [{ match: { [SERVICE_TAG]: '*' } }];

/** CircuitBreaker: the best per service the routes reach (each destination's clusters), and per gateway route destination. */
export const circuitBreakerKind = definePolicyKind({
  descriptor: circuitBreaker,
  sidecar: [{ at: 'service', pick: 'best', services: 'routed' }],
  gateway: 'destination',
  proxyless: { setting: 'circuitBreaker', read: (p) => p.conf },
  defaults: (mesh) => [
    {
      name: `circuit-breaker-all-${mesh}`,
      spec: {
        sources: all,
        destinations: all,
        conf: {
          thresholds: { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3 },
        },
      },
    },
  ],
});
