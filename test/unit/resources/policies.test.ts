import { describe, expect, it } from 'vitest';
import { circuitBreaker } from '../../../src/resources/kinds/circuit-breaker.js';
import { faultInjection } from '../../../src/resources/kinds/fault-injection.js';
import { healthCheck } from '../../../src/resources/kinds/health-check.js';
import { proxyTemplate } from '../../../src/resources/kinds/proxy-template.js';
import { rateLimit } from '../../../src/resources/kinds/rate-limit.js';
import { retry } from '../../../src/resources/kinds/retry.js';
import { timeout } from '../../../src/resources/kinds/timeout.js';
import { trafficLog } from '../../../src/resources/kinds/traffic-log.js';
import { trafficPermission } from '../../../src/resources/kinds/traffic-permission.js';
import { trafficRoute } from '../../../src/resources/kinds/traffic-route.js';
import { trafficTrace } from '../../../src/resources/kinds/traffic-trace.js';
import { defaultPolicies } from '../../../src/app/default-policies.js';
import { registry } from '../../../src/resources/registry.js';
import { validateBody } from '../../../src/resources/validate.js';
import { ALL, ANY_TO_ANY, expectCauses, expectValid, MESH } from './helpers.js';

const SVC = 'mesh.io/service';

describe('default policies written at mesh creation (decisions §3)', () => {
  it('as defaultPolicies writes them, each is valid for its kind', () => {
    for (const p of defaultPolicies(MESH)) {
      const desc = registry.get(p.kind);
      const r = validateBody(
        desc,
        { type: desc.wireType, mesh: MESH, name: p.name, ...p.spec },
        { mesh: MESH, name: p.name },
      );
      expect(r.ok ? [] : r.causes, `${p.kind} ${p.name}`).toEqual([]);
    }
  });
  it('validate against their kinds', () => {
    expectValid(trafficPermission, ANY_TO_ANY);
    expectValid(trafficRoute, {
      ...ANY_TO_ANY,
      conf: { loadBalancer: { roundRobin: {} }, destination: { [SVC]: '*' } },
    });
    expectValid(timeout, {
      ...ANY_TO_ANY,
      conf: {
        connectTimeout: '5s',
        tcp: { idleTimeout: '1h' },
        http: { requestTimeout: '15s', idleTimeout: '1h' },
        grpc: { streamIdleTimeout: '30m' },
      },
    });
    expectValid(circuitBreaker, {
      ...ANY_TO_ANY,
      conf: {
        thresholds: { maxConnections: 1024, maxPendingRequests: 1024, maxRequests: 1024, maxRetries: 3 },
      },
    });
    const backOff = { baseInterval: '25ms', maxInterval: '250ms' };
    expectValid(retry, {
      ...ANY_TO_ANY,
      conf: {
        http: { numRetries: 5, perTryTimeout: '16s', backOff },
        grpc: { numRetries: 5, perTryTimeout: '16s', backOff },
        tcp: { maxConnectAttempts: 5 },
      },
    });
  });
});

describe('sources and destinations (spec 2.6)', () => {
  it('are required and non-empty, each match a non-empty selector', () => {
    // Kuma reads an absent list as an empty one.
    expectCauses(trafficPermission, {}, [
      ['sources', 'must have at least one element'],
      ['destinations', 'must have at least one element'],
    ]);
    expectCauses(trafficPermission, { sources: [], destinations: [{ match: {} }] }, [
      ['sources', 'must have at least one element'],
      ['destinations[0].match', 'must have at least one tag'],
    ]);
    expectCauses(trafficPermission, { sources: [{ match: { [SVC]: 'a b' } }], destinations: [{}] }, [
      [
        'sources[0].match["mesh.io/service"]',
        'tag value must be "*" or consist of letters, digits and ._:/-',
      ],
      // Kuma reads an absent match as an empty one.
      ['destinations[0].match', 'must have at least one tag'],
    ]);
    expectCauses(trafficPermission, { sources: ALL, destinations: ALL, selectors: ALL }, [
      ['selectors', 'unknown field'],
    ]);
  });
});

