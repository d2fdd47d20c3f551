import { rateLimit } from '../../resources/kinds/rate-limit.js';
import { definePolicyKind } from '../policy-kind.js';

/** RateLimit: every match per inbound and the best per outbound; per route destination on a gateway. */
export const rateLimitKind = definePolicyKind({
  descriptor: rateLimit,
  sidecar: [
    { at: 'inbound', pick: 'all' },
    { at: 'outbound', pick: 'best' },
  ],
  gateway: 'destination',
  proxyless: {
    from: 'outbound',
    note: 'RateLimit cannot apply to a proxyless gRPC client: the server side limits calls',
  },
});
