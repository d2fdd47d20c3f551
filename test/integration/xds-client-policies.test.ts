import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import type { AdsServer } from '../../src/xds/ads-server.js';
import { startTestPlane } from '../helpers/control-plane.js';
import { ECHO, echo, echoBackend, meshSourceOf, serveXdsToThisProcess } from '../helpers/xds.js';

/**
 * Timeout, Retry, FaultInjection and TrafficRoute http matches written through the API, obeyed by the real @grpc/grpc-js-xds
 * client (in this process; test/e2e/xds.test.ts checks the same with real processes). The mesh has
 * no default policies, so that each case sees only its own.
 */
const SVC = 'mesh.io/service';
const everyone = [{ match: { [SVC]: '*' } }];

describe('Timeout, Retry and FaultInjection on a proxyless client', () => {
  let cp: ControlPlane;
  let ads: AdsServer;
  const servers: grpc.Server[] = [];
  const clients: grpc.Client[] = [];
  const put = async (url: string, payload: unknown) => {
    const res = await cp.app.inject({ method: 'PUT', url, payload: payload as Record<string, unknown> });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  const register = async (service: string, behave?: Parameters<typeof echoBackend>[1]) => {
    const { server, port } = await echoBackend(service, behave);
    servers.push(server);
    await put(`/meshes/default/dataplanes/${service}-1`, {
      type: 'Dataplane',
      mesh: 'default',
      name: `${service}-1`,
      // The protocol is what a FaultInjection's destination selects the inbound by.
      networking: {
        address: '127.0.0.1',
        inbound: [{ port, tags: { [SVC]: service, 'mesh.io/protocol': 'grpc' } }],
      },
    });
  };
  // A FaultInjection's destinations also name the protocol (Kuma's rule): the client's calls are gRPC.
  const policy = (type: string, collection: string, service: string, conf: unknown) =>
    put(`/meshes/default/${collection}/${service}`, {
      type,
      mesh: 'default',
      name: service,
      sources: everyone,
      destinations: [
        {
          match:
            type === 'FaultInjection' ? { [SVC]: service, 'mesh.io/protocol': 'grpc' } : { [SVC]: service },
        },
      ],
      conf,
    });
  const clientOf = (service: string) => {
    const c = new grpc.Client(`xds:///${service}`, grpc.credentials.createInsecure());
    clients.push(c);
    return c;
  };
  const failure = (p: Promise<unknown>) =>
    p.then(
      () => undefined,
      (e: grpc.ServiceError) => e,
    );

  beforeAll(async () => {
    cp = await startTestPlane({ MESH_DEFAULTS_SKIP_DEFAULT_POLICIES: 'true' });
    await put('/meshes/default/dataplanes/client-1', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'client-1',
      networking: { address: '127.0.0.1', inbound: [{ port: 1, tags: { [SVC]: 'client' } }] },
    });
    await register('slow', () => ({ delayMs: 1000 }));
    await register('flaky', (n) => (n % 2 === 1 ? { fail: grpc.status.UNAVAILABLE } : {}));
    await register('faulty');
    await policy('Timeout', 'timeouts', 'slow', { grpc: { maxStreamDuration: '300ms' } });
    await policy('Retry', 'retries', 'flaky', { grpc: { numRetries: 2, retryOn: ['unavailable'] } });
    await policy('FaultInjection', 'fault-injections', 'faulty', {
      abort: { percentage: 50, httpStatus: 503 },
    });
    for (const version of ['v1', 'v2']) {
      const { server, port } = await echoBackend(`routed-${version}`);
      servers.push(server);
      await put(`/meshes/default/dataplanes/routed-${version}`, {
        type: 'Dataplane',
        mesh: 'default',
        name: `routed-${version}`,
        networking: { address: '127.0.0.1', inbound: [{ port, tags: { [SVC]: 'routed', version } }] },
      });
    }
    await policy('TrafficRoute', 'traffic-routes', 'routed', {
      destination: { [SVC]: 'routed', version: 'v1' },
      http: [
        {
          match: { path: { prefix: '/test.Echo/' }, headers: { 'X-User': { exact: 'beta' } } },
          destination: { [SVC]: 'routed', version: 'v2' },
        },
        {
          match: { path: { exact: '/other.Service/Call' } },
          destination: { [SVC]: 'routed', version: 'v2' },
        },
      ],
    });
    ads = await serveXdsToThisProcess(meshSourceOf(cp, 'none'), { id: 'default.client-1', locality: {} });
  });
  afterAll(async () => {
    for (const c of clients) c.close();
    await ads?.close();
    for (const s of servers) s.forceShutdown();
    await cp?.close();
  });

  it('a Timeout of 300 ms fails a 1 s call with DEADLINE_EXCEEDED', async () => {
    const client = clientOf('slow');
    // Resolution and connection first, so that the time measured is the call's alone (a loaded machine).
    await new Promise<void>((resolve, reject) =>
      client.waitForReady(Date.now() + 5000, (e) => (e ? reject(e) : resolve())),
    );
    const started = Date.now();
    const err = await failure(echo(client));
    expect(err?.code).toBe(grpc.status.DEADLINE_EXCEEDED);
    expect(Date.now() - started).toBeLessThan(900);
  });

  it('a service no proxy serves fails calls with UNAVAILABLE, not the deadline (a Listener is still sent)', async () => {
    // Without a Listener the client would wait 15 s for one, past the call's 5 s deadline.
    const err = await failure(echo(clientOf('nobody')));
    expect(err?.code).toBe(grpc.status.UNAVAILABLE);
  });

  it('a Retry makes calls pass through one injected UNAVAILABLE', async () => {
    const client = clientOf('flaky');
    for (let i = 0; i < 5; i++) expect(await echo(client)).toBe('flaky');
  });

  it('TrafficRoute http matches route calls by method path and metadata; other calls take the default', async () => {
    const client = clientOf('routed');
    const call = (user?: string) => {
      const md = new grpc.Metadata();
      if (user) md.set('x-user', user);
      return new Promise<string>((resolve, reject) =>
        client.makeUnaryRequest(
          ECHO,
          (b: Buffer) => b,
          (b: Buffer) => b,
          Buffer.from('hi'),
          md,
          { deadline: Date.now() + 5000 },
          (e, v) => (e ? reject(e) : resolve(String(v))),
        ),
      );
    };
    for (let i = 0; i < 5; i++) {
      expect(await call('beta')).toBe('routed-v2');
      expect(await call('alpha')).toBe('routed-v1');
      expect(await call()).toBe('routed-v1');
    }
  });

  it('a FaultInjection abort of 50 % fails about half the calls', async () => {
    const client = clientOf('faulty');
    let failed = 0;
    for (let i = 0; i < 200; i++) if (await failure(echo(client))) failed++;
    expect(failed).toBeGreaterThan(60);
    expect(failed).toBeLessThan(140);
  });
});
