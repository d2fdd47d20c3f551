import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane } from '../helpers/control-plane.js';

const SVC = 'mesh.io/service';

const sidecar = (name: string, service: string, outbound: string[] = [], version = 'v1') => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: {
    address: '10.0.0.1',
    inbound: [{ port: 8080, tags: { [SVC]: service, version } }],
    outbound: outbound.map((s, i) => ({ port: 10001 + i, tags: { [SVC]: s } })),
  },
});

const selectorPolicy = (type: string, name: string, fields: Record<string, unknown>) => ({
  type,
  mesh: 'default',
  name,
  ...fields,
});

/** Requests through `app.inject()`: any answer, a 200's body, a PUT that must succeed. */
function client(plane: () => ControlPlane) {
  const req = async (method: 'GET' | 'PUT' | 'DELETE', url: string, payload?: unknown) => {
    const res = await plane().app.inject({
      method,
      url,
      payload: payload as Record<string, unknown> | undefined,
    });
    return { status: res.statusCode, body: res.body ? res.json() : undefined, headers: res.headers };
  };
  const ok = async (url: string) => {
    const res = await req('GET', url);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return res.body;
  };
  const put = async (url: string, payload: unknown) => {
    const res = await req('PUT', url, payload);
    expect(res.status, JSON.stringify(res.body)).toBeLessThan(300);
  };
  return { req, ok, put };
}

