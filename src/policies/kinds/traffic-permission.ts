import { trafficPermission } from '../../resources/kinds/traffic-permission.js';
import { definePolicyKind, EVERY_SERVICE } from '../policy-kind.js';

/** TrafficPermission: who may call an inbound; the best per inbound; what an `XdsServer` lets in. */
export const trafficPermissionKind = definePolicyKind({
  descriptor: trafficPermission,
  sidecar: [{ at: 'inbound', pick: 'best' }],
  xdsServer: 'inbound-permissions',
  defaults: (mesh) => [
    { name: `allow-all-${mesh}`, spec: { sources: EVERY_SERVICE, destinations: EVERY_SERVICE } },
  ],
});
