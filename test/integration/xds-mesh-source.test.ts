import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import type { AdsServer } from '../../src/xds/ads-server.js';
import { startTestPlane } from '../helpers/control-plane.js';
import { echo, echoBackend, meshSourceOf, serveXdsToThisProcess } from '../helpers/xds.js';

/**
 * The mesh config source between a real control plane and the real @grpc/grpc-js-xds client (in
 * this process): the client's Dataplane and token, two backends registered as Dataplanes, a
 * TrafficRoute split written through the API and changed while the client runs. The test starts
 * its own ADS server over the source (one client bootstrap per process: `GRPC_XDS_BOOTSTRAP_CONFIG`).
 */
const SVC = 'mesh.io/service';

describe('xDS config from the mesh, obeyed by @grpc/grpc-js-xds', () => {
  let cp: ControlPlane;
  let ads: AdsServer;
  let client: grpc.Client;
  const servers: grpc.Server[] = [];
  const refusals: string[] = [];

  const put = async (url: string, payload: unknown) => {
    const res = await cp.app.inject({ method: 'PUT', url, payload: payload as Record<string, unknown> });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  const backend = async (tag: string): Promise<number> => {
    const { server, port } = await echoBackend(tag);
    servers.push(server);
    return port;
  };
  const call = (): Promise<string> => echo(client);
  const split = (v1: number, v2: number) => ({
    type: 'TrafficRoute',
    mesh: 'default',
    name: 'greeter-split',
    sources: [{ match: { [SVC]: 'client' } }],
    destinations: [{ match: { [SVC]: 'greeter' } }],
    conf: {
      split: [
        { weight: v1, destination: { [SVC]: 'greeter', version: 'v1' } },
        { weight: v2, destination: { [SVC]: 'greeter', version: 'v2' } },
      ],
    },
  });

  beforeAll(async () => {
    cp = await startTestPlane();
    const [p1, p2] = [await backend('v1'), await backend('v2')];
    await put('/meshes/default/dataplanes/client-1', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'client-1',
      networking: { address: '127.0.0.1', inbound: [{ port: 1, tags: { [SVC]: 'client' } }] },
    });
    for (const [name, port, version] of [
      ['greeter-v1', p1, 'v1'],
      ['greeter-v2', p2, 'v2'],
    ] as const) {
      await put(`/meshes/default/dataplanes/${name}`, {
        type: 'Dataplane',
        mesh: 'default',
        name,
        networking: { address: '127.0.0.1', inbound: [{ port, tags: { [SVC]: 'greeter', version } }] },
      });
    }
    await put('/meshes/default/traffic-routes/greeter-split', split(80, 20));
    const issued = await cp.app.inject({
      method: 'POST',
      url: '/tokens/dataplane',
      payload: { mesh: 'default', name: 'client-1', validFor: '1h' },
    });
    expect(issued.statusCode, issued.body).toBe(200);

    ads = await serveXdsToThisProcess(meshSourceOf(cp), {
      id: 'default.client-1',
      locality: {},
      metadata: { 'dataplane.token': issued.body },
    });
    ads.on('refuse', (_node, status) => refusals.push(status.details));
    client = new grpc.Client('xds:///greeter', grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    client?.close();
    await ads?.close();
    for (const s of servers) s.forceShutdown();
    await cp?.close();
  });

  it('a TrafficRoute split 80/20 gives 80 ± 5 % over 1,000 calls', async () => {
    const counts: Record<string, number> = { v1: 0, v2: 0 };
    for (let i = 0; i < 1000; i++) counts[await call()]++;
    expect(counts.v1).toBeGreaterThanOrEqual(750);
    expect(counts.v1).toBeLessThanOrEqual(850);
    expect(refusals).toEqual([]);
  });

  it('changing it to 0/100 through the API moves all traffic within 2 s, without restarting the client', async () => {
    await put('/meshes/default/traffic-routes/greeter-split', split(0, 100));
    const start = Date.now();
    let streak = 0;
    while (streak < 20 && Date.now() - start < 2000) streak = (await call()) === 'v2' ? streak + 1 : 0;
    expect(streak).toBe(20);
    expect(ads.streams()).toHaveLength(1);
    const [info] = ads.streams();
    expect(info.node.id).toBe('default.client-1');
  });
});
