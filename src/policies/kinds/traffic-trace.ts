import { trafficTrace } from '../../resources/kinds/traffic-trace.js';
import { definePolicyKind } from '../policy-kind.js';

/** TrafficTrace: the best whose selectors match the proxy; the whole gateway's. */
export const trafficTraceKind = definePolicyKind({
  descriptor: trafficTrace,
  sidecar: [{ at: 'dataplane', pick: 'best' }],
  gateway: 'whole',
});