describe('the inspect API for sidecar proxies (spec 4.9, decisions §10)', () => {
  let cp: ControlPlane;
  const { req, ok, put } = client(() => cp);
  const summary = (view: {
    items: Array<{ type: string; name: string; matchedPolicies: Record<string, Array<{ name: string }>> }>;
  }) =>
    view.items.map(
      (i) =>
        `${i.type} ${i.name}: ` +
        Object.entries(i.matchedPolicies)
          .map(([kind, ps]) => `${kind}=${ps.map((p) => p.name).join(',')}`)
          .join('; '),
    );

  beforeAll(async () => {
    cp = await startTestPlane();
    await put('/meshes/default/dataplanes/web-1', sidecar('web-1', 'web', ['db']));
    await put('/meshes/default/dataplanes/web-2', sidecar('web-2', 'web', [], 'v2'));
    await put('/meshes/default/dataplanes/db-1', sidecar('db-1', 'db'));
  });
  afterAll(async () => {
    await cp.close();
  });

  it('matched policies: {total, kind, items} with one item per attachment, sorted, whole resources', async () => {
    const view = await ok('/meshes/default/dataplanes/web-1/policies');
    expect(view.kind).toBe('SidecarDataplane');
    expect(view.total).toBe(view.items.length);
    // The mesh's default policies (decisions §3) attach at every level.
    expect(summary(view)).toEqual([
      'inbound 10.0.0.1:8080:8080: TrafficPermission=allow-all-default',
      'outbound 127.0.0.1:10001: Timeout=timeout-all-default; TrafficRoute=route-all-default',
      'service db: CircuitBreaker=circuit-breaker-all-default; Retry=retry-all-default',
    ]);
    expect(view.items[0].service).toBe('web');
    const stored = await ok('/meshes/default/traffic-permissions/allow-all-default');
    expect(view.items[0].matchedPolicies.TrafficPermission[0]).toEqual(stored);
  });

  it('says, per outbound service, what of the matched policies a proxyless gRPC client cannot apply', async () => {
    // The default Retry's perTryTimeout and CircuitBreaker's connection thresholds: not for a gRPC client.
    const before = await ok('/meshes/default/dataplanes/web-1/policies');
    expect(before.notes).toEqual({
      db: [
        'retry perTryTimeout cannot apply to a proxyless gRPC client',
        'circuit breaker thresholds.maxConnections cannot apply to a proxyless gRPC client',
        'circuit breaker thresholds.maxPendingRequests cannot apply to a proxyless gRPC client',
        'circuit breaker thresholds.maxRetries cannot apply to a proxyless gRPC client',
      ],
    });
    await put(
      '/meshes/default/traffic-routes/db-lb',
      selectorPolicy('TrafficRoute', 'db-lb', {
        sources: [{ match: { [SVC]: 'web' } }],
        destinations: [{ match: { [SVC]: 'db' } }],
        conf: { destination: { [SVC]: 'db' }, loadBalancer: { leastRequest: {} } },
      }),
    );
    const after = await ok('/meshes/default/dataplanes/web-1/policies');
    expect(after.notes.db).toContain(
      'loadBalancer.leastRequest cannot apply to a proxyless gRPC client: round robin is used',
    );
    expect((await ok('/meshes/default/dataplanes/web-1/xds')).notes).toEqual(after.notes);
    // A proxy with no outbound dials nothing: no notes.
    expect((await ok('/meshes/default/dataplanes/db-1/policies')).notes).toBeUndefined();
    expect((await req('DELETE', '/meshes/default/traffic-routes/db-lb')).status).toBe(200);
  });

  it('reflects each write as soon as it has answered: a more specific policy, its delete, a proxy change', async () => {
    await put(
      '/meshes/default/traffic-permissions/web-only',
      selectorPolicy('TrafficPermission', 'web-only', {
        sources: [{ match: { [SVC]: 'db' } }],
        destinations: [{ match: { [SVC]: 'web', version: 'v1' } }],
      }),
    );
    expect(summary(await ok('/meshes/default/dataplanes/web-1/policies'))[0]).toBe(
      'inbound 10.0.0.1:8080:8080: TrafficPermission=web-only',
    );
    // web-2 is v2: its selectors do not reach it.
    expect(summary(await ok('/meshes/default/dataplanes/web-2/policies'))[0]).toBe(
      'inbound 10.0.0.1:8080:8080: TrafficPermission=allow-all-default',
    );
    await put('/meshes/default/dataplanes/web-2', sidecar('web-2', 'web', [], 'v1'));
    expect(summary(await ok('/meshes/default/dataplanes/web-2/policies'))[0]).toBe(
      'inbound 10.0.0.1:8080:8080: TrafficPermission=web-only',
    );
    expect((await req('DELETE', '/meshes/default/traffic-permissions/web-only')).status).toBe(200);
    expect(summary(await ok('/meshes/default/dataplanes/web-1/policies'))[0]).toBe(
      'inbound 10.0.0.1:8080:8080: TrafficPermission=allow-all-default',
    );
    await put('/meshes/default/dataplanes/web-2', sidecar('web-2', 'web', [], 'v2'));
  });

  it('proxies affected by a policy: the attachments through which it applies, paged like a list', async () => {
    const all = await ok('/meshes/default/traffic-permissions/allow-all-default/dataplanes');
    expect(all).toEqual({
      total: 3,
      items: ['db-1', 'web-1', 'web-2'].map((name) => ({
        kind: 'SidecarDataplane',
        dataplane: { mesh: 'default', name },
        attachments: [
          { type: 'inbound', name: '10.0.0.1:8080:8080', service: name.startsWith('db') ? 'db' : 'web' },
        ],
      })),
      next: null,
    });
    const first = await ok('/meshes/default/traffic-permissions/allow-all-default/dataplanes?size=2');
    expect(first.items.map((i: { dataplane: { name: string } }) => i.dataplane.name)).toEqual([
      'db-1',
      'web-1',
    ]);
    expect(first.total).toBe(3);
    expect(first.next).toMatch(
      /\/meshes\/default\/traffic-permissions\/allow-all-default\/dataplanes\?offset=2&size=2$/,
    );
    const second = await ok(
      '/meshes/default/traffic-permissions/allow-all-default/dataplanes?offset=2&size=2',
    );
    expect(second.items.map((i: { dataplane: { name: string } }) => i.dataplane.name)).toEqual(['web-2']);
    expect(second.next).toBeNull();

    const retry = await ok('/meshes/default/retries/retry-all-default/dataplanes');
    expect(retry.items).toEqual([
      {
        kind: 'SidecarDataplane',
        dataplane: { mesh: 'default', name: 'web-1' },
        attachments: [{ type: 'service', name: 'db', service: 'db' }],
      },
    ]);
  });

  it('a policy that does not exist affects nothing; bad paging is 400', async () => {
    expect(await ok('/meshes/default/timeouts/no-such/dataplanes')).toEqual({
      total: 0,
      items: [],
      next: null,
    });
    const bad = await req('GET', '/meshes/default/timeouts/timeout-all-default/dataplanes?size=0');
    expect(bad.status).toBe(400);
    expect(bad.body.causes).toEqual([{ field: 'size', message: 'must be an integer between 1 and 1000' }]);
  });

  it('404 names what is missing: the mesh, the proxy; a kind that is not a policy says so', async () => {
    const noMesh = await req('GET', '/meshes/nope/dataplanes/web-1/policies');
    expect(noMesh.status).toBe(404);
    expect(noMesh.body.details).toBe('Mesh "nope" not found');
    const noProxy = await req('GET', '/meshes/default/dataplanes/nope/policies');
    expect(noProxy.status).toBe(404);
    expect(noProxy.body.details).toBe('Dataplane "nope" not found in mesh "default"');
    const noMeshAffected = await req('GET', '/meshes/nope/timeouts/t/dataplanes');
    expect(noMeshAffected.status).toBe(404);
    expect(noMeshAffected.body.details).toBe('Mesh "nope" not found');
    const external = await req('GET', '/meshes/default/external-services/x/dataplanes');
    expect(external.status).toBe(404);
    expect(external.body.details).toBe(
      'ExternalService is not inspectable: only policies have affected data plane proxies',
    );
    const unknown = await req('GET', '/meshes/default/no-such-kind/x/dataplanes');
    expect(unknown.status).toBe(404);
    expect(unknown.body.details).toBe('no such endpoint: GET /meshes/default/no-such-kind/x/dataplanes');
  });

  it('virtual outbounds and targetRef policies show on the dataplane item, and list their proxies', async () => {
    await put(
      '/meshes/default/virtual-outbounds/by-host',
      selectorPolicy('VirtualOutbound', 'by-host', {
        selectors: [{ match: { [SVC]: 'db' } }],
        conf: { host: '{{.service}}.mesh', port: '80', parameters: [{ name: 'service', tagKey: SVC }] },
      }),
    );
    await put('/meshes/default/meshtraces/everywhere', {
      type: 'MeshTrace',
      mesh: 'default',
      name: 'everywhere',
      spec: {
        targetRef: { kind: 'Mesh' },
        default: { backends: [{ zipkin: { url: 'http://zipkin:9411/api/v2/spans' } }] },
      },
    });
    expect(summary(await ok('/meshes/default/dataplanes/db-1/policies')).at(0)).toBe(
      'dataplane : VirtualOutbound=by-host; MeshTrace=everywhere',
    );
    expect(summary(await ok('/meshes/default/dataplanes/web-1/policies')).at(0)).toBe(
      'dataplane : MeshTrace=everywhere',
    );
    const vo = await ok('/meshes/default/virtual-outbounds/by-host/dataplanes');
    expect(vo.items).toEqual([
      {
        kind: 'SidecarDataplane',
        dataplane: { mesh: 'default', name: 'db-1' },
        attachments: [{ type: 'dataplane', name: '', service: '' }],
      },
    ]);
    const trace = await ok('/meshes/default/meshtraces/everywhere/dataplanes');
    expect(trace.total).toBe(3);
  });

  it('carries the revision it reflects', async () => {
    const res = await req('GET', '/meshes/default/dataplanes/web-1/policies');
    const head = await req('GET', '/meshes/default/dataplanes/web-1');
    expect(res.headers['x-mesh-revision']).toBe(head.headers['x-mesh-revision']);
  });
});

