import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane } from '../helpers/control-plane.js';
import { golden, normalize } from '../helpers/golden.js';

/** One request of the golden table: run in order against one control plane with a fixed clock. */
interface Case {
  name: string;
  method: 'GET' | 'PUT' | 'DELETE' | 'POST';
  url: string;
  body?: unknown;
  rawBody?: string;
  headers?: Record<string, string>;
}

const svc = (s: string) => ({ 'mesh.io/service': s });
const all = [{ match: { 'mesh.io/service': '*' } }];
const dp = (name: string, service: string, port: number) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: {
    address: '10.0.0.1',
    inbound: [{ port, servicePort: 8080, tags: { ...svc(service), version: 'v1' } }],
  },
});
const policy = (type: string, name: string, extra: Record<string, unknown>) => ({
  type,
  mesh: 'default',
  name,
  ...extra,
});

const WRITES: Array<[string, string, Record<string, unknown>]> = [
  [
    'health-checks',
    'HealthCheck',
    {
      sources: all,
      destinations: all,
      conf: {
        interval: '10s',
        timeout: '2s',
        unhealthyThreshold: 3,
        healthyThreshold: 1,
        tcp: { send: 'Zm9v', receive: ['YmFy'] },
      },
    },
  ],
  ['traffic-permissions', 'TrafficPermission', { sources: all, destinations: [{ match: svc('backend') }] }],
  ['traffic-logs', 'TrafficLog', { sources: all, destinations: all, conf: { backend: 'file' } }],
  [
    'traffic-routes',
    'TrafficRoute',
    {
      sources: all,
      destinations: all,
      conf: {
        split: [
          { weight: 90, destination: { ...svc('backend'), version: 'v1' } },
          { weight: 10, destination: { ...svc('backend'), version: 'v2' } },
        ],
      },
    },
  ],
  ['traffic-traces', 'TrafficTrace', { selectors: all, conf: { backend: 'zipkin' } }],
  [
    'fault-injections',
    'FaultInjection',
    {
      sources: all,
      // Each destination names its protocol (Kuma's rule for FaultInjection).
      destinations: [{ match: { ...svc('backend'), 'mesh.io/protocol': 'http' } }],
      conf: { delay: { percentage: 50.5, value: '0.2s' }, abort: { percentage: 10, httpStatus: 500 } },
    },
  ],
  [
    'retries',
    'Retry',
    {
      sources: all,
      destinations: all,
      conf: { http: { numRetries: 3, perTryTimeout: '1s', retriableStatusCodes: [503] } },
    },
  ],
  ['timeouts', 'Timeout', { sources: all, destinations: all, conf: { connectTimeout: '10s' } }],
  ['proxytemplates', 'ProxyTemplate', { selectors: all, conf: { imports: ['default-proxy'] } }],
  [
    'circuit-breakers',
    'CircuitBreaker',
    {
      sources: all,
      destinations: all,
      conf: { interval: '5s', baseEjectionTime: '30s', detectors: { totalErrors: { consecutive: 20 } } },
    },
  ],
  [
    'rate-limits',
    'RateLimit',
    { sources: all, destinations: all, conf: { http: { requests: 10, interval: '1s' } } },
  ],
  [
    'meshgateways',
    'MeshGateway',
    {
      selectors: [{ match: svc('edge') }],
      tags: { product: 'edge' },
      conf: { listeners: [{ port: 8080, protocol: 'HTTP', hostname: '*' }] },
    },
  ],
  [
    'meshgatewayroutes',
    'MeshGatewayRoute',
    {
      selectors: [{ match: svc('edge') }],
      conf: {
        http: {
          rules: [
            {
              matches: [{ path: { match: 'PREFIX', value: '/' } }],
              backends: [{ weight: 1, destination: svc('backend') }],
            },
          ],
        },
      },
    },
  ],
  [
    'virtual-outbounds',
    'VirtualOutbound',
    {
      selectors: all,
      conf: {
        host: '{{.svc}}.mesh',
        port: '{{.port}}',
        parameters: [{ name: 'svc', tagKey: 'mesh.io/service' }, { name: 'port' }],
      },
    },
  ],
  [
    'meshtrafficpermissions',
    'MeshTrafficPermission',
    {
      spec: {
        targetRef: { kind: 'MeshService', name: 'backend' },
        from: [
          { targetRef: { kind: 'Mesh' }, default: { action: 'DENY' } },
          { targetRef: { kind: 'MeshService', name: 'web' }, default: { action: 'ALLOW' } },
        ],
      },
    },
  ],
  [
    'meshaccesslogs',
    'MeshAccessLog',
    {
      spec: {
        targetRef: { kind: 'Mesh' },
        to: [
          {
            targetRef: { kind: 'MeshService', name: 'backend' },
            default: {
              backends: [{ file: { path: '/tmp/access.log', format: { plain: '%START_TIME%\n' } } }],
            },
          },
        ],
        from: [
          {
            targetRef: { kind: 'Mesh' },
            default: {
              backends: [
                {
                  tcp: {
                    address: '127.0.0.1:5000',
                    format: { json: [{ key: 'start', value: '%START_TIME%' }] },
                  },
                },
              ],
            },
          },
        ],
      },
    },
  ],
  [
    'meshtraces',
    'MeshTrace',
    {
      spec: {
        targetRef: { kind: 'MeshSubset', tags: { version: 'v1' } },
        default: {
          backends: [{ zipkin: { url: 'http://zipkin.local:9411/api/v2/spans', apiVersion: 'httpJson' } }],
          sampling: { overall: 80 },
          tags: [
            { name: 'team', literal: 'core' },
            { name: 'env', header: { name: 'x-env', default: 'prod' } },
          ],
        },
      },
    },
  ],
  [
    'external-services',
    'ExternalService',
    {
      networking: { address: 'httpbin.org:443', tls: { enabled: true } },
      tags: { ...svc('httpbin'), 'mesh.io/protocol': 'http' },
    },
  ],
  ['secrets', 'Secret', { data: 'c2VjcmV0' }],
];