describe('HealthCheck', () => {
  const conf = { interval: '10s', timeout: '2s', unhealthyThreshold: 3, healthyThreshold: 1 };
  it('accepts the fields of spec 2.6', () => {
    expectValid(healthCheck, {
      ...ANY_TO_ANY,
      conf: {
        ...conf,
        reuseConnection: false,
        http: {
          path: '/health',
          requestHeadersToAdd: [
            { append: false, header: { key: 'x-a', value: 'b' } },
            { header: { key: 'x-c', value: 'd' } },
          ],
          expectedStatuses: [200, 201],
          useHttp1: true,
        },
      },
    });
  });
  it('checks a TCP check, never beside an HTTP one (Kuma rule)', () => {
    const tcp = { send: 'Zm9v', receive: ['YmFy', 'YmF6'] };
    expectValid(healthCheck, { ...ANY_TO_ANY, conf: { ...conf, tcp } });
    expectCauses(healthCheck, { ...ANY_TO_ANY, conf: { ...conf, tcp, http: { path: '/h' } } }, [
      ['conf', 'only one of "tcp", "http" can be set'],
    ]);
  });
  it('requires conf with interval, timeout and both thresholds', () => {
    expectCauses(healthCheck, ANY_TO_ANY, [['conf', 'cannot be empty']]);
    expectCauses(healthCheck, { ...ANY_TO_ANY, conf: {} }, [
      ['conf.interval', 'cannot be empty'],
      'conf.timeout',
      'conf.unhealthyThreshold',
      'conf.healthyThreshold',
    ]);
  });
  it('checks durations, integers, base64 and statuses', () => {
    expectCauses(
      healthCheck,
      {
        ...ANY_TO_ANY,
        conf: {
          ...conf,
          interval: '10',
          unhealthyThreshold: 0,
          healthyThreshold: 1.5,
          tcp: { send: 'not base64!', receive: ['YmFy', 'x'] },
          http: { path: '/h', expectedStatuses: [200, 99] },
        },
      },
      [
        ['conf.interval', 'must be a duration such as 300ms, 5s, 1.5s, 10m, 1h30m'],
        ['conf.unhealthyThreshold', 'must be greater than or equal to 1'],
        ['conf.healthyThreshold', 'must be an integer'],
        ['conf.tcp.send', 'must be valid base64'],
        ['conf.tcp.receive[1]', 'must be valid base64'],
        ['conf.http.expectedStatuses[1]', 'must be greater than or equal to 100'],
      ],
    );
  });
  it('rejects unknown fields inside conf', () => {
    expectCauses(healthCheck, { ...ANY_TO_ANY, conf: { ...conf, foo: 1, http: { path: '/h', bar: 2 } } }, [
      ['conf.foo', 'unknown field'],
      ['conf.http.bar', 'unknown field'],
    ]);
  });
});

describe('TrafficLog and TrafficTrace', () => {
  it('have an optional conf with an optional backend', () => {
    expectValid(trafficLog, ANY_TO_ANY);
    expectValid(trafficLog, { ...ANY_TO_ANY, conf: { backend: 'file-1' } });
    expectValid(trafficLog, { ...ANY_TO_ANY, conf: {} });
    expectValid(trafficTrace, { selectors: ALL });
    expectValid(trafficTrace, { selectors: ALL, conf: { backend: 'zipkin-1' } });
  });
  it('reject bad shapes', () => {
    expectCauses(trafficLog, { ...ANY_TO_ANY, conf: { backend: 7, format: 'x' } }, [
      ['conf.backend', 'must be a string'],
      ['conf.format', 'unknown field'],
    ]);
    // Kuma: an empty backend is the mesh's default one; an absent list is an empty one.
    expectCauses(trafficTrace, { conf: { backend: '' } }, [['selectors', 'must have at least one element']]);
    expectCauses(trafficTrace, { selectors: [], ...ANY_TO_ANY }, [
      ['selectors', 'must have at least one element'],
      ['sources', 'unknown field'],
      ['destinations', 'unknown field'],
    ]);
  });
});

