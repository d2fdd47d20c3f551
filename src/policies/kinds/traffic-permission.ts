import { SERVICE_TAG } from '../../resources/fragments.js';
import { trafficPermission } from '../../resources/kinds/traffic-permission.js';
import { definePolicyKind } from '../policy-kind.js';

const all = [{ match: { [SERVICE_TAG]: '*' } }];

/** TrafficPermission: who may call an inbound; the best per inbound; what an `XdsServer` lets in. */
export const trafficPermissionKind = definePolicyKind({
  descriptor: trafficPermission,
  sidecar: [{ at: 'inbound', pick: 'best' }],
  xdsServer: 'inbound-permissions',
  defaults: (mesh) => [{ name: `allow-all-${mesh}`, spec: { sources: all, destinations: all } }],
});
