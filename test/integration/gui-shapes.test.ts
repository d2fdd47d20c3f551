import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane, tempDir } from '../helpers/control-plane.js';

// Fields the reference's web GUI reads that the spec leaves open.

const svc = (name: string) => ({ 'mesh.io/service': name });

describe('overviews of proxies and zones that never connected carry subscriptions: [] (the GUI reduces it)', () => {
  let cp: ControlPlane;
  let dir: ReturnType<typeof tempDir>;
  const get = async (url: string) => {
    const res = await cp.app.inject({ method: 'GET', url });
    expect(res.statusCode, url).toBe(200);
    return res.json() as Record<string, unknown> & { items?: Array<Record<string, unknown>> };
  };
  const put = async (url: string, payload: Record<string, unknown>) => {
    const res = await cp.app.inject({ method: 'PUT', url, payload });
    expect(res.statusCode, res.body).toBe(201);
  };

  beforeAll(async () => {
    dir = tempDir();
    cp = await startTestPlane({ MESH_STORE_TYPE: 'level', MESH_STORE_LEVEL_PATH: dir.path });
    await put('/meshes/default/dataplanes/web-1', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'web-1',
      networking: { address: '10.0.0.1', inbound: [{ port: 80, servicePort: 8080, tags: svc('web') }] },
    });
    await put('/meshes/default/dataplanes/gw-1', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'gw-1',
      networking: { address: '10.0.0.2', gateway: { type: 'BUILTIN', tags: svc('gw') } },
    });
    await put('/zones/zone-1', { type: 'Zone', name: 'zone-1', enabled: true });
    await put('/zone-ingresses/ingress-1', {
      type: 'ZoneIngress',
      name: 'ingress-1',
      zone: 'zone-1',
      networking: {
        address: '192.168.0.1',
        advertisedAddress: '10.0.0.1',
        port: 10001,
        advertisedPort: 10000,
      },
    });
    await put('/zoneegresses/egress-1', {
      type: 'ZoneEgress',
      name: 'egress-1',
      zone: 'zone-1',
      networking: { address: '192.168.0.2', port: 10002 },
    });
  });
  afterAll(async () => {
    await cp.close();
    dir.cleanup();
  });

  it('dataplanes+insights: list, single item, singular alias, cross-mesh list and filters', async () => {
    const list = await get('/meshes/default/dataplanes+insights');
    expect(list.items?.map((o) => [o.name, o.dataplaneInsight])).toEqual([
      ['gw-1', { subscriptions: [] }],
      ['web-1', { subscriptions: [] }],
    ]);
    expect((await get('/meshes/default/dataplanes+insights/web-1')).dataplaneInsight).toEqual({
      subscriptions: [],
    });
    expect((await get('/meshes/default/dataplane+insights/gw-1')).dataplaneInsight).toEqual({
      subscriptions: [],
    });
    const all = await get('/dataplanes+insights');
    expect(all.items?.map((o) => o.dataplaneInsight)).toEqual([{ subscriptions: [] }, { subscriptions: [] }]);
    const offline = await get('/meshes/default/dataplanes+insights?status=offline&gateway=false');
    expect(offline.items?.map((o) => [o.name, o.dataplaneInsight])).toEqual([
      ['web-1', { subscriptions: [] }],
    ]);
  });

  it('an insight without subscriptions gets [] and keeps its other fields; a connected one is unchanged', async () => {
    const mTLS = { issuedBackend: 'ca-1', supportedBackends: ['ca-1'] };
    cp.status.setDataplaneInsight('default', 'gw-1', { mTLS });
    expect((await get('/meshes/default/dataplanes+insights/gw-1')).dataplaneInsight).toEqual({
      mTLS,
      subscriptions: [],
    });
    const subscriptions = [
      { id: 's-1', controlPlaneInstanceId: 'cp-1', connectTime: '2026-01-01T00:00:00.000Z' },
    ];
    cp.status.setDataplaneInsight('default', 'web-1', { subscriptions });
    expect((await get('/meshes/default/dataplanes+insights/web-1')).dataplaneInsight).toEqual({
      subscriptions,
    });
    cp.status.setDataplaneInsight('default', 'gw-1', undefined);
    cp.status.setDataplaneInsight('default', 'web-1', undefined);
  });

  it('zone ingress, zone egress and zone overviews: list and single item', async () => {
    const cases: Array<[string, string, string]> = [
      ['/zoneingresses+insights', 'ingress-1', 'zoneIngressInsight'],
      ['/zoneegressoverviews', 'egress-1', 'zoneEgressInsight'],
      ['/zones+insights', 'zone-1', 'zoneInsight'],
    ];
    for (const [path, name, key] of cases) {
      expect((await get(path)).items?.map((o) => [o.name, o[key]])).toEqual([[name, { subscriptions: [] }]]);
      expect((await get(`${path}/${name}`))[key]).toEqual({ subscriptions: [] });
    }
  });
});

