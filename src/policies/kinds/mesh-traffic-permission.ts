import { meshTrafficPermission } from '../../resources/kinds/mesh-traffic-permission.js';
import { definePolicyKind } from '../policy-kind.js';

/** MeshTrafficPermission: every one whose targetRef selects a listener of the proxy; an `XdsServer`'s rules. */
export const meshTrafficPermissionKind = definePolicyKind({
  descriptor: meshTrafficPermission,
  sidecar: [{ at: 'dataplane', pick: 'targetRef' }],
  xdsServer: 'target-ref-permissions',
  rules: { from: true },
});
