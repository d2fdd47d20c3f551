import { trafficLog } from '../../resources/kinds/traffic-log.js';
import { definePolicyKind } from '../policy-kind.js';

/** TrafficLog: the best per outbound service and for `pass_through`; the whole gateway's (as `pass_through`). */
export const trafficLogKind = definePolicyKind({
  descriptor: trafficLog,
  sidecar: [{ at: 'service', pick: 'best', services: 'logged' }],
  gateway: 'whole',
});