describe('MeshInsight.policies counts ExternalService like every mesh-scoped kind (the GUI sidebar reads it)', () => {
  let cp: ControlPlane;
  let dir: ReturnType<typeof tempDir>;
  beforeAll(async () => {
    dir = tempDir();
    cp = await startTestPlane({ MESH_STORE_TYPE: 'level', MESH_STORE_LEVEL_PATH: dir.path });
  });
  afterAll(async () => {
    await cp.close();
    dir.cleanup();
  });

  it('one external service is policies.ExternalService.total 1, and gone after DELETE', async () => {
    const insight = async () => {
      const res = await cp.app.inject({ method: 'GET', url: '/mesh-insights/gui' });
      expect(res.statusCode).toBe(200);
      return res.json() as { policies: Record<string, { total: number }>; services: Record<string, number> };
    };
    const listed = async () => {
      const res = await cp.app.inject({ method: 'GET', url: '/mesh-insights' });
      const items = (res.json() as { items: Array<{ name: string; policies: Record<string, unknown> }> })
        .items;
      return items.find((i) => i.name === 'gui')?.policies;
    };
    await cp.app.inject({ method: 'PUT', url: '/meshes/gui', payload: { type: 'Mesh', name: 'gui' } });
    expect((await insight()).policies.ExternalService).toBeUndefined();
    const put = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/gui/external-services/httpbin',
      payload: {
        type: 'ExternalService',
        mesh: 'gui',
        name: 'httpbin',
        networking: { address: 'httpbin.org:443' },
        tags: svc('httpbin'),
      },
    });
    expect(put.statusCode, put.body).toBe(201);
    const after = await insight();
    expect(after.policies.ExternalService).toEqual({ total: 1 });
    expect(after.services).toEqual({ total: 1, internal: 0, external: 1 });
    expect((await listed())?.ExternalService).toEqual({ total: 1 });
    // Still policy kinds only besides it (decisions §6): secrets are not counted.
    await cp.app.inject({
      method: 'PUT',
      url: '/meshes/gui/secrets/s',
      payload: { type: 'Secret', mesh: 'gui', name: 's', data: 'YQ==' },
    });
    expect(Object.keys((await insight()).policies)).not.toContain('Secret');
    const del = await cp.app.inject({ method: 'DELETE', url: '/meshes/gui/external-services/httpbin' });
    expect(del.statusCode).toBe(200);
    const gone = await insight();
    expect(gone.policies.ExternalService?.total ?? 0).toBe(0);
    expect(gone.services).toEqual({ total: 0, internal: 0, external: 0 });
    expect((await listed())?.ExternalService).toBeUndefined();
  });
});

describe('a gateway proxy without networking.gateway.type is DELEGATED (Kuma enum default)', () => {
  it('in the gateway filter of overviews and in the ServiceInsight serviceType', async () => {
    const cp = await startTestPlane();
    try {
      const put = (name: string, gateway: Record<string, unknown>) =>
        cp.app.inject({
          method: 'PUT',
          url: `/meshes/default/dataplanes/${name}`,
          payload: { type: 'Dataplane', mesh: 'default', name, networking: { address: '10.0.0.1', gateway } },
        });
      expect((await put('untyped', { tags: { 'mesh.io/service': 'edge-a' } })).statusCode).toBe(201);
      expect(
        (await put('builtin', { tags: { 'mesh.io/service': 'edge-b' }, type: 'BUILTIN' })).statusCode,
      ).toBe(201);
      const names = async (filter: string) =>
        (
          (
            await cp.app.inject({
              method: 'GET',
              url: `/meshes/default/dataplanes+insights?gateway=${filter}`,
            })
          ).json().items as Array<{ name: string }>
        ).map((i) => i.name);
      expect(await names('delegated')).toEqual(['untyped']);
      expect(await names('builtin')).toEqual(['builtin']);
      const type = async (service: string) =>
        (await cp.app.inject({ method: 'GET', url: `/meshes/default/service-insights/${service}` })).json()
          .serviceType;
      expect(await type('edge-a')).toBe('gateway_delegated');
      expect(await type('edge-b')).toBe('gateway_builtin');
    } finally {
      await cp.close();
    }
  });
});