describe('TrafficRoute', () => {
  it('accepts a weighted split and every load balancer', () => {
    expectValid(trafficRoute, {
      ...ANY_TO_ANY,
      conf: {
        split: [
          { weight: 90, destination: { [SVC]: 'backend', version: 'v1' } },
          { weight: 0, destination: { [SVC]: 'backend', version: 'v2' } },
        ],
      },
    });
    for (const loadBalancer of [
      { roundRobin: {} },
      { leastRequest: { choiceCount: 4 } },
      { ringHash: { hashFunction: 'MURMUR_HASH_2', minRingSize: 64, maxRingSize: 1024 } },
      { random: {} },
      { maglev: {} },
    ]) {
      expectValid(trafficRoute, { ...ANY_TO_ANY, conf: { destination: { [SVC]: 'b' }, loadBalancer } });
    }
  });
  it('requires exactly one of split and destination (cause on conf)', () => {
    expectCauses(trafficRoute, { ...ANY_TO_ANY, conf: {} }, [
      ['conf', 'requires one of "split", "destination"'],
    ]);
    expectCauses(
      trafficRoute,
      {
        ...ANY_TO_ANY,
        conf: { destination: { [SVC]: '*' }, split: [{ weight: 1, destination: { [SVC]: 'a' } }] },
      },
      [['conf', 'only one of "split", "destination" can be set, got "split", "destination"']],
    );
  });
  it('checks split entries', () => {
    expectCauses(trafficRoute, { ...ANY_TO_ANY, conf: { split: [] } }, [
      ['conf.split', 'must have at least one element'],
    ]);
    expectCauses(
      trafficRoute,
      {
        ...ANY_TO_ANY,
        conf: {
          split: [
            { weight: -1, destination: { [SVC]: 'a' } },
            { weight: 1.5, destination: {} },
            { weight: 1, destination: { version: 'v1' } },
          ],
        },
      },
      [
        ['conf.split[0].weight', 'must be greater than or equal to 0'],
        ['conf.split[1].weight', 'must be an integer'],
        // Kuma's rule: the missing service tag is a cause on the destination itself.
        ['conf.split[1].destination', 'must have at least one tag'],
        ['conf.split[1].destination', 'mandatory tag "mesh.io/service" is missing'],
        ['conf.split[2].destination', 'mandatory tag "mesh.io/service" is missing'],
      ],
    );
    // Kuma's rule: some entry has a weight above 0.
    expectCauses(
      trafficRoute,
      { ...ANY_TO_ANY, conf: { split: [{ weight: 0, destination: { [SVC]: 'a' } }] } },
      [['conf.split', 'there must be at least one split entry with weight above 0']],
    );
  });
  it('conf.http (Kuma 2.0): routes by method, path and headers, checked as Kuma checks them', () => {
    const http = (entries: unknown) => ({
      ...ANY_TO_ANY,
      conf: { destination: { [SVC]: '*' }, http: entries },
    });
    expectValid(
      trafficRoute,
      http([
        {
          match: {
            method: { exact: 'POST' },
            path: { prefix: '/api' },
            headers: { 'x-user': { regex: 'b.*' } },
          },
          modify: {
            path: { rewritePrefix: '/v2' },
            host: { fromPath: { pattern: '(.*)', substitution: '\\1' } },
            requestHeaders: { add: [{ name: 'x-a', value: '1', append: true }], remove: [{ name: 'x-b' }] },
          },
          split: [{ weight: 1, destination: { [SVC]: 'b', version: 'v2' } }],
        },
        { match: { path: { exact: '' } }, destination: { [SVC]: 'b' } },
      ]),
    );
    expectCauses(
      trafficRoute,
      http([
        { match: {}, destination: { [SVC]: 'b' } },
        { match: { path: { prefix: '' }, headers: {} } },
        {
          match: { method: {}, headers: { x: { exact: 'a', regex: 'b' } } },
          modify: { path: { rewritePrefix: '/x' }, requestHeaders: { add: [{ name: ':path', value: '' }] } },
          destination: { [SVC]: 'b' },
        },
      ]),
      [
        ['conf.http[0].match', 'requires at least one of "method", "path", "headers"'],
        ['conf.http[1].match.path.prefix', 'cannot be empty'],
        ['conf.http[1].match.headers', 'must contain at least one element'],
        ['conf.http[1]', 'requires one of "split", "destination"'],
        ['conf.http[2].match.method', 'requires one of "prefix", "exact", "regex"'],
        [
          'conf.http[2].match.headers.x',
          'only one of "prefix", "exact", "regex" can be set, got "exact", "regex"',
        ],
        [
          'conf.http[2].modify.requestHeaders.add[0].name',
          'host header and HTTP/2 pseudo-headers are not allowed to be modified',
        ],
        ['conf.http[2].modify.requestHeaders.add[0].value', 'cannot be empty'],
        [
          'conf.http[2].modify.path.rewritePrefix',
          'can only be set when .http.match.path.prefix is not empty',
        ],
      ],
    );
  });
  it('checks the load balancer', () => {
    const lb = (loadBalancer: unknown) => ({
      ...ANY_TO_ANY,
      conf: { destination: { [SVC]: '*' }, loadBalancer },
    });
    expectCauses(trafficRoute, lb({}), [
      ['conf.loadBalancer', 'requires one of "roundRobin", "leastRequest", "ringHash", "random", "maglev"'],
    ]);
    expectCauses(trafficRoute, lb({ roundRobin: {}, random: {} }), ['conf.loadBalancer']);
    expectCauses(trafficRoute, lb({ roundRobin: { x: 1 } }), [
      ['conf.loadBalancer.roundRobin.x', 'unknown field'],
    ]);
    expectCauses(trafficRoute, lb({ ringHash: { hashFunction: 'MD5' } }), [
      ['conf.loadBalancer.ringHash.hashFunction', 'must be one of "XX_HASH", "MURMUR_HASH_2"'],
    ]);
    expectCauses(trafficRoute, lb({ leastRequest: { choiceCount: 1 } }), [
      ['conf.loadBalancer.leastRequest.choiceCount', 'must be greater than or equal to 2'],
    ]);
  });
});