describe('proxies configured by a gateway (spec 2.20, decisions §10)', () => {
  let cp: ControlPlane;
  const gatewayProxy = (name: string, service: string, type?: string) => ({
    type: 'Dataplane',
    mesh: 'default',
    name,
    networking: { address: '10.0.0.9', gateway: { tags: { [SVC]: service }, ...(type ? { type } : {}) } },
  });
  const get = async (url: string) => {
    const res = await cp.app.inject({ method: 'GET', url });
    return { status: res.statusCode, body: res.json() };
  };

  beforeAll(async () => {
    cp = await startTestPlane();
    for (const [name, service, type] of [
      ['edge-1', 'edge', 'BUILTIN'],
      ['edge-2', 'edge', 'BUILTIN'],
      ['other', 'other', 'BUILTIN'],
      ['edge-delegated', 'edge', undefined],
    ] as const) {
      const res = await cp.app.inject({
        method: 'PUT',
        url: `/meshes/default/dataplanes/${name}`,
        payload: gatewayProxy(name, service, type),
      });
      expect(res.statusCode, res.body).toBe(201);
    }
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/meshgateways/edge',
      payload: {
        type: 'MeshGateway',
        mesh: 'default',
        name: 'edge',
        selectors: [{ match: { [SVC]: 'edge' } }],
        conf: { listeners: [{ port: 8080, protocol: 'HTTP', hostname: '*' }] },
      },
    });
    expect(res.statusCode, res.body).toBe(201);
  });
  afterAll(async () => {
    await cp.close();
  });

  it('lists every built-in gateway proxy the gateway selects, paged; a delegated one is not configured by it', async () => {
    expect((await get('/meshes/default/meshgateways/edge/dataplanes')).body).toEqual({
      total: 2,
      items: [
        { dataplane: { mesh: 'default', name: 'edge-1' } },
        { dataplane: { mesh: 'default', name: 'edge-2' } },
      ],
      next: null,
    });
    const page = (await get('/meshes/default/meshgateways/edge/dataplanes?size=1&offset=1')).body;
    expect(page.items).toEqual([{ dataplane: { mesh: 'default', name: 'edge-2' } }]);
    expect(page.total).toBe(2);
  });

  it('404 names the missing gateway or mesh', async () => {
    const missing = await get('/meshes/default/meshgateways/nope/dataplanes');
    expect(missing.status).toBe(404);
    expect(missing.body.details).toBe('MeshGateway "nope" not found in mesh "default"');
    const noMesh = await get('/meshes/nope/meshgateways/edge/dataplanes');
    expect(noMesh.status).toBe(404);
    expect(noMesh.body.details).toBe('Mesh "nope" not found');
  });
});

