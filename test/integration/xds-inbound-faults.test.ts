import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import type { AdsServer } from '../../src/xds/ads-server.js';
import { startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { meshctl } from '../helpers/meshctl.js';
import { eventually } from '../helpers/multizone.js';
import { echo, echoBackend, meshSourceOf, serveXdsToThisProcess } from '../helpers/xds.js';

/**
 * One policy engine, obeyed by the real @grpc/grpc-js-xds client (in this process): a
 * FaultInjection written as the reference requires it (the protocol in its destination) is matched
 * against the inbounds of the service's endpoints and applied by the client that calls them; one
 * whose destination selects only `version: v2` aborts only the calls sent to v2. What the client is
 * served shows in `meshctl inspect dataplane` although its Dataplane declares no outbounds.
 */
const SVC = 'mesh.io/service';
const PROTOCOL = 'mesh.io/protocol';

describe('inbound faults and dialled outbounds of a proxyless client', () => {
  let cp: ControlPlane;
  let ads: AdsServer;
  const servers: grpc.Server[] = [];
  const clients: grpc.Client[] = [];
  const dir = tempDir('xds-inbound-faults-');
  const put = async (url: string, payload: Record<string, unknown>) => {
    const res = await cp.app.inject({ method: 'PUT', url, payload });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  /** A backend of `service` tagged `version` and protocol grpc, and its Dataplane. */
  const backend = async (service: string, version: string) => {
    const { server, port } = await echoBackend(`${service}-${version}`);
    servers.push(server);
    await put(`/meshes/default/dataplanes/${service}-${version}`, {
      type: 'Dataplane',
      mesh: 'default',
      name: `${service}-${version}`,
      networking: {
        address: '127.0.0.1',
        inbound: [{ port, tags: { [SVC]: service, version, [PROTOCOL]: 'grpc' } }],
      },
    });
  };
  const fault = (name: string, destination: Record<string, string>, percentage: number) =>
    put(`/meshes/default/fault-injections/${name}`, {
      type: 'FaultInjection',
      mesh: 'default',
      name,
      sources: [{ match: { [SVC]: '*' } }],
      destinations: [{ match: destination }],
      conf: { abort: { percentage, httpStatus: 503 } },
    });
  const clientOf = (service: string) => {
    const c = new grpc.Client(`xds:///${service}`, grpc.credentials.createInsecure());
    clients.push(c);
    return c;
  };
  const outcome = (p: Promise<string>) =>
    p.then(
      (answer) => ({ answer }),
      (e: grpc.ServiceError) => ({ code: e.code }),
    );

  beforeAll(async () => {
    cp = await startListeningPlane({ MESH_DEFAULTS_SKIP_DEFAULT_POLICIES: 'true' });
    // The client serves nothing it dials: one inbound for its tags, no outbounds.
    await put('/meshes/default/dataplanes/client-1', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'client-1',
      networking: { address: '127.0.0.1', inbound: [{ port: 1, tags: { [SVC]: 'client' } }] },
    });
    await backend('shop', 'v1');
    await backend('split', 'v1');
    await backend('split', 'v2');
    await fault('shop-half', { [SVC]: 'shop', [PROTOCOL]: 'grpc' }, 50);
    await fault('split-v2', { [SVC]: 'split', version: 'v2', [PROTOCOL]: 'grpc' }, 100);
    await put('/meshes/default/timeouts/split', {
      type: 'Timeout',
      mesh: 'default',
      name: 'split',
      sources: [{ match: { [SVC]: 'client' } }],
      destinations: [{ match: { [SVC]: 'split' } }],
      conf: { grpc: { maxStreamDuration: '3s' } },
    });
    await put('/meshes/default/traffic-routes/split', {
      type: 'TrafficRoute',
      mesh: 'default',
      name: 'split',
      sources: [{ match: { [SVC]: 'client' } }],
      destinations: [{ match: { [SVC]: 'split' } }],
      conf: { destination: { [SVC]: 'split' } },
    });
    ads = await serveXdsToThisProcess(meshSourceOf(cp, 'none'), { id: 'default.client-1', locality: {} });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await ads?.close();
    for (const s of servers) s.forceShutdown();
    await cp?.close();
  });

  it('a FaultInjection with the protocol in its destination aborts about half the calls', async () => {
    const client = clientOf('shop');
    let failed = 0;
    for (let i = 0; i < 200; i++) if ('code' in (await outcome(echo(client)))) failed++;
    expect(failed).toBeGreaterThan(60);
    expect(failed).toBeLessThan(140);
  });

  it('a FaultInjection that selects only version v2 aborts only the calls sent to v2', async () => {
    const client = clientOf('split');
    const answers = new Map<string, number>();
    for (let i = 0; i < 100; i++) {
      const r = await outcome(echo(client));
      const key = 'answer' in r ? r.answer : `code ${r.code}`;
      answers.set(key, (answers.get(key) ?? 0) + 1);
    }
    // Round robin over the two versions: every v1 call answers, every v2 call is aborted.
    expect(answers.get('split-v2')).toBeUndefined();
    expect(answers.get('split-v1') ?? 0).toBeGreaterThan(20);
    expect(answers.get(`code ${grpc.status.UNAVAILABLE}`) ?? 0).toBeGreaterThan(20);
    expect([...answers.keys()].sort()).toEqual([`code ${grpc.status.UNAVAILABLE}`, 'split-v1']);
  });

  it('meshctl inspect dataplane lists what the client is served for the services it dials', async () => {
    // Once the client dials both services, its entry lists them as outbounds.
    await outcome(echo(clientOf('shop')));
    await outcome(echo(clientOf('split')));
    const config = join(dir.path, 'meshctl.yaml');
    const api = `http://127.0.0.1:${cp.ports.api}`;
    const out = await eventually(async () => {
      const r = await meshctl(
        ['--api-address', api, 'inspect', 'dataplane', 'client-1', '--mesh', 'default'],
        {
          config,
        },
      );
      expect(r.code, r.stderr).toBe(0);
      expect(r.stdout).toContain('Timeout');
      return r.stdout;
    });
    const lines = out.split('\n');
    const row = (name: string, kind: string) =>
      lines.find((l) => /^outbound\s/.test(l) && l.includes(` ${name} `) && l.includes(kind));
    expect(row('split', 'Timeout')).toMatch(/Timeout\s+split/);
    expect(row('split', 'TrafficRoute')).toMatch(/TrafficRoute\s+split/);
    expect(row('split', 'FaultInjection')).toMatch(/FaultInjection\s+split-v2/);
    expect(row('shop', 'FaultInjection')).toMatch(/FaultInjection\s+shop-half/);
    // The API says the same, and the policy's affected proxies include the client.
    const res = await cp.app.inject({ url: '/meshes/default/fault-injections/shop-half/dataplanes' });
    const names = (JSON.parse(res.body) as { items: Array<{ dataplane: { name: string } }> }).items.map(
      (i) => i.dataplane.name,
    );
    expect(names).toEqual(['client-1', 'shop-v1']);
  });

  it('the rules view has a destination item for each service the client dials', async () => {
    await outcome(echo(clientOf('split')));
    await put('/meshes/default/meshaccesslogs/to-split', {
      type: 'MeshAccessLog',
      mesh: 'default',
      name: 'to-split',
      spec: {
        targetRef: { kind: 'Mesh' },
        to: [
          {
            targetRef: { kind: 'MeshService', name: 'split' },
            default: { backends: [{ file: { path: '/tmp/split.log' } }] },
          },
        ],
      },
    });
    const res = await cp.app.inject({ url: '/meshes/default/dataplanes/client-1/rules' });
    const items = (JSON.parse(res.body) as { items: Array<Record<string, unknown>> }).items;
    expect(items).toContainEqual(
      expect.objectContaining({
        type: 'destinationSubset',
        name: 'split',
        service: 'split',
        policyType: 'MeshAccessLog',
      }),
    );
  });
});