describe('FaultInjection', () => {
  // Kuma's rule: each destination names the protocol the faults apply to (http, http2 or grpc).
  const HTTP_TO_ANY = { sources: ALL, destinations: [{ match: { [SVC]: '*', 'mesh.io/protocol': 'http' } }] };
  it('accepts delay, abort and bandwidth limits', () => {
    expectValid(faultInjection, {
      ...HTTP_TO_ANY,
      conf: {
        delay: { percentage: 50.5, value: '0.2s' },
        abort: { percentage: 10, httpStatus: 503 },
        responseBandwidth: { percentage: 100, limit: '50kbps' },
      },
    });
    for (const limit of ['1mbps', '10gbps', '5 kbps']) {
      expectValid(faultInjection, { ...HTTP_TO_ANY, conf: { responseBandwidth: { percentage: 1, limit } } });
    }
  });
  it('requires the protocol tag in each destination, one of http, http2 and grpc', () => {
    for (const protocol of ['http', 'http2', 'grpc']) {
      expectValid(faultInjection, {
        sources: ALL,
        destinations: [{ match: { [SVC]: 'backend', 'mesh.io/protocol': protocol } }],
        conf: { abort: { percentage: 10, httpStatus: 503 } },
      });
    }
    expectCauses(
      faultInjection,
      {
        sources: ALL,
        destinations: [...ALL, { match: { [SVC]: 'backend', 'mesh.io/protocol': 'tcp' } }],
        conf: { abort: { percentage: 10, httpStatus: 503 } },
      },
      [
        ['destinations[0].match', 'protocol must be specified (tag "mesh.io/protocol")'],
        ['destinations[1].match["mesh.io/protocol"]', 'must be one of the [http, http2, grpc]'],
      ],
    );
  });
  it('requires at least one fault; an empty one is none', () => {
    expectCauses(faultInjection, { ...HTTP_TO_ANY, conf: {} }, [
      ['conf', 'requires at least one fault: delay, abort, responseBandwidth'],
    ]);
    expectCauses(faultInjection, { ...HTTP_TO_ANY, conf: { delay: {} } }, [
      ['conf', 'requires at least one fault: delay, abort, responseBandwidth'],
    ]);
  });
  it('checks percentages, statuses, durations and rates', () => {
    expectCauses(
      faultInjection,
      {
        ...HTTP_TO_ANY,
        conf: {
          delay: { percentage: 150, value: 'soon' },
          abort: { percentage: -1, httpStatus: 599 },
          responseBandwidth: { limit: '100bps' },
        },
      },
      [
        ['conf.delay.percentage', 'must be in the range 0.0-100.0'],
        'conf.delay.value',
        ['conf.abort.percentage', 'must be in the range 0.0-100.0'],
        ['conf.abort.httpStatus', 'must be a known HTTP status code'],
        ['conf.responseBandwidth.percentage', 'cannot be empty'],
        ['conf.responseBandwidth.limit', 'must be a rate in kbps, mbps or gbps, such as 50kbps'],
      ],
    );
  });
});

