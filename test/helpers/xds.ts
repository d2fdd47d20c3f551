import {
  CLUSTER,
  CLUSTER_LOAD_ASSIGNMENT,
  HTTP_CONNECTION_MANAGER,
  LISTENER,
  ROUTE_CONFIGURATION,
  ROUTER,
} from '../../src/xds/type-urls.js';

/** A proxyless client's Listener: an api_listener whose HttpConnectionManager inlines its routes. */
export function proxylessListener(name: string, cluster = 'backend', statPrefix = 'fp-1'): object {
  return {
    name,
    api_listener: {
      api_listener: {
        '@type': HTTP_CONNECTION_MANAGER,
        stat_prefix: statPrefix,
        route_config: {
          name: `${name}-routes`,
          virtual_hosts: [{ name, domains: ['*'], routes: [{ match: { prefix: '' }, route: { cluster } }] }],
        },
        http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER } }],
      },
    },
  };
}

/** A RouteConfiguration splitting traffic between clusters by weight. */
export function weightedRoutes(name: string, weights: Record<string, number>): object {
  return {
    name,
    virtual_hosts: [
      {
        name,
        domains: ['*'],
        routes: [
          {
            match: { prefix: '/' },
            route: {
              weighted_clusters: {
                clusters: Object.entries(weights).map(([cluster, weight]) => ({
                  name: cluster,
                  weight: { value: weight },
                })),
              },
            },
          },
        ],
      },
    ],
  };
}

/** A Cluster whose endpoints come over ADS. */
export function edsCluster(name: string): object {
  return {
    name,
    type: 'EDS',
    eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } },
    connect_timeout: { seconds: 5 },
  };
}

/** A ClusterLoadAssignment with one locality of the given `ip:port` endpoints. */
export function loadAssignment(cluster: string, addresses: string[], zone = 'zone-1'): object {
  return {
    cluster_name: cluster,
    endpoints: [
      {
        locality: { zone },
        load_balancing_weight: { value: 1 },
        lb_endpoints: addresses.map((a) => {
          const [ip, port] = a.split(':');
          return { endpoint: { address: { socket_address: { address: ip, port_value: Number(port) } } } };
        }),
      },
    ],
  };
}

/** The four resource types, for tests that loop over them. */
export const RESOURCE_TYPES = [LISTENER, ROUTE_CONFIGURATION, CLUSTER, CLUSTER_LOAD_ASSIGNMENT] as const;