const CASES: Case[] = [
  { name: 'index', method: 'GET', url: '/' },
  { name: 'config', method: 'GET', url: '/config' },
  { name: 'versions', method: 'GET', url: '/versions' },
  { name: 'policies', method: 'GET', url: '/policies' },
  { name: 'status-zones', method: 'GET', url: '/status/zones' },
  { name: 'meshes-list-defaults', method: 'GET', url: '/meshes' },
  { name: 'mesh-get-default', method: 'GET', url: '/meshes/default' },
  {
    name: 'mesh-put-create',
    method: 'PUT',
    url: '/meshes/demo',
    body: {
      type: 'Mesh',
      name: 'demo',
      mtls: { enabledBackend: 'ca-1', backends: [{ name: 'ca-1', type: 'builtin' }] },
      metrics: {
        enabledBackend: 'prom',
        backends: [{ name: 'prom', type: 'prometheus', conf: { port: 5670, path: '/metrics' } }],
      },
    },
  },
  { name: 'mesh-put-update', method: 'PUT', url: '/meshes/demo', body: { type: 'Mesh', name: 'demo' } },
  {
    name: 'mesh-put-yaml',
    method: 'PUT',
    url: '/meshes/yaml',
    rawBody: 'type: Mesh\nname: yaml\n',
    headers: { 'content-type': 'application/yaml' },
  },
  { name: 'mesh-policies-of-new-mesh', method: 'GET', url: '/meshes/demo/timeouts' },
  {
    name: 'dataplane-put-create',
    method: 'PUT',
    url: '/meshes/default/dataplanes/backend-1',
    body: dp('backend-1', 'backend', 10001),
  },
  {
    name: 'dataplane-put-create-2',
    method: 'PUT',
    url: '/meshes/default/dataplanes/web-1',
    body: dp('web-1', 'web', 10002),
  },
  {
    name: 'dataplane-put-gateway',
    method: 'PUT',
    url: '/meshes/default/dataplanes/edge-1',
    body: {
      type: 'Dataplane',
      mesh: 'default',
      name: 'edge-1',
      networking: { address: '10.0.0.9', gateway: { tags: svc('edge'), type: 'BUILTIN' } },
    },
  },
  { name: 'dataplane-get', method: 'GET', url: '/meshes/default/dataplanes/backend-1' },
  { name: 'dataplanes-list', method: 'GET', url: '/meshes/default/dataplanes' },
  {
    name: 'dataplanes-list-tag-filter',
    method: 'GET',
    url: '/meshes/default/dataplanes?tag=mesh.io/service:web',
  },
  { name: 'dataplanes-all-meshes', method: 'GET', url: '/dataplanes?size=2' },
  { name: 'dataplanes-insights-list', method: 'GET', url: '/meshes/default/dataplanes+insights' },
  {
    name: 'dataplanes-insights-gateway-filter',
    method: 'GET',
    url: '/meshes/default/dataplanes+insights?gateway=true',
  },
  {
    name: 'dataplanes-insights-status-filter',
    method: 'GET',
    url: '/meshes/default/dataplanes+insights?status=online',
  },
  { name: 'dataplanes-insights-get', method: 'GET', url: '/meshes/default/dataplanes+insights/backend-1' },
  {
    name: 'dataplane-insights-singular-alias',
    method: 'GET',
    url: '/meshes/default/dataplane+insights/web-1',
  },
  { name: 'dataplanes-insights-all-meshes', method: 'GET', url: '/dataplanes+insights' },
  ...WRITES.flatMap(([path, type, extra]): Case[] => [
    {
      name: `${path}-put`,
      method: 'PUT',
      url: `/meshes/default/${path}/p-1`,
      body: policy(type, 'p-1', extra),
    },
    { name: `${path}-get`, method: 'GET', url: `/meshes/default/${path}/p-1` },
    { name: `${path}-list`, method: 'GET', url: `/meshes/default/${path}` },
  ]),
  {
    name: 'traffic-permissions-alias-put',
    method: 'PUT',
    url: '/meshes/default/trafficpermissions/p-2',
    body: policy('TrafficPermission', 'p-2', { sources: all, destinations: all }),
  },
  { name: 'health-checks-all-meshes', method: 'GET', url: '/health-checks' },
  { name: 'external-services-all-meshes', method: 'GET', url: '/external-services' },
  { name: 'secrets-all-meshes', method: 'GET', url: '/secrets?name=p-' },
  { name: 'service-insights-list', method: 'GET', url: '/meshes/default/service-insights' },
  { name: 'service-insights-get', method: 'GET', url: '/meshes/default/service-insights/backend' },
  { name: 'service-insights-all-meshes', method: 'GET', url: '/service-insights' },
  { name: 'mesh-insights-list', method: 'GET', url: '/mesh-insights' },
  { name: 'mesh-insights-get', method: 'GET', url: '/mesh-insights/default' },
  {
    name: 'global-secret-put',
    method: 'PUT',
    url: '/global-secrets/token',
    body: { type: 'Secret', name: 'token', data: 'dG9rZW4=' },
  },
  {
    name: 'global-secret-put-globalsecret-type',
    method: 'PUT',
    url: '/global-secrets/token-2',
    body: { type: 'GlobalSecret', name: 'token-2', data: 'dG9rZW4=' },
  },
  { name: 'global-secret-get', method: 'GET', url: '/global-secrets/token' },
  { name: 'global-secrets-list', method: 'GET', url: '/global-secrets?name=token' },
  {
    name: 'zone-put',
    method: 'PUT',
    url: '/zones/zone-1',
    body: { type: 'Zone', name: 'zone-1', enabled: true },
  },
  { name: 'zone-get', method: 'GET', url: '/zones/zone-1' },
  { name: 'zones-list', method: 'GET', url: '/zones' },
  { name: 'zones-insights-list', method: 'GET', url: '/zones+insights' },
  { name: 'zones-insights-get', method: 'GET', url: '/zones+insights/zone-1' },
  {
    name: 'zone-ingress-put',
    method: 'PUT',
    url: '/zone-ingresses/ingress-1',
    body: {
      type: 'ZoneIngress',
      name: 'ingress-1',
      zone: 'zone-1',
      networking: {
        address: '192.168.0.1',
        advertisedAddress: '10.0.0.1',
        port: 10001,
        advertisedPort: 10000,
      },
      availableServices: [{ tags: svc('backend'), instances: 2, mesh: 'default' }],
    },
  },
  { name: 'zone-ingresses-list', method: 'GET', url: '/zone-ingresses' },
  { name: 'zone-ingress-get', method: 'GET', url: '/zone-ingresses/ingress-1' },
  { name: 'zone-ingress-singular-alias-get', method: 'GET', url: '/zone-ingress/ingress-1' },
  { name: 'zoneingresses-insights-list', method: 'GET', url: '/zoneingresses+insights' },
  { name: 'zoneingresses-insights-get', method: 'GET', url: '/zoneingresses+insights/ingress-1' },
  {
    name: 'zone-egress-put',
    method: 'PUT',
    url: '/zoneegresses/egress-1',
    body: {
      type: 'ZoneEgress',
      name: 'egress-1',
      zone: 'zone-1',
      networking: { address: '192.168.0.2', port: 10002 },
    },
  },
  { name: 'zoneegresses-list', method: 'GET', url: '/zoneegresses' },
  { name: 'zoneegresses-get', method: 'GET', url: '/zoneegresses/egress-1' },
  { name: 'zoneegressoverviews-list', method: 'GET', url: '/zoneegressoverviews' },
  { name: 'zoneegressoverviews-get', method: 'GET', url: '/zoneegressoverviews/egress-1' },
  { name: 'global-insights', method: 'GET', url: '/global-insights' },
  // Errors (decisions §4).
  {
    name: 'error-invalid-json',
    method: 'PUT',
    url: '/meshes/bad',
    rawBody: '{"type": "Mesh",',
    headers: { 'content-type': 'application/json' },
  },
  {
    name: 'error-invalid-yaml',
    method: 'PUT',
    url: '/meshes/bad',
    rawBody: 'type: [Mesh\n',
    headers: { 'content-type': 'application/yaml' },
  },
  {
    name: 'error-too-deep-json',
    method: 'PUT',
    url: '/meshes/bad',
    rawBody: `{"type": "Mesh", "name": "bad", "x": ${'['.repeat(100)}${']'.repeat(100)}}`,
    headers: { 'content-type': 'application/json' },
  },
  {
    name: 'error-too-deep-yaml',
    method: 'PUT',
    url: '/meshes/bad',
    rawBody: `type: Mesh\nname: bad\nx: ${'['.repeat(100)}${']'.repeat(100)}\n`,
    headers: { 'content-type': 'application/yaml' },
  },
  {
    name: 'error-validation',
    method: 'PUT',
    url: '/meshes/default/dataplanes/bad',
    body: {
      type: 'Dataplane',
      mesh: 'default',
      name: 'bad',
      networking: { address: 'not an ip', inbound: [{ port: 'abc', tags: { version: 'v1' } }] },
      extra: 1,
    },
  },
  { name: 'error-name-mismatch', method: 'PUT', url: '/meshes/x', body: { type: 'Mesh', name: 'y' } },
  {
    name: 'error-mesh-not-found',
    method: 'PUT',
    url: '/meshes/nope/traffic-permissions/p',
    body: policy('TrafficPermission', 'p', { sources: all, destinations: all, mesh: 'nope' }),
  },
  { name: 'error-bad-size', method: 'GET', url: '/meshes?size=0' },
  { name: 'error-bad-offset', method: 'GET', url: '/meshes?offset=-1' },
  { name: 'error-bad-filter', method: 'GET', url: '/meshes/default/dataplanes+insights?status=sleepy' },
  { name: 'error-not-found', method: 'GET', url: '/meshes/default/dataplanes/missing' },
  { name: 'error-unknown-path', method: 'GET', url: '/no/such/path' },
  {
    name: 'error-derived-put',
    method: 'PUT',
    url: '/mesh-insights/default',
    body: { type: 'MeshInsight', name: 'default' },
  },
  {
    name: 'error-if-match',
    method: 'PUT',
    url: '/meshes/demo',
    body: { type: 'Mesh', name: 'demo' },
    headers: { 'if-match': '"1"' },
  },
  {
    name: 'error-if-none-match',
    method: 'PUT',
    url: '/meshes/demo',
    body: { type: 'Mesh', name: 'demo' },
    headers: { 'if-none-match': '*' },
  },
  {
    name: 'error-unsupported-media-type',
    method: 'PUT',
    url: '/meshes/demo',
    rawBody: '<mesh/>',
    headers: { 'content-type': 'application/xml' },
  },
  {
    name: 'error-too-large',
    method: 'PUT',
    url: '/meshes/demo',
    rawBody: JSON.stringify({ type: 'Mesh', name: 'demo', pad: 'x'.repeat(1024 * 1024) }),
    headers: { 'content-type': 'application/json' },
  },
  { name: 'error-mesh-delete-with-dataplanes', method: 'DELETE', url: '/meshes/default' },
  { name: 'error-delete-missing', method: 'DELETE', url: '/zones/missing' },
  // Dry run, deletes.
  {
    name: 'dry-run-put',
    method: 'PUT',
    url: '/zones/zone-2?dryRun=true',
    body: { type: 'Zone', name: 'zone-2' },
  },
  { name: 'dry-run-put-check', method: 'GET', url: '/zones/zone-2' },
  { name: 'zone-delete', method: 'DELETE', url: '/zones/zone-1' },
  { name: 'mesh-delete', method: 'DELETE', url: '/meshes/demo' },
  { name: 'mesh-delete-removed-policies', method: 'GET', url: '/meshes/demo/timeouts' },
  { name: 'dataplane-delete', method: 'DELETE', url: '/meshes/default/dataplanes/web-1' },
  {
    name: 'change-set-dry-run',
    method: 'POST',
    url: '/_changes?dryRun=true',
    body: {
      items: [
        { type: 'Mesh', name: 'golden-set' },
        policy('TrafficPermission', 'golden-tp', { sources: all, destinations: all }),
      ].map((item, i) => (i === 1 ? { ...item, mesh: 'golden-set' } : item)),
    },
  },
  {
    name: 'change-set',
    method: 'POST',
    url: '/_changes',
    body: {
      items: [
        { type: 'Mesh', name: 'golden-set' },
        {
          upsert: {
            ...policy('TrafficPermission', 'golden-tp', { sources: all, destinations: all }),
            mesh: 'golden-set',
          },
        },
        {
          upsert: {
            ...policy('TrafficPermission', 'golden-tp-2', { sources: all, destinations: all }),
            mesh: 'golden-set',
          },
        },
        { delete: { type: 'TrafficPermission', mesh: 'golden-set', name: 'golden-tp-2' } },
      ],
    },
  },
  {
    name: 'change-set-refused-item',
    method: 'POST',
    url: '/_changes',
    body: {
      items: [
        { type: 'Mesh', name: 'golden-set-2' },
        { upsert: policy('TrafficPermission', 'golden-tp', { sources: all, destinations: all }), ifMatch: 1 },
      ],
    },
  },
  { name: 'change-set-events', method: 'GET', url: '/_events?kind=TrafficPermission&mesh=golden-set' },
];