describe('Retry', () => {
  it('accepts grpc retryOn values and http status codes', () => {
    expectValid(retry, {
      ...ANY_TO_ANY,
      conf: {
        http: { retriableStatusCodes: [500, 503] },
        grpc: {
          retryOn: ['cancelled', 'deadline_exceeded', 'internal', 'resource_exhausted', 'unavailable'],
        },
      },
    });
  });
  it('requires at least one protocol and a base interval', () => {
    expectCauses(retry, { ...ANY_TO_ANY, conf: {} }, [
      ['conf', 'requires at least one of "http", "grpc", "tcp"'],
    ]);
    expectCauses(retry, { ...ANY_TO_ANY, conf: { http: { backOff: { maxInterval: '1s' } }, tcp: {} } }, [
      ['conf.http.backOff.baseInterval', 'cannot be empty'],
      ['conf.tcp.maxConnectAttempts', 'cannot be empty'],
    ]);
  });
  it('checks values', () => {
    expectCauses(
      retry,
      {
        ...ANY_TO_ANY,
        conf: { grpc: { numRetries: -2, perTryTimeout: '16', retryOn: ['unavailable', 'gateway_error'] } },
      },
      [
        // Kuma's rule: a count given is above 0.
        ['conf.grpc.numRetries', 'must be greater than or equal to 1'],
        'conf.grpc.perTryTimeout',
        [
          'conf.grpc.retryOn[1]',
          'must be one of "cancelled", "deadline_exceeded", "internal", "resource_exhausted", "unavailable"',
        ],
      ],
    );
  });
});

describe('Timeout', () => {
  it('checks durations and rejects unknown fields', () => {
    expectValid(timeout, { ...ANY_TO_ANY, conf: { grpc: { maxStreamDuration: '1h30m' } } });
    expectCauses(
      timeout,
      { ...ANY_TO_ANY, conf: { connectTimeout: 5, http: { requestTimeout: '1x' }, foo: '1s' } },
      [
        ['conf.connectTimeout', 'must be a string'],
        'conf.http.requestTimeout',
        ['conf.foo', 'unknown field'],
      ],
    );
    expectCauses(timeout, ANY_TO_ANY, [['conf', 'cannot be empty']]);
  });
});