describe('the inspect API for built-in gateway proxies and rules (spec 2.20, decisions §10)', () => {
  let cp: ControlPlane;
  const { req, ok, put } = client(() => cp);
  const route = (name: string, backends: string[]) => ({
    type: 'MeshGatewayRoute',
    mesh: 'default',
    name,
    selectors: [{ match: { [SVC]: 'edge' } }],
    conf: {
      http: {
        rules: [
          {
            matches: [{ path: { match: 'PREFIX', value: '/' } }],
            backends: backends.map((service) => ({ weight: 1, destination: { [SVC]: service } })),
          },
        ],
      },
    },
  });

  beforeAll(async () => {
    cp = await startTestPlane();
    await put('/meshes/default/dataplanes/edge-1', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'edge-1',
      networking: { address: '10.0.0.9', gateway: { tags: { [SVC]: 'edge' }, type: 'BUILTIN' } },
    });
    await put('/meshes/default/dataplanes/lonely', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'lonely',
      networking: { address: '10.0.0.8', gateway: { tags: { [SVC]: 'lonely' }, type: 'BUILTIN' } },
    });
    await put('/meshes/default/dataplanes/web-1', sidecar('web-1', 'web', ['db']));
    await put('/meshes/default/meshgateways/edge', {
      type: 'MeshGateway',
      mesh: 'default',
      name: 'edge',
      selectors: [{ match: { [SVC]: 'edge' } }],
      conf: { listeners: [{ port: 8080, protocol: 'HTTP', hostname: '*' }] },
    });
    await put('/meshes/default/meshgatewayroutes/to-web', route('to-web', ['web']));
  });
  afterAll(async () => {
    await cp.close();
  });

  it('a gateway proxy: its MeshGateway, listeners, hosts, routes and the best policy per destination', async () => {
    const view = await ok('/meshes/default/dataplanes/edge-1/policies');
    expect(view.kind).toBe('MeshGatewayDataplane');
    expect(view.gateway).toEqual({ mesh: 'default', name: 'edge' });
    expect(view.listeners).toHaveLength(1);
    const [listener] = view.listeners;
    expect(listener).toMatchObject({ port: 8080, protocol: 'HTTP' });
    expect(listener.hosts.map((h: { hostName: string }) => h.hostName)).toEqual(['*']);
    const [r] = listener.hosts[0].routes;
    expect(r.route).toBe('to-web');
    expect(r.destinations).toHaveLength(1);
    expect(r.destinations[0].tags).toEqual({ [SVC]: 'web' });
    // The mesh's defaults apply per destination; each kind maps to one whole policy.
    expect(r.destinations[0].policies.Timeout).toEqual(
      await ok('/meshes/default/timeouts/timeout-all-default'),
    );
  });

  it('reflects a route write at once, mirrors and every backend included', async () => {
    const withMirror = route('to-web', ['web', 'db']);
    (withMirror.conf.http.rules[0] as Record<string, unknown>).filters = [
      { mirror: { backend: { weight: 1, destination: { [SVC]: 'shadow' } }, percentage: 10 } },
    ];
    await put('/meshes/default/meshgatewayroutes/to-web', withMirror);
    const view = await ok('/meshes/default/dataplanes/edge-1/policies');
    const tags = view.listeners[0].hosts[0].routes[0].destinations.map((d: { tags: object }) => d.tags);
    expect(tags).toEqual([{ [SVC]: 'web' }, { [SVC]: 'db' }, { [SVC]: 'shadow' }]);
    await put('/meshes/default/meshgatewayroutes/to-web', route('to-web', ['web']));
  });

  it('a gateway proxy that no MeshGateway selects answers the empty view, not an error', async () => {
    expect(await ok('/meshes/default/dataplanes/lonely/policies')).toEqual({
      kind: 'MeshGatewayDataplane',
      gateway: { mesh: '', name: '' },
      listeners: [],
    });
  });

  it('a policy lists gateway proxies with the listeners, hosts, routes and destinations where it applies', async () => {
    const affected = await ok('/meshes/default/timeouts/timeout-all-default/dataplanes');
    const edge = affected.items.find((i: { dataplane: { name: string } }) => i.dataplane.name === 'edge-1');
    expect(edge).toEqual({
      kind: 'MeshGatewayDataplane',
      dataplane: { mesh: 'default', name: 'edge-1' },
      gateway: { mesh: 'default', name: 'edge' },
      listeners: [
        {
          port: 8080,
          protocol: 'HTTP',
          hosts: [{ hostName: '*', routes: [{ route: 'to-web', destinations: [{ [SVC]: 'web' }] }] }],
        },
      ],
    });
    const web = affected.items.find((i: { dataplane: { name: string } }) => i.dataplane.name === 'web-1');
    expect(web.kind).toBe('SidecarDataplane');
  });

  it('a gateway route lists the gateway proxies that use it; a missing one is 404', async () => {
    const used = await ok('/meshes/default/meshgatewayroutes/to-web/dataplanes');
    expect(used.total).toBe(1);
    expect(used.items[0]).toMatchObject({
      kind: 'MeshGatewayDataplane',
      dataplane: { mesh: 'default', name: 'edge-1' },
    });
    const missing = await req('GET', '/meshes/default/meshgatewayroutes/nope/dataplanes');
    expect(missing.status).toBe(404);
    expect(missing.body.details).toBe('MeshGatewayRoute "nope" not found in mesh "default"');
  });

  it('rules: {total: 0, items: []} with no targetRef policy; merged rules of a sidecar and of a gateway proxy', async () => {
    expect(await ok('/meshes/default/dataplanes/web-1/rules')).toEqual({ total: 0, items: [] });
    await put('/meshes/default/meshtrafficpermissions/allow-web', {
      type: 'MeshTrafficPermission',
      mesh: 'default',
      name: 'allow-web',
      spec: {
        targetRef: { kind: 'Mesh' },
        from: [{ targetRef: { kind: 'MeshService', name: 'db' }, default: { action: 'ALLOW' } }],
      },
    });
    const sidecarRules = await ok('/meshes/default/dataplanes/web-1/rules');
    expect(sidecarRules.items).toContainEqual({
      type: 'clientSubset',
      name: '10.0.0.1:8080',
      service: 'web',
      policyType: 'MeshTrafficPermission',
      subset: { [SVC]: 'db' },
      conf: { action: 'ALLOW' },
      origins: [{ mesh: 'default', name: 'allow-web' }],
    });
    expect(sidecarRules.total).toBe(sidecarRules.items.length);
    // The reference answers 500 for a gateway proxy here.
    const gatewayRules = await ok('/meshes/default/dataplanes/edge-1/rules');
    expect(
      gatewayRules.items.map((i: { name: string; service: string }) => `${i.name} ${i.service}`),
    ).toContain('10.0.0.9:8080 edge');
    expect((await req('GET', '/meshes/default/dataplanes/nope/rules')).status).toBe(404);
  });
});