const KEPT_HEADERS = ['content-type', 'etag', 'x-mesh-revision'];

describe('golden wire behaviour: one request of every endpoint and error class', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane({}, { fixedClock: true });
  });
  afterAll(async () => {
    await cp.close();
  });

  for (const c of CASES) {
    it(`${c.method} ${c.url} (${c.name})`, async () => {
      const res = await cp.app.inject({
        method: c.method,
        url: c.url,
        headers: c.headers,
        payload: c.rawBody ?? (c.body === undefined ? undefined : JSON.stringify(c.body)),
        ...(c.body !== undefined && !c.headers?.['content-type']
          ? { headers: { ...c.headers, 'content-type': 'application/json' } }
          : {}),
      });
      const headers = Object.fromEntries(
        KEPT_HEADERS.filter((h) => res.headers[h] !== undefined).map((h) => [h, res.headers[h]]),
      );
      let body: unknown = res.body;
      try {
        body = JSON.parse(res.body);
      } catch {
        // Not JSON: kept as text.
      }
      const actual = normalize({
        request: { method: c.method, url: c.url, body: c.body },
        status: res.statusCode,
        headers,
        body,
      });
      expect(actual).toEqual(golden(c.name, actual));
      expect(res.headers['x-request-id']).toBeTruthy();
    });
  }
});