describe('ProxyTemplate', () => {
  it('accepts imports, resources and modifications', () => {
    const spec = {
      selectors: ALL,
      conf: {
        imports: ['default-proxy'],
        resources: [{ name: 'cluster-1', version: 'v1', resource: 'name: cluster-1\nconnectTimeout: 5s' }],
        modifications: [
          { cluster: { operation: 'add', value: 'name: c' } },
          {
            listener: {
              operation: 'patch',
              match: { name: 'inbound:10.0.0.1:8080', tags: { [SVC]: 'backend' } },
              value: 'perConnectionBufferLimitBytes: 1024',
            },
          },
          {
            networkFilter: {
              operation: 'addFirst',
              match: { listenerName: 'l', origin: 'inbound' },
              value: 'name: envoy.filters.network.rbac',
            },
          },
          { httpFilter: { operation: 'remove', match: { name: 'envoy.filters.http.router' } } },
          { virtualHost: { operation: 'remove', match: { routeConfigurationName: 'outbound:backend' } } },
        ],
      },
    };
    expect(expectValid(proxyTemplate, spec)).toEqual(spec);
    expectValid(proxyTemplate, { selectors: ALL });
  });
  it('checks selectors, resources and modifications', () => {
    // Kuma lets a ProxyTemplate have no selectors (it then selects no proxy).
    expectCauses(proxyTemplate, { conf: { imports: [''] } }, ['conf.imports[0]']);
    expectCauses(
      proxyTemplate,
      {
        selectors: [{ match: {} }],
        conf: {
          resources: [{ name: 'r', resource: 'x' }],
          modifications: [
            {},
            { cluster: { operation: 'add' }, listener: { operation: 'add' } },
            { httpFilter: { operation: 'add', match: { foo: 'x' } } },
          ],
        },
      },
      [
        ['selectors[0].match', 'must have at least one tag'],
        ['selectors[0].match', 'mandatory tag "mesh.io/service" is missing'],
        ['conf.resources[0].version', 'cannot be empty'],
        // Kuma's rule: raw configuration decodes (here: to a YAML or JSON object).
        ['conf.resources[0].resource', 'native Envoy resource is not valid: must be a YAML or JSON object'],
        'conf.modifications[1].cluster.value',
        'conf.modifications[1].listener.value',
        [
          'conf.modifications[0]',
          'requires one of "cluster", "listener", "networkFilter", "httpFilter", "virtualHost"',
        ],
        'conf.modifications[1]',
        'conf.modifications[2].httpFilter.operation',
        ['conf.modifications[2].httpFilter.match.foo', 'unknown field'],
      ],
    );
  });
});

describe('CircuitBreaker', () => {
  it('accepts detectors and thresholds', () => {
    expectValid(circuitBreaker, {
      ...ANY_TO_ANY,
      conf: {
        interval: '5s',
        baseEjectionTime: '30s',
        maxEjectionPercent: 20,
        splitExternalAndLocalErrors: false,
        detectors: {
          totalErrors: { consecutive: 20 },
          gatewayErrors: { consecutive: 10 },
          localErrors: { consecutive: 7 },
          standardDeviation: { requestVolume: 10, minimumHosts: 5, factor: 1.9 },
          failure: { requestVolume: 10, minimumHosts: 5, threshold: 85 },
        },
      },
    });
  });
  it('requires sources, destinations and conf; checks values', () => {
    expectCauses(circuitBreaker, {}, ['sources', 'destinations', 'conf']);
    expectCauses(
      circuitBreaker,
      {
        ...ANY_TO_ANY,
        conf: {
          maxEjectionPercent: 120,
          detectors: { totalErrors: { consecutive: 'many' }, failure: { threshold: 101 } },
        },
      },
      [
        ['conf.maxEjectionPercent', 'must be less than or equal to 100'],
        ['conf.detectors.totalErrors.consecutive', 'must be an integer'],
        'conf.detectors.failure.threshold',
      ],
    );
  });
});

describe('RateLimit', () => {
  it('accepts requests per interval with an answer', () => {
    expectValid(rateLimit, {
      ...ANY_TO_ANY,
      conf: {
        http: {
          requests: 100,
          interval: '1s',
          onRateLimit: { status: 429, headers: [{ key: 'x-limited', value: 'true', append: true }] },
        },
      },
    });
  });
  it('requires conf.http.requests and interval', () => {
    // Kuma's rule: conf is required, its http only checked when given.
    expectValid(rateLimit, { ...ANY_TO_ANY, conf: {} });
    expectCauses(rateLimit, ANY_TO_ANY, [['conf', 'cannot be empty']]);
    expectCauses(
      rateLimit,
      { ...ANY_TO_ANY, conf: { http: { onRateLimit: { headers: [{ value: 'v' }] } } } },
      [
        ['conf.http.requests', 'cannot be empty'],
        ['conf.http.interval', 'cannot be empty'],
        ['conf.http.onRateLimit.headers[0].key', 'cannot be empty'],
      ],
    );
    expectCauses(
      rateLimit,
      { sources: [], destinations: ALL, conf: { http: { requests: 0, interval: '1s' } } },
      ['sources', ['conf.http.requests', 'must be greater than or equal to 1']],
    );
  });
});
