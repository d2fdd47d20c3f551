import { describe, expect, it } from 'vitest';
import type { Selector } from '../../../src/policies/policy-resource.js';
import type { Networking } from '../../../src/policies/proxy-interfaces.js';
import { buildAssignment, buildCluster, clusterName } from '../../../src/xds/proxyless/clusters.js';
import { proxylessConfig, type ProxylessInput } from '../../../src/xds/proxyless/config.js';
import { decodeAny, encodeAny } from '../../../src/xds/encode-any.js';
import { inboundEndpoints } from '../../../src/xds/proxyless/endpoints.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER } from '../../../src/xds/type-urls.js';
import { fractionalPercent, protoDuration } from '../../../src/xds/proxyless/proto-values.js';
import { at, policy, sel, SVC } from '../../helpers/policies.js';

const client: Networking = {
  address: '10.0.0.1',
  inbound: [{ port: 9000, tags: { [SVC]: 'client', team: 'a' } }],
};
const endpoint = (address: string, version: string, zone?: string, service = 'greeter') => ({
  address,
  port: 50051,
  // The inbounds' protocol: a FaultInjection's destinations name it, as the reference requires.
  tags: { [SVC]: service, version, 'mesh.io/protocol': 'grpc', ...(zone ? { 'mesh.io/zone': zone } : {}) },
});
const endpoints = [endpoint('10.0.1.1', 'v1'), endpoint('10.0.1.2', 'v1'), endpoint('10.0.2.1', 'v2')];
const all = sel({ [SVC]: '*' });
const withConf = (
  type: string,
  name: string,
  conf: unknown,
  fields: { sources?: Selector[]; destinations?: Selector[]; creationTime?: string } = {},
) => ({
  ...policy(type, name, { sources: all, destinations: all, ...fields }),
  conf,
});
// A FaultInjection's destinations name the protocol (Kuma's rule): a proxyless client's calls are gRPC.
const grpcDestinations = sel({ [SVC]: '*', 'mesh.io/protocol': 'grpc' });
const config = (candidates: ProxylessInput['candidates'], extra: Partial<ProxylessInput> = {}) =>
  proxylessConfig({ networking: client, services: ['greeter'], candidates, endpoints, ...extra });
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const routeOf = (c: ReturnType<typeof proxylessConfig>, i = 0): Json =>
  (c.listeners[i] as Json).api_listener.api_listener.route_config.virtual_hosts[0].routes[0];

