import { meshGatewayRoute } from '../../resources/kinds/mesh-gateway-route.js';
import { definePolicyKind } from '../policy-kind.js';

/** MeshGatewayRoute: the routes of a gateway's hosts (their backends are the destinations). */
export const meshGatewayRouteKind = definePolicyKind({
  descriptor: meshGatewayRoute,
  sidecar: [],
  gateway: 'route',
});
