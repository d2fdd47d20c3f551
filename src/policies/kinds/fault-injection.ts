import { faultInjection } from '../../resources/kinds/fault-injection.js';
import { definePolicyKind } from '../policy-kind.js';

/**
 * FaultInjection: every match per inbound (destinations against the inbound's tags, protocol
 * included); a proxyless client applies the faults of the inbounds it calls, so they are also listed
 * on its dialled outbounds; per route destination on a gateway.
 */
export const faultInjectionKind = definePolicyKind({
  descriptor: faultInjection,
  sidecar: [{ at: 'inbound', pick: 'all' }],
  dialled: true,
  gateway: 'destination',
  proxyless: { setting: 'fault', read: (p) => p.conf },
});
