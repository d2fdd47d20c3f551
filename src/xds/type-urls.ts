/** The `type.googleapis.com/` prefix of every type URL. */
export const TYPE_URL_PREFIX = 'type.googleapis.com/';

/** xDS resource types (the `type_url` of DiscoveryRequest/Response and of their Any resources). */
export const LISTENER = `${TYPE_URL_PREFIX}envoy.config.listener.v3.Listener`;
export const ROUTE_CONFIGURATION = `${TYPE_URL_PREFIX}envoy.config.route.v3.RouteConfiguration`;
export const CLUSTER = `${TYPE_URL_PREFIX}envoy.config.cluster.v3.Cluster`;
export const CLUSTER_LOAD_ASSIGNMENT = `${TYPE_URL_PREFIX}envoy.config.endpoint.v3.ClusterLoadAssignment`;

/** Typed configs that travel nested in an Any (`{'@type': url, ...fields}`). */
export const HTTP_CONNECTION_MANAGER = `${TYPE_URL_PREFIX}envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager`;
export const ROUTER = `${TYPE_URL_PREFIX}envoy.extensions.filters.http.router.v3.Router`;
export const FAULT = `${TYPE_URL_PREFIX}envoy.extensions.filters.http.fault.v3.HTTPFault`;
export const RBAC = `${TYPE_URL_PREFIX}envoy.extensions.filters.http.rbac.v3.RBAC`;

/** The short name of each resource type, as DataplaneInsight counters name them (decisions §11). */
export const SHORT_TYPE: Readonly<Record<string, 'lds' | 'rds' | 'cds' | 'eds'>> = {
  [LISTENER]: 'lds',
  [ROUTE_CONFIGURATION]: 'rds',
  [CLUSTER]: 'cds',
  [CLUSTER_LOAD_ASSIGNMENT]: 'eds',
};

/** The full protobuf name of a type URL (`type.googleapis.com/a.b.C` → `a.b.C`). */
export const typeNameOf = (typeUrl: string): string => typeUrl.slice(typeUrl.lastIndexOf('/') + 1);
