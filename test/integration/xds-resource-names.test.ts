import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { decodeAny } from '../../src/xds/encode-any.js';
import { UNKNOWN_LISTENERS_PER_STREAM } from '../../src/xds/mesh-config-source.js';
import { CLUSTER, LISTENER } from '../../src/xds/type-urls.js';
import { issueDataplaneToken } from '../helpers/auth.js';
import { startListeningPlane } from '../helpers/control-plane.js';
import { measureLoopDelay, measureRssGrowth } from '../helpers/loop-delay.js';
import { putDataplane, rawAdsClient, rawNode, type RawAdsClient, type RawResponse } from '../helpers/xds.js';

const SVC = 'mesh.io/service';
const size = (r: RawResponse): number => r.resources.reduce((n, a) => n + a.value.length, 0);
const names = (r: RawResponse): string[] => r.resources.map((a) => String(decodeAny(a).name));

/** What one authenticated proxy can make the server compute and send with the names it asks for. */
describe('xDS resource names: a cap per request, and made-up names answered only a few per stream', () => {
  let cp: ControlPlane;
  let token: string;
  const open: RawAdsClient[] = [];

  const put = (name: string, service: string, port: number) =>
    putDataplane(cp.app, 'default', name, {
      address: '127.0.0.1',
      inbound: [{ port, tags: { [SVC]: service } }],
    });
  /** A stream of client-1 asking Listeners `resourceNames`. */
  const subscribe = (resourceNames: string[]) => {
    const client = rawAdsClient(cp.ports.xds);
    open.push(client);
    client.send({
      type_url: LISTENER,
      resource_names: resourceNames,
      node: rawNode('default.client-1', { 'dataplane.token': token }),
    });
    return client;
  };

  beforeAll(async () => {
    cp = await startListeningPlane();
    await put('client-1', 'client', 1);
    await put('web-1', 'web', 8080);
    token = await issueDataplaneToken(cp.app, { mesh: 'default', name: 'client-1' });
    // The protos are parsed at the first request (client and server): once, not a request's cost.
    const warm = subscribe(['web']);
    await warm.next();
    warm.close();
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await cp?.close();
  });

  it('20,000 names in one request end the stream with RESOURCE_EXHAUSTED naming the cap, without holding the loop', async () => {
    const many = Array.from({ length: 20_000 }, (_, i) => `svc-${i}`);
    const {
      result: { result: status, maxMs },
      growth,
    } = await measureRssGrowth(() =>
      measureLoopDelay(async () => {
        const client = subscribe(many);
        return client.status;
      }),
    );
    // Answered, these names made an 11 MB answer.
    expect(growth).toBeLessThan(64 * 1024 * 1024);
    expect(status.code).toBe(grpc.status.RESOURCE_EXHAUSTED);
    expect(status.details).toBe(
      'a DiscoveryRequest names 20000 resources; at most 1000 per request (a client asks for the services it dials)',
    );
    expect(maxMs).toBeLessThan(100);
  });

  it('1,000 names that do not exist: only the first 16 get a Listener (whose calls fail), the answer stays small', async () => {
    const asked = [...Array.from({ length: 999 }, (_, i) => `nothing-${i}`), 'web'];
    const { result: answer, maxMs } = await measureLoopDelay(async () => subscribe(asked).next(5000));
    const unknown = asked
      .filter((n) => n !== 'web')
      .sort()
      .slice(0, UNKNOWN_LISTENERS_PER_STREAM);
    expect(names(answer).sort()).toEqual([...unknown, 'web'].sort());
    expect(size(answer)).toBeLessThan(16 * 1024);
    expect(maxMs).toBeLessThan(100);
  });

  it('a name past the unknown ones answered is sent when it comes to exist, and stays while it is asked for', async () => {
    const unknown = Array.from(
      { length: UNKNOWN_LISTENERS_PER_STREAM },
      (_, i) => `a-${String(i).padStart(2, '0')}`,
    );
    const asked = [...unknown, 'later', 'web'];
    const client = subscribe(asked);
    const first = await client.next();
    expect(names(first).sort()).toEqual([...unknown, 'web']);
    client.send({ type_url: LISTENER, resource_names: asked, response_nonce: first.nonce });
    client.send({ type_url: CLUSTER, resource_names: [] });
    const clusters = await client.next();
    client.send({ type_url: CLUSTER, resource_names: [], response_nonce: clusters.nonce });
    await put('later-1', 'later', 9090);
    const pushed = [await client.next(), await client.next()];
    const lds = pushed.find((r) => r.type_url === LISTENER);
    expect(lds && names(lds).sort()).toEqual([...unknown, 'later', 'web']);
    client.send({ type_url: LISTENER, resource_names: asked, response_nonce: lds?.nonce });
    // Gone again: the Listener a client was sent stays (with no endpoints), never withdrawn.
    const del = await cp.app.inject({ method: 'DELETE', url: '/meshes/default/dataplanes/later-1' });
    expect(del.statusCode).toBe(200);
    await client.nothingFor(500).catch(() => undefined);
    expect(cp.xds?.streamOf('default', 'client-1')?.served(LISTENER)).toHaveLength(
      UNKNOWN_LISTENERS_PER_STREAM + 2,
    );
  });
});