describe("the reference's inspect cases (Kuma 2.0 pkg/api-server testdata)", () => {
  let cp: ControlPlane;
  const { ok, put } = client(() => cp);
  const targetRefPolicy = (type: string, name: string, spec: Record<string, unknown>) => ({
    type,
    mesh: 'default',
    name,
    spec,
  });
  const web = { kind: 'MeshService', name: 'web' };

  beforeAll(async () => {
    cp = await startTestPlane();
    // samples.DataplaneWeb(): one inbound (80 → 8080) of web, one outbound (10001) to backend.
    await put('/meshes/default/dataplanes/web-01', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'web-01',
      networking: {
        address: '192.168.0.2',
        inbound: [{ port: 80, servicePort: 8080, tags: { [SVC]: 'web' } }],
        outbound: [{ port: 10001, tags: { [SVC]: 'backend' } }],
      },
    });
  });
  afterAll(async () => {
    await cp.close();
  });

  it('rules: inspect_dataplane_rules.golden.json, items by name then type', async () => {
    await put(
      '/meshes/default/meshtrafficpermissions/mtp-1',
      targetRefPolicy('MeshTrafficPermission', 'mtp-1', {
        targetRef: web,
        from: [
          {
            targetRef: { kind: 'MeshServiceSubset', name: 'client', tags: { 'mesh.io/zone': 'east' } },
            default: { action: 'DENY' },
          },
        ],
      }),
    );
    await put(
      '/meshes/default/meshaccesslogs/mal-1',
      targetRefPolicy('MeshAccessLog', 'mal-1', {
        targetRef: web,
        to: [
          { targetRef: { kind: 'Mesh' }, default: { backends: [{ file: { path: '/tmp/access.logs' } }] } },
        ],
      }),
    );
    const zipkin = { url: 'http://jaeger-collector.mesh-observability:9411/api/v2/spans' };
    await put(
      '/meshes/default/meshtraces/mtp-1',
      targetRefPolicy('MeshTrace', 'mtp-1', { targetRef: web, default: { backends: [{ zipkin }] } }),
    );
    expect(await ok('/meshes/default/dataplanes/web-01/rules')).toEqual({
      total: 3,
      items: [
        {
          type: 'destinationSubset',
          name: '127.0.0.1:10001',
          service: 'backend',
          policyType: 'MeshAccessLog',
          subset: {},
          conf: { backends: [{ file: { format: {}, path: '/tmp/access.logs' } }] },
          origins: [{ mesh: 'default', name: 'mal-1' }],
        },
        {
          type: 'clientSubset',
          name: '192.168.0.2:80',
          service: 'web',
          policyType: 'MeshTrafficPermission',
          subset: { [SVC]: 'client', 'mesh.io/zone': 'east' },
          conf: { action: 'DENY' },
          origins: [{ mesh: 'default', name: 'mtp-1' }],
        },
        {
          type: 'singleItem',
          name: 'dataplane',
          service: '',
          policyType: 'MeshTrace',
          subset: {},
          conf: { backends: [{ zipkin }], sampling: {}, tags: null },
          origins: [{ mesh: 'default', name: 'mtp-1' }],
        },
      ],
    });
  });

  it('rules of one inbound and policy type: more positive tags first, as the reference orders them', async () => {
    await put('/meshes/default/dataplanes/api-01', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'api-01',
      networking: { address: '192.168.0.3', inbound: [{ port: 80, tags: { [SVC]: 'api' } }] },
    });
    const subset = (tags: Record<string, string>) => ({ kind: 'MeshSubset', tags });
    await put(
      '/meshes/default/meshtrafficpermissions/api-by-env',
      targetRefPolicy('MeshTrafficPermission', 'api-by-env', {
        targetRef: { kind: 'MeshService', name: 'api' },
        from: [
          { targetRef: subset({ env: 'dev' }), default: { action: 'ALLOW' } },
          { targetRef: subset({ zone: 'x' }), default: { action: 'DENY' } },
        ],
      }),
    );
    const rules = await ok('/meshes/default/dataplanes/api-01/rules');
    expect(rules.items.map((i: { subset: object; conf: object }) => [i.subset, i.conf])).toEqual([
      [{ env: 'dev', zone: 'x' }, { action: 'DENY' }],
      [{ env: '!dev', zone: 'x' }, { action: 'DENY' }],
      [{ env: 'dev', zone: '!x' }, { action: 'ALLOW' }],
    ]);
  });

  it("policies: a TrafficRoute is shown resolved per outbound, `*` replaced by the outbound's tags (its own GET unchanged)", async () => {
    await put('/meshes/default/dataplanes/front-01', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'front-01',
      networking: {
        address: '192.168.0.4',
        inbound: [{ port: 80, tags: { [SVC]: 'front' } }],
        outbound: [
          { port: 10001, tags: { [SVC]: 'backend', version: 'v2' } },
          { port: 10002, service: 'db' },
        ],
      },
    });
    const stored = await ok('/meshes/default/traffic-routes/route-all-default');
    expect(stored.conf.destination).toEqual({ [SVC]: '*' });
    const view = await ok('/meshes/default/dataplanes/front-01/policies');
    const routeOf = (name: string) =>
      view.items.find((i: { type: string; name: string }) => i.type === 'outbound' && i.name === name)
        .matchedPolicies.TrafficRoute[0];
    // As Kuma 2.0's answer shows route-all-default: the whole resource, its destination resolved.
    expect(routeOf('127.0.0.1:10001')).toEqual({
      ...stored,
      conf: { ...stored.conf, destination: { [SVC]: 'backend', version: 'v2' } },
    });
    expect(routeOf('127.0.0.1:10002')).toEqual({
      ...stored,
      conf: { ...stored.conf, destination: { [SVC]: 'db' } },
    });
    expect((await ok('/meshes/default/traffic-routes/route-all-default')).conf.destination).toEqual({
      [SVC]: '*',
    });
  });

  it('a mesh with Prometheus metrics adds the metrics inbound to each proxy: TrafficPermission, FaultInjection, RateLimit attach', async () => {
    type Item = {
      type: string;
      name: string;
      service: string;
      matchedPolicies: Record<string, Array<{ name: string }>>;
    };
    const inboundsOf = async (dp: string) =>
      ((await ok(`/meshes/default/dataplanes/${dp}/policies`)).items as Item[])
        .filter((i) => i.type === 'inbound')
        .map(
          (i) =>
            `${i.name} ${i.service || '-'}: ` +
            Object.entries(i.matchedPolicies)
              .map(([kind, ps]) => `${kind}=${ps.map((p) => p.name).join(',')}`)
              .join('; '),
        );
    expect(await inboundsOf('web-01')).toEqual([
      '192.168.0.2:80:8080 web: TrafficPermission=allow-all-default',
    ]);
    const toMetrics = {
      sources: [{ match: { [SVC]: 'prometheus' } }],
      destinations: [{ match: { [SVC]: 'dataplane-metrics' } }],
    };
    await put(
      '/meshes/default/traffic-permissions/metrics',
      selectorPolicy('TrafficPermission', 'metrics', toMetrics),
    );
    await put(
      '/meshes/default/fault-injections/metrics-delay',
      selectorPolicy('FaultInjection', 'metrics-delay', {
        ...toMetrics,
        // A FaultInjection names the protocol (Kuma's rule): it attaches where the inbound has it.
        destinations: [{ match: { [SVC]: 'dataplane-metrics', 'mesh.io/protocol': 'http' } }],
        conf: { delay: { percentage: 50, value: '1s' } },
      }),
    );
    await put(
      '/meshes/default/rate-limits/metrics-rate',
      selectorPolicy('RateLimit', 'metrics-rate', {
        ...toMetrics,
        conf: { http: { requests: 10, interval: '1s' } },
      }),
    );
    expect((await ok('/meshes/default/traffic-permissions/metrics/dataplanes')).total).toBe(0);

    // The backend's conf has no port or tags: Kuma's defaults, port 5670 and mesh.io/service: dataplane-metrics.
    const mesh = await ok('/meshes/default');
    const withMetrics = (conf?: Record<string, unknown>) => ({
      ...mesh,
      metrics: {
        enabledBackend: 'prom',
        backends: [{ name: 'prom', type: 'prometheus', ...(conf ? { conf } : {}) }],
      },
    });
    await put('/meshes/default', withMetrics());
    // The default tags name no protocol: the FaultInjection, which names one, does not attach.
    expect(await inboundsOf('web-01')).toEqual([
      '192.168.0.2:5670:5670 -: TrafficPermission=metrics; RateLimit=metrics-rate',
      '192.168.0.2:80:8080 web: TrafficPermission=allow-all-default',
    ]);
    const affected = await ok('/meshes/default/traffic-permissions/metrics/dataplanes');
    expect(affected.items.map((i: { dataplane: { name: string } }) => i.dataplane.name)).toEqual([
      'api-01',
      'front-01',
      'web-01',
    ]);
    expect(affected.items[2].attachments).toEqual([
      { type: 'inbound', name: '192.168.0.2:5670:5670', service: '' },
    ]);

    // The Dataplane's override: its port; tags merged over the mesh's.
    const web01 = await ok('/meshes/default/dataplanes/web-01');
    await put('/meshes/default/dataplanes/web-01', {
      ...web01,
      metrics: { type: 'prometheus', conf: { port: 1234, tags: { [SVC]: 'web-metrics' } } },
    });
    expect(await inboundsOf('web-01')).toEqual([
      '192.168.0.2:1234:1234 -: TrafficPermission=allow-all-default',
      '192.168.0.2:80:8080 web: TrafficPermission=allow-all-default',
    ]);
    // The mesh backend's port and tags; then metrics off: no metrics inbound.
    await put('/meshes/default/dataplanes/web-01', web01);
    await put(
      '/meshes/default',
      withMetrics({
        port: 5690,
        tags: { [SVC]: 'dataplane-metrics', team: 'a', 'mesh.io/protocol': 'http' },
      }),
    );
    expect((await inboundsOf('web-01'))[0]).toBe(
      '192.168.0.2:5690:5690 -: TrafficPermission=metrics; FaultInjection=metrics-delay; RateLimit=metrics-rate',
    );
    await put('/meshes/default', { ...mesh, metrics: { enabledBackend: '', backends: [] } });
    expect(await inboundsOf('web-01')).toEqual([
      '192.168.0.2:80:8080 web: TrafficPermission=allow-all-default',
    ]);
    expect((await ok('/meshes/default/traffic-permissions/metrics/dataplanes')).total).toBe(0);
  });
});
