import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane } from '../helpers/control-plane.js';

const SVC = 'mesh.io/service';
const dp = (name: string, inbound: Record<string, unknown>[], outbound: Record<string, unknown>[] = []) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: { address: '10.0.0.1', inbound, outbound },
});

describe('GET /meshes/{mesh}/dataplanes/{name}/xds of a proxy not connected (decisions §11)', () => {
  let cp: ControlPlane;
  const put = async (url: string, payload: unknown) => {
    const res = await cp.app.inject({ method: 'PUT', url, payload: payload as Record<string, unknown> });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };

  beforeAll(async () => {
    cp = await startTestPlane();
    await put(
      '/meshes/default/dataplanes/client-1',
      dp(
        'client-1',
        [{ port: 9000, tags: { [SVC]: 'client' } }],
        [{ port: 10001, tags: { [SVC]: 'greeter' } }],
      ),
    );
    for (const [name, address, version] of [
      ['greeter-v1', '10.0.1.1', 'v1'],
      ['greeter-v2', '10.0.2.1', 'v2'],
    ]) {
      await put(`/meshes/default/dataplanes/${name}`, {
        ...dp(name, [{ port: 50051, address, tags: { [SVC]: 'greeter', version } }]),
      });
    }
    await put('/meshes/default/traffic-routes/split', {
      type: 'TrafficRoute',
      mesh: 'default',
      name: 'split',
      sources: [{ match: { [SVC]: 'client' } }],
      destinations: [{ match: { [SVC]: 'greeter' } }],
      conf: {
        split: [
          { weight: 80, destination: { [SVC]: 'greeter', version: 'v1' } },
          { weight: 20, destination: { [SVC]: 'greeter', version: 'v2' } },
        ],
      },
    });
  });
  afterAll(async () => {
    await cp.close();
  });

  it('answers what it would be served for its outbounds, at the revision of the answer', async () => {
    const res = await cp.app.inject({ method: 'GET', url: '/meshes/default/dataplanes/client-1/xds' });
    expect(res.statusCode, res.body).toBe(200);
    const dump = res.json() as { configs: Array<Record<string, any>> }; // eslint-disable-line @typescript-eslint/no-explicit-any
    const [bootstrap, listeners, , clusters, endpoints] = dump.configs;
    expect(bootstrap.bootstrap.node).toEqual({
      id: 'default.client-1',
      cluster: 'client',
      metadata: { 'dataplane.admin.port': '0' },
    });
    expect(listeners.version_info).toBe(res.headers['x-mesh-revision']);
    const hcm = listeners.dynamic_listeners[0].active_state.listener.api_listener.api_listener;
    expect(hcm.route_config.virtual_hosts[0].routes[0].route.weighted_clusters.clusters).toEqual([
      { name: 'greeter{version=v1}', weight: { value: 80 } },
      { name: 'greeter{version=v2}', weight: { value: 20 } },
    ]);
    expect(
      clusters.dynamic_active_clusters.map((c: { cluster: { name: string } }) => c.cluster.name),
    ).toEqual(['greeter{version=v1}', 'greeter{version=v2}']);
    const addresses = endpoints.dynamic_endpoint_configs.map(
      (e: {
        endpoint_config: {
          endpoints: Array<{
            lb_endpoints: Array<{ endpoint: { address: { socket_address: { address: string } } } }>;
          }>;
        };
      }) => e.endpoint_config.endpoints[0].lb_endpoints.map((l) => l.endpoint.address.socket_address.address),
    );
    expect(addresses).toEqual([['10.0.1.1'], ['10.0.2.1']]);
  });

  it('404 names the missing mesh or proxy', async () => {
    const noProxy = await cp.app.inject({ method: 'GET', url: '/meshes/default/dataplanes/nope/xds' });
    expect(noProxy.statusCode).toBe(404);
    expect(noProxy.json().details).toBe('Dataplane "nope" not found in mesh "default"');
    const noMesh = await cp.app.inject({ method: 'GET', url: '/meshes/nope/dataplanes/x/xds' });
    expect(noMesh.json().details).toBe('Mesh "nope" not found');
  });
});
