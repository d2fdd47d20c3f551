import { retry } from '../../resources/kinds/retry.js';
import { betweenAllServices, definePolicyKind } from '../policy-kind.js';

const backOff = { baseInterval: '25ms', maxInterval: '250ms' };

/** Retry: the best per service the routes reach, and per gateway route destination; a proxyless route's retry policy. */
export const retryKind = definePolicyKind({
  descriptor: retry,
  sidecar: [{ at: 'service', pick: 'best', services: 'routed' }],
  gateway: 'destination',
  proxyless: { setting: 'retry', read: (p) => p.conf },
  defaults: (mesh) => [
    {
      name: `retry-all-${mesh}`,
      spec: betweenAllServices({
        http: { numRetries: 5, perTryTimeout: '16s', backOff },
        grpc: { numRetries: 5, perTryTimeout: '16s', backOff },
        tcp: { maxConnectAttempts: 5 },
      }),
    },
  ],
});
