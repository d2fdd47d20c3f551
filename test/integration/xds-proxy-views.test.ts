import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER } from '../../src/xds/type-urls.js';
import { startListeningPlane } from '../helpers/control-plane.js';
import { eventually } from '../helpers/multizone.js';
import { rawAdsClient, rawNode, type RawAdsClient } from '../helpers/xds.js';

const SVC = 'mesh.io/service';
type Dump = { configs: Array<Record<string, any>> }; // eslint-disable-line @typescript-eslint/no-explicit-any

describe('/xds, /stats and /clusters of a proxy', () => {
  let cp: ControlPlane;
  let token: string;
  const get = (url: string) => cp.app.inject({ method: 'GET', url });
  const put = async (url: string, payload: Record<string, unknown>) => {
    const res = await cp.app.inject({ method: 'PUT', url, payload });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  const clients: RawAdsClient[] = [];
  const connect = (): RawAdsClient => {
    const c = rawAdsClient(cp.ports.xds);
    clients.push(c);
    return c;
  };
  const node = () => rawNode('default.client-1', { 'dataplane.token': token });

  beforeAll(async () => {
    cp = await startListeningPlane();
    await put('/meshes/default/dataplanes/client-1', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'client-1',
      networking: {
        address: '127.0.0.1',
        inbound: [{ port: 9000, tags: { [SVC]: 'client' } }],
        outbound: [{ port: 10001, tags: { [SVC]: 'greeter' } }],
      },
    });
    await put('/meshes/default/dataplanes/greeter-1', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'greeter-1',
      networking: { address: '10.0.1.1', inbound: [{ port: 50051, tags: { [SVC]: 'greeter' } }] },
    });
    const issued = await cp.app.inject({
      method: 'POST',
      url: '/tokens/dataplane',
      payload: { mesh: 'default', name: 'client-1', validFor: '1h' },
    });
    token = issued.body;
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await cp?.close();
  });

  it('not connected: the computed config, connected_state 0, and the clusters it would get', async () => {
    const xds = await get('/meshes/default/dataplanes/client-1/xds');
    expect(xds.statusCode).toBe(200);
    const clusters = (xds.json() as Dump).configs[3].dynamic_active_clusters;
    expect(clusters.map((c: { cluster: { name: string } }) => c.cluster.name)).toEqual(['greeter']);
    const stats = await get('/meshes/default/dataplanes/client-1/stats');
    expect(stats.headers['content-type']).toMatch(/^text\/plain/);
    expect(stats.body.split('\n')).toContain('control_plane.connected_state: 0');
    expect(stats.body.split('\n')).toContain('cluster_manager.cds.update_attempt: 0');
    const text = await get('/meshes/default/dataplanes/client-1/clusters');
    expect(text.headers['content-type']).toMatch(/^text\/plain/);
    expect(text.body.split('\n')).toEqual([
      'greeter::observability_name::greeter',
      'greeter::added_via_api::true',
      'greeter::10.0.1.1:50051::health_flags::healthy',
      'greeter::10.0.1.1:50051::weight::1',
      'greeter::10.0.1.1:50051::region::',
      'greeter::10.0.1.1:50051::zone::',
      'greeter::10.0.1.1:50051::sub_zone::',
      'greeter::10.0.1.1:50051::priority::0',
      '',
    ]);
  });

  it('connected: what the stream served, its versions, the NACK text, its counters and clusters', async () => {
    const c = connect();
    c.send({ type_url: LISTENER, resource_names: ['greeter'], node: node() });
    const lds = await c.next();
    c.send({
      type_url: LISTENER,
      resource_names: ['greeter'],
      response_nonce: lds.nonce,
      version_info: lds.version_info,
    });
    c.send({ type_url: CLUSTER, resource_names: ['greeter'] });
    const cds = await c.next();
    c.send({
      type_url: CLUSTER,
      resource_names: ['greeter'],
      response_nonce: cds.nonce,
      version_info: '',
      error_detail: { code: 3, message: 'cluster greeter: unsupported lb_policy' },
    });
    c.send({ type_url: CLUSTER_LOAD_ASSIGNMENT, resource_names: ['greeter'] });
    const eds = await c.next();
    c.send({
      type_url: CLUSTER_LOAD_ASSIGNMENT,
      resource_names: ['greeter'],
      response_nonce: eds.nonce,
      version_info: eds.version_info,
    });
    await eventually(
      async () =>
        (await get('/meshes/default/dataplanes/client-1/stats')).body.includes(
          'cluster_manager.eds.update_success: 1',
        ),
      5000,
      'the EDS ACK counted',
    );

    const dump = (await get('/meshes/default/dataplanes/client-1/xds')).json() as Dump;
    const [bootstrap, listeners, routes, clusters, endpoints] = dump.configs;
    expect(bootstrap.bootstrap.node.id).toBe('default.client-1');
    expect(listeners.version_info).toBe(lds.version_info);
    const listener = listeners.dynamic_listeners[0];
    expect(listener.name).toBe('greeter');
    expect(listener.active_state.version_info).toBe(lds.version_info);
    expect(Date.parse(listener.active_state.last_updated)).not.toBeNaN();
    expect(listener.error_state).toBeUndefined();
    expect(routes.dynamic_route_configs).toEqual([]);
    const cluster = clusters.dynamic_active_clusters[0];
    expect(cluster.version_info).toBe(cds.version_info);
    expect(cluster.error_state).toMatchObject({
      details: 'cluster greeter: unsupported lb_policy',
      version_info: cds.version_info,
      failed_configuration: { '@type': CLUSTER, name: 'greeter' },
    });
    expect(Date.parse(cluster.error_state.last_update_attempt)).not.toBeNaN();
    expect(endpoints.dynamic_endpoint_configs[0].endpoint_config.cluster_name).toBe('greeter');

    const stats = (await get('/meshes/default/dataplanes/client-1/stats')).body.split('\n');
    expect(stats).toEqual(
      expect.arrayContaining([
        'control_plane.connected_state: 1',
        'listener_manager.lds.update_attempt: 1',
        'listener_manager.lds.update_success: 1',
        `listener_manager.lds.version: ${lds.version_info}`,
        'cluster_manager.cds.update_attempt: 1',
        'cluster_manager.cds.update_success: 0',
        'cluster_manager.cds.update_rejected: 1',
        'cluster_manager.eds.update_success: 1',
      ]),
    );
    const text = (await get('/meshes/default/dataplanes/client-1/clusters')).body.split('\n');
    expect(text).toEqual(
      expect.arrayContaining([
        'greeter::observability_name::greeter',
        'greeter::10.0.1.1:50051::health_flags::healthy',
        'greeter::10.0.1.1:50051::weight::1',
      ]),
    );

    // A second stream of the same proxy is the newest: its own (LDS only) state is answered.
    const second = connect();
    second.send({ type_url: LISTENER, resource_names: ['greeter'], node: node() });
    await second.next();
    await eventually(
      async () =>
        (await get('/meshes/default/dataplanes/client-1/stats')).body.includes(
          'cluster_manager.cds.update_attempt: 0',
        ),
      5000,
      'the newest stream answered',
    );
    const newest = (await get('/meshes/default/dataplanes/client-1/xds')).json() as Dump;
    expect(newest.configs[3].dynamic_active_clusters).toEqual([]);
    second.close();
    await eventually(
      async () =>
        (await get('/meshes/default/dataplanes/client-1/stats')).body.includes(
          'cluster_manager.cds.update_rejected: 1',
        ),
      5000,
      'back to the first stream once the second ended',
    );
  });

  it('404 for a missing proxy or mesh on every view', async () => {
    for (const view of ['xds', 'stats', 'clusters']) {
      const noProxy = await get(`/meshes/default/dataplanes/nope/${view}`);
      expect(noProxy.statusCode).toBe(404);
      expect(noProxy.json().details).toBe('Dataplane "nope" not found in mesh "default"');
      const noMesh = await get(`/meshes/nope/dataplanes/x/${view}`);
      expect(noMesh.statusCode).toBe(404);
      expect(noMesh.json().details).toBe('Mesh "nope" not found');
    }
  });

  it('zone ingresses and egresses: their node and an empty config; 404 when missing', async () => {
    await put('/zone-ingresses/ingress-1', {
      type: 'ZoneIngress',
      name: 'ingress-1',
      networking: { address: '127.0.0.1', port: 10001 },
    });
    await put('/zoneegresses/egress-1', {
      type: 'ZoneEgress',
      name: 'egress-1',
      networking: { address: '127.0.0.1', port: 10002 },
    });
    for (const [seg, name] of [
      ['zoneingresses', 'ingress-1'],
      ['zoneegresses', 'egress-1'],
    ]) {
      const xds = await get(`/${seg}/${name}/xds`);
      expect(xds.statusCode, xds.body).toBe(200);
      const dump = xds.json() as Dump;
      expect(dump.configs[0].bootstrap.node.id).toBe(name);
      expect(dump.configs[1].dynamic_listeners).toEqual([]);
      expect(dump.configs[3].dynamic_active_clusters).toEqual([]);
      const stats = await get(`/${seg}/${name}/stats`);
      expect(stats.body.split('\n')).toContain('control_plane.connected_state: 0');
      const clusters = await get(`/${seg}/${name}/clusters`);
      expect(clusters.statusCode).toBe(200);
      expect(clusters.body).toBe('');
      for (const view of ['xds', 'stats', 'clusters']) {
        const missing = await get(`/${seg}/nope/${view}`);
        expect(missing.statusCode).toBe(404);
        expect(missing.json().details).toMatch(/"nope" not found/);
      }
    }
  });
});
