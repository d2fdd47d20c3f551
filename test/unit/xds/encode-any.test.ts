import { describe, expect, it } from 'vitest';
import { decodeAny, encodeAny } from '../../../src/xds/encode-any.js';
import {
  CLUSTER,
  CLUSTER_LOAD_ASSIGNMENT,
  FAULT,
  HTTP_CONNECTION_MANAGER,
  LISTENER,
  RBAC,
  ROUTE_CONFIGURATION,
} from '../../../src/xds/type-urls.js';
import { edsCluster, loadAssignment, proxylessListener, weightedRoutes } from '../../helpers/xds.js';

const roundTrip = (typeUrl: string, object: object): unknown => decodeAny(encodeAny(typeUrl, object));

describe('encodeAny', () => {
  it('encodes a proxyless Listener with an inline route config and the router filter, and decodes it back equal', () => {
    const listener = proxylessListener('backend');
    const any = encodeAny(LISTENER, listener);
    expect(any.type_url).toBe(LISTENER);
    expect(any.value.length).toBeGreaterThan(50);
    expect(roundTrip(LISTENER, listener)).toEqual(listener);
  });

  it('encodes a RouteConfiguration with weighted clusters', () => {
    const routes = weightedRoutes('backend', { backend_v1: 80, backend_v2: 20 });
    expect(roundTrip(ROUTE_CONFIGURATION, routes)).toEqual(routes);
  });

  it('encodes an EDS Cluster fed by ADS', () => {
    const cluster = edsCluster('backend');
    expect(roundTrip(CLUSTER, cluster)).toEqual(cluster);
  });

  it('encodes a ClusterLoadAssignment with one locality and two endpoints', () => {
    const cla = loadAssignment('backend', ['10.0.0.1:8080', '10.0.0.2:8080']);
    expect(roundTrip(CLUSTER_LOAD_ASSIGNMENT, cla)).toEqual(cla);
  });

  it('encodes the fault and RBAC filters nested in a connection manager', () => {
    const hcm = {
      stat_prefix: 'x',
      http_filters: [
        {
          name: 'envoy.filters.http.fault',
          typed_config: {
            '@type': FAULT,
            abort: { grpc_status: 14, percentage: { numerator: 5, denominator: 'TEN_THOUSAND' } },
          },
        },
        {
          name: 'envoy.filters.http.rbac',
          typed_config: {
            '@type': RBAC,
            rules: { policies: { allow: { permissions: [{ any: true }], principals: [{ any: true }] } } },
          },
        },
      ],
    };
    expect(roundTrip(HTTP_CONNECTION_MANAGER, hcm)).toEqual(hcm);
  });

  it('refuses an unknown field, naming its path and type', () => {
    expect(() => encodeAny(CLUSTER, { ...edsCluster('b'), conect_timeout: { seconds: 1 } })).toThrow(
      'Cluster.conect_timeout: no such field in envoy.config.cluster.v3.Cluster',
    );
  });

  it('refuses an unknown field inside a nested Any', () => {
    const listener = proxylessListener('backend') as {
      api_listener: { api_listener: Record<string, unknown> };
    };
    listener.api_listener.api_listener.stat_prefx = 'x';
    expect(() => encodeAny(LISTENER, listener)).toThrow(
      'Listener.api_listener.api_listener(HttpConnectionManager).stat_prefx: no such field in envoy.extensions.filters.network.http_connection_manager.v3.HttpConnectionManager',
    );
  });

  it('refuses a wrong value type, at the top and inside a nested Any', () => {
    expect(() => encodeAny(LISTENER, { name: 3 })).toThrow('Listener.name: string expected');
    const listener = proxylessListener('backend') as {
      api_listener: { api_listener: Record<string, unknown> };
    };
    listener.api_listener.api_listener.stat_prefix = 7;
    expect(() => encodeAny(LISTENER, listener)).toThrow(
      'Listener.api_listener.api_listener(HttpConnectionManager).stat_prefix: string expected',
    );
  });

  it('refuses an unknown type URL', () => {
    expect(() => encodeAny('type.googleapis.com/no.such.Type', {})).toThrow('unknown type');
    const listener = {
      name: 'l',
      api_listener: { api_listener: { '@type': 'type.googleapis.com/no.Such' } },
    };
    expect(() => encodeAny(LISTENER, listener)).toThrow('Listener.api_listener.api_listener: unknown type');
  });

  it('encodes the same object to the same bytes', () => {
    expect(
      encodeAny(LISTENER, proxylessListener('a')).value.equals(
        encodeAny(LISTENER, proxylessListener('a')).value,
      ),
    ).toBe(true);
    expect(
      encodeAny(LISTENER, proxylessListener('a')).value.equals(
        encodeAny(LISTENER, proxylessListener('a', 'c2')).value,
      ),
    ).toBe(false);
  });
});
