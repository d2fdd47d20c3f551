/** Type URLs of the Envoy messages a proxyless client is served (xDS v3). */
export const TYPE = {
  LISTENER: 'type.googleapis.com/envoy.config.listener.v3.Listener',
  ROUTE_CONFIGURATION: 'type.googleapis.com/envoy.config.route.v3.RouteConfiguration',
  CLUSTER: 'type.googleapis.com/envoy.config.cluster.v3.Cluster',
  CLUSTER_LOAD_ASSIGNMENT: 'type.googleapis.com/envoy.config.endpoint.v3.ClusterLoadAssignment',
  HTTP_CONNECTION_MANAGER:
    'type.googleapis.com/envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
  ROUTER: 'type.googleapis.com/envoy.extensions.filters.http.router.v3.Router',
  FAULT: 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault',
} as const;

/** The HTTP filter names the generated listeners use. */
export const FILTER = { FAULT: 'envoy.filters.http.fault', ROUTER: 'envoy.filters.http.router' } as const;
