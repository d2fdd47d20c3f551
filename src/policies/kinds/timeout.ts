import { timeout } from '../../resources/kinds/timeout.js';
import { betweenAllServices, definePolicyKind } from '../policy-kind.js';

/** Timeout: the best per outbound and per gateway route destination; a proxyless route's stream duration. */
export const timeoutKind = definePolicyKind({
  descriptor: timeout,
  sidecar: [{ at: 'outbound', pick: 'best' }],
  gateway: 'destination',
  proxyless: { setting: 'timeout', read: (p) => p.conf },
  defaults: (mesh) => [
    {
      name: `timeout-all-${mesh}`,
      spec: betweenAllServices({
        connectTimeout: '5s',
        tcp: { idleTimeout: '1h' },
        http: { requestTimeout: '15s', idleTimeout: '1h' },
        grpc: { streamIdleTimeout: '30m' },
      }),
    },
  ],
});