describe('proxylessConfig: the Listener, clusters and endpoints a proxyless client is served', () => {
  it('without a route: one cluster named after the service, its endpoints by locality with a weight', () => {
    const c = config({});
    expect(routeOf(c).route.cluster).toBe('greeter');
    expect(c.clusters.map((x) => x.name)).toEqual(['greeter']);
    expect(c.assignments).toEqual([
      {
        cluster_name: 'greeter',
        endpoints: [
          {
            locality: {},
            load_balancing_weight: { value: 3 },
            priority: 0,
            lb_endpoints: ['10.0.1.1', '10.0.1.2', '10.0.2.1'].map((address) => ({
              endpoint: { address: { socket_address: { address, port_value: 50051 } } },
              health_status: 'HEALTHY',
              load_balancing_weight: { value: 1 },
            })),
          },
        ],
      },
    ]);
  });

  it('a TrafficRoute split 80/20 by version: weighted clusters, one cluster and assignment per version', () => {
    const split = withConf('TrafficRoute', 'split', {
      split: [
        { weight: 80, destination: { [SVC]: 'greeter', version: 'v1' } },
        { weight: 20, destination: { [SVC]: 'greeter', version: 'v2' } },
      ],
    });
    const c = config({ TrafficRoute: [split] });
    expect(routeOf(c).route.weighted_clusters).toEqual({
      clusters: [
        { name: 'greeter{version=v1}', weight: { value: 80 } },
        { name: 'greeter{version=v2}', weight: { value: 20 } },
      ],
    });
    expect(c.assignments.map((a) => [a.cluster_name, (a as Json).endpoints[0].lb_endpoints.length])).toEqual([
      ['greeter{version=v1}', 2],
      ['greeter{version=v2}', 1],
    ]);
  });

  it('policies whose sources do not match the client do not apply; the more specific one wins', () => {
    const other = withConf(
      'TrafficRoute',
      'other',
      { destination: { [SVC]: 'greeter', version: 'v2' } },
      {
        sources: sel({ [SVC]: 'someone-else' }),
      },
    );
    expect(routeOf(config({ TrafficRoute: [other] })).route.cluster).toBe('greeter');
    const specific = withConf(
      'TrafficRoute',
      'specific',
      { destination: { [SVC]: 'greeter', version: 'v1' } },
      {
        sources: sel({ [SVC]: 'client', team: 'a' }),
        creationTime: at(0),
      },
    );
    const wide = withConf('TrafficRoute', 'wide', { destination: { [SVC]: '*' } }, { creationTime: at(9) });
    expect(routeOf(config({ TrafficRoute: [wide, specific] })).route.cluster).toBe('greeter{version=v1}');
  });

  it('Timeout, Retry and FaultInjection shape the route', () => {
    const c = config({
      Timeout: [
        withConf('Timeout', 't', { http: { requestTimeout: '15s' }, grpc: { maxStreamDuration: '300ms' } }),
      ],
      Retry: [
        withConf('Retry', 'r', {
          grpc: {
            numRetries: 3,
            retryOn: ['unavailable', 'resource_exhausted'],
            backOff: { baseInterval: '25ms' },
          },
        }),
      ],
      FaultInjection: [
        withConf(
          'FaultInjection',
          'f',
          { abort: { percentage: 50, httpStatus: 503 }, delay: { percentage: 0.5, value: '1.5s' } },
          { destinations: grpcDestinations },
        ),
      ],
    });
    const route = routeOf(c);
    expect(route.route.max_stream_duration).toEqual({
      max_stream_duration: { seconds: 0, nanos: 300_000_000 },
    });
    expect(route.route.retry_policy).toEqual({
      retry_on: 'unavailable,resource-exhausted',
      num_retries: { value: 3 },
      retry_back_off: { base_interval: { seconds: 0, nanos: 25_000_000 } },
    });
    expect(route.typed_per_filter_config['envoy.filters.http.fault']).toEqual({
      '@type': 'type.googleapis.com/envoy.extensions.filters.http.fault.v3.HTTPFault',
      abort: { http_status: 503, percentage: { numerator: 50, denominator: 'HUNDRED' } },
      delay: {
        fixed_delay: { seconds: 1, nanos: 500_000_000 },
        percentage: { numerator: 50, denominator: 'TEN_THOUSAND' },
      },
    });
  });

  it('a FaultInjection applies to the gRPC calls only: one for HTTP destinations does not', () => {
    const c = config({
      FaultInjection: [
        withConf(
          'FaultInjection',
          'f',
          { abort: { percentage: 50, httpStatus: 503 } },
          { destinations: sel({ [SVC]: 'greeter', 'mesh.io/protocol': 'http' }) },
        ),
      ],
    });
    expect(routeOf(c).typed_per_filter_config?.['envoy.filters.http.fault']).toBeUndefined();
  });

  it('TrafficRoute http entries become routes tried in order before the catch-all, each with its clusters', () => {
    const route = withConf('TrafficRoute', 'by-path', {
      destination: { [SVC]: 'greeter', version: 'v1' },
      http: [
        {
          match: { path: { prefix: '/helloworld.Greeter/' }, headers: { 'X-User': { exact: 'beta' } } },
          split: [
            { weight: 1, destination: { [SVC]: 'greeter', version: 'v2' } },
            { weight: 0, destination: { [SVC]: 'greeter', version: 'v1' } },
          ],
        },
        { match: { method: { exact: 'GET' } }, destination: { [SVC]: 'greeter', version: 'v3' } },
        {
          match: { method: { regex: 'PO.T' }, path: { exact: '/a.B/C' } },
          modify: { host: { value: 'x' } },
          destination: { [SVC]: 'greeter', version: 'v4' },
        },
      ],
    });
    const c = config({
      Timeout: [withConf('Timeout', 't', { grpc: { maxStreamDuration: '1s' } })],
      TrafficRoute: [route],
    });
    const routes = (c.listeners[0] as Json).api_listener.api_listener.route_config.virtual_hosts[0].routes;
    expect(routes.map((r: Json) => [r.match, r.route.cluster])).toEqual([
      [
        { prefix: '/helloworld.Greeter/', headers: [{ name: 'x-user', string_match: { exact: 'beta' } }] },
        'greeter{version=v2}',
      ],
      [{ path: '/a.B/C' }, 'greeter{version=v4}'],
      [{ prefix: '' }, 'greeter{version=v1}'],
    ]);
    for (const r of routes)
      expect(r.route.max_stream_duration).toEqual({ max_stream_duration: { seconds: 1, nanos: 0 } });
    expect(c.clusters.map((x) => x.name)).toEqual([
      'greeter{version=v1}',
      'greeter{version=v2}',
      'greeter{version=v4}',
    ]);
    expect(c.notes.greeter).toEqual([
      'http[1] never matches: its method matcher does not accept POST, the method of every gRPC call',
      'http[2].modify cannot apply to a proxyless gRPC client',
    ]);
  });

  it('an unknown service still gets its Listener and cluster, with no endpoints (calls fail until one appears)', () => {
    const c = config({}, { services: ['nobody'] });
    expect(c.listeners.map((l) => l.name)).toEqual(['nobody']);
    expect(routeOf(c).route.cluster).toBe('nobody');
    expect(c.clusters.map((x) => x.name)).toEqual(['nobody']);
    expect(c.assignments).toEqual([{ cluster_name: 'nobody', endpoints: [] }]);
    expect(c.notes.nobody).toEqual(['no proxy serves nobody: calls fail with UNAVAILABLE']);
  });

  it('the fingerprint in stat_prefix follows the route config', () => {
    const hcm = (c: ReturnType<typeof proxylessConfig>) => (c.listeners[0] as Json).api_listener.api_listener;
    const before = hcm(config({}));
    const after = hcm(config({ Timeout: [withConf('Timeout', 't', { grpc: { maxStreamDuration: '1s' } })] }));
    expect(before.stat_prefix).toMatch(/^greeter\.[0-9a-f]{8}$/);
    expect(after.stat_prefix).not.toBe(before.stat_prefix);
    expect(hcm(config({})).stat_prefix).toBe(before.stat_prefix);
    expect(before.http_filters.map((f: { name: string }) => f.name)).toEqual([
      'envoy.filters.http.fault',
      'envoy.filters.http.router',
    ]);
    expect(JSON.stringify(before)).not.toContain('idle_timeout');
  });

  it('says what a gRPC client cannot apply', () => {
    const c = config({
      HealthCheck: [
        withConf('HealthCheck', 'h', {
          interval: '1s',
          timeout: '1s',
          unhealthyThreshold: 1,
          healthyThreshold: 1,
        }),
      ],
      TrafficRoute: [
        withConf('TrafficRoute', 'lb', { destination: { [SVC]: '*' }, loadBalancer: { leastRequest: {} } }),
      ],
    });
    expect(c.notes.greeter).toEqual([
      'loadBalancer.leastRequest cannot apply to a proxyless gRPC client: round robin is used',
      'HealthCheck cannot apply to a proxyless gRPC client: it has no active health checking',
    ]);
  });
});

