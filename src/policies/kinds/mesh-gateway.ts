import { meshGateway } from '../../resources/kinds/mesh-gateway.js';
import { definePolicyKind } from '../policy-kind.js';

/** MeshGateway: the best whose selectors match a built-in gateway proxy serves it (its listeners and hosts). */
export const meshGatewayKind = definePolicyKind({
  descriptor: meshGateway,
  sidecar: [],
  gateway: 'gateway',
});
