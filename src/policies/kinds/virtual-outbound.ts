import { virtualOutbound } from '../../resources/kinds/virtual-outbound.js';
import { definePolicyKind } from '../policy-kind.js';

/** VirtualOutbound: every one whose selectors match the proxy, best first. */
export const virtualOutboundKind = definePolicyKind({
  descriptor: virtualOutbound,
  sidecar: [{ at: 'dataplane', pick: 'all' }],
});
