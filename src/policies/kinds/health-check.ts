import { healthCheck } from '../../resources/kinds/health-check.js';
import { definePolicyKind } from '../policy-kind.js';

/** HealthCheck: the best per service the routes reach, and per gateway route destination. */
export const healthCheckKind = definePolicyKind({
  descriptor: healthCheck,
  sidecar: [{ at: 'service', pick: 'best', services: 'routed' }],
  gateway: 'destination',
  proxyless: {
    from: 'service',
    note: 'HealthCheck cannot apply to a proxyless gRPC client: it has no active health checking',
  },
});