describe('clusters and endpoints', () => {
  it('names a cluster by its service and its other tags, sorted', () => {
    expect(clusterName({ [SVC]: 'web', z: '1', a: '2' })).toBe('web{a=2,z=1}');
    expect(clusterName({ [SVC]: 'web' })).toBe('web');
  });

  it('a circuit breaker maps to outlier detection and max_requests; the blocks are there, neutral, without one', () => {
    const neutral = buildCluster('web').cluster as Json;
    expect(neutral.circuit_breakers).toEqual({ thresholds: [{ max_requests: { value: 1024 } }] });
    expect(neutral.outlier_detection.enforcing_success_rate).toEqual({ value: 0 });
    expect(neutral.outlier_detection.enforcing_failure_percentage).toEqual({ value: 0 });
    const { cluster, notes } = buildCluster('web', {
      circuitBreaker: {
        interval: '5s',
        detectors: { failure: { threshold: 20, requestVolume: 10 }, totalErrors: { consecutive: 5 } },
        thresholds: { maxRequests: 7, maxConnections: 3 },
      },
    });
    const c = cluster as Json;
    expect(c.circuit_breakers.thresholds[0].max_requests).toEqual({ value: 7 });
    expect(c.outlier_detection).toMatchObject({
      interval: { seconds: 5, nanos: 0 },
      enforcing_failure_percentage: { value: 100 },
      failure_percentage_threshold: { value: 20 },
      failure_percentage_request_volume: { value: 10 },
    });
    expect(notes).toEqual([
      'circuit breaker detectors.totalErrors cannot apply to a proxyless gRPC client',
      'circuit breaker thresholds.maxConnections cannot apply to a proxyless gRPC client',
    ]);
    expect(
      (buildCluster('web', { loadBalancer: { ringHash: { minRingSize: 64 } } }).cluster as Json).lb_policy,
    ).toBe('RING_HASH');
  });

  it('groups by zone with weights, keeps the local zone, drops duplicates and hostnames with a note', () => {
    const eps = [
      endpoint('10.0.0.2', 'v1', 'z1'),
      endpoint('10.0.0.2', 'v1', 'z1'),
      endpoint('10.0.0.3', 'v1', 'z1'),
      endpoint('backend.local', 'v1', 'z1'),
      endpoint('10.0.9.9', 'v1', 'z2'),
    ];
    const { assignment, notes } = buildAssignment('greeter', eps, 'z1');
    const localities = (assignment as Json).endpoints;
    expect(localities).toHaveLength(1);
    expect(localities[0].locality).toEqual({ zone: 'z1' });
    expect(localities[0].load_balancing_weight).toEqual({ value: 2 });
    expect(notes).toEqual(['endpoint backend.local:50051 is not an IP address: left out']);
    const away = buildAssignment('greeter', [endpoint('10.0.9.9', 'v1', 'z2')], 'z1');
    expect((away.assignment as Json).endpoints).toEqual([]);
    expect(away.notes[0]).toContain('has instances only in other zones (z2)');
    const everywhere = buildAssignment('greeter', eps);
    expect((everywhere.assignment as Json).endpoints.map((l: Json) => l.locality.zone)).toEqual(['z1', 'z2']);
  });
});

describe('protobuf values', () => {
  it('durations and fractional percents (0.5 % stays 0.5 %)', () => {
    expect(protoDuration('1h30m')).toEqual({ seconds: 5400, nanos: 0 });
    expect(protoDuration('1.5s')).toEqual({ seconds: 1, nanos: 500_000_000 });
    expect(fractionalPercent(50)).toEqual({ numerator: 50, denominator: 'HUNDRED' });
    expect(fractionalPercent(0.5)).toEqual({ numerator: 50, denominator: 'TEN_THOUSAND' });
    expect(fractionalPercent(0.0125)).toEqual({ numerator: 125, denominator: 'MILLION' });
  });
});

describe('inboundEndpoints', () => {
  it('every inbound at its own address or the proxy’s, not-ready ones marked; gateways serve nothing', () => {
    expect(
      inboundEndpoints([
        {
          address: '10.0.0.1',
          inbound: [
            { port: 1, tags: { [SVC]: 'a' } },
            { port: 2, address: '10.0.0.9', tags: { [SVC]: 'b' }, health: { ready: true } },
            { port: 3, tags: { [SVC]: 'c' }, health: { ready: false } },
          ],
        },
        { address: '10.0.0.2' },
      ]),
    ).toEqual([
      { address: '10.0.0.1', port: 1, tags: { [SVC]: 'a' } },
      { address: '10.0.0.9', port: 2, tags: { [SVC]: 'b' } },
      { address: '10.0.0.1', port: 3, tags: { [SVC]: 'c' }, ready: false },
    ]);
  });
});

describe('every generated resource passes the Envoy protos (encodeAny checks fields, types, enums, nested Any)', () => {
  it('listeners, clusters and assignments with every policy kind set, and a service nothing serves', () => {
    const c = proxylessConfig({
      networking: client,
      services: ['greeter', 'nobody'],
      candidates: {
        TrafficRoute: [
          withConf('TrafficRoute', 'split', {
            split: [
              { weight: 80, destination: { [SVC]: 'greeter', version: 'v1' } },
              { weight: 20, destination: { [SVC]: 'greeter', version: 'v2' } },
            ],
            loadBalancer: { ringHash: { minRingSize: 64, maxRingSize: 1024 } },
            http: [
              {
                match: { path: { regex: '/test\\..*' }, headers: { 'x-user': { exact: 'beta' } } },
                destination: { [SVC]: 'greeter', version: 'v3' },
              },
              {
                match: { path: { exact: '/a.B/C' }, headers: { r: { prefix: 'x' }, q: { regex: 'a+' } } },
                split: [{ weight: 1, destination: { [SVC]: 'greeter', version: 'v2' } }],
              },
            ],
          }),
        ],
        Timeout: [withConf('Timeout', 't', { grpc: { maxStreamDuration: '300ms' } })],
        Retry: [
          withConf('Retry', 'r', {
            grpc: { numRetries: 2, backOff: { baseInterval: '10ms', maxInterval: '1s' } },
          }),
        ],
        FaultInjection: [
          withConf(
            'FaultInjection',
            'f',
            { abort: { percentage: 0.5, httpStatus: 503 }, delay: { percentage: 50, value: '1s' } },
            { destinations: grpcDestinations },
          ),
        ],
        CircuitBreaker: [
          withConf('CircuitBreaker', 'cb', {
            interval: '1s',
            baseEjectionTime: '30s',
            maxEjectionPercent: 20,
            detectors: {
              standardDeviation: { requestVolume: 10, minimumHosts: 2, factor: 1.9 },
              failure: { threshold: 85 },
            },
            thresholds: { maxRequests: 100 },
          }),
        ],
      },
      endpoints: [endpoint('10.0.1.1', 'v1', 'z1'), endpoint('10.0.2.1', 'v2')],
    });
    expect(c.listeners).toHaveLength(2);
    for (const l of c.listeners) expect(decodeAny(encodeAny(LISTENER, l)).name).toBe(l.name);
    for (const x of c.clusters) expect(decodeAny(encodeAny(CLUSTER, x)).name).toBe(x.name);
    for (const a of c.assignments) {
      expect(decodeAny(encodeAny(CLUSTER_LOAD_ASSIGNMENT, a)).cluster_name).toBe(a.cluster_name);
    }
  });
});
