import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { AdsServer } from '../../src/xds/ads-server.js';
import type { ConfigSource } from '../../src/xds/config-source.js';
import type { NamedResource } from '../../src/xds/encode-any.js';
import type { StreamInfo } from '../../src/xds/stream-info.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER } from '../../src/xds/type-urls.js';
import {
  echo,
  echoBackend,
  edsCluster,
  loadAssignment,
  proxylessListener,
  serveXdsToThisProcess,
} from '../helpers/xds.js';

/**
 * The protocol core against the client it exists for: @grpc/grpc-js-xds (pinned 1.14.1) in this
 * process, a fake config source, two plain gRPC backends. Not the e2e (no control plane).
 */

describe('ADS server with @grpc/grpc-js-xds', () => {
  const servers: grpc.Server[] = [];
  const listeners = new Set<() => void>();
  const config = new Map<string, NamedResource[]>();
  let version = 1;
  let ads: AdsServer;
  let client: grpc.Client;

  const backend = async (tag: string): Promise<number> => {
    const { server, port } = await echoBackend(tag);
    servers.push(server);
    return port;
  };

  const change = (typeUrl: string, resources: NamedResource[]): void => {
    version++;
    config.set(typeUrl, resources);
    for (const l of listeners) l();
  };

  const call = (): Promise<string> => echo(client);

  beforeAll(async () => {
    const [p1, p2] = [await backend('v1'), await backend('v2')];
    config.set(LISTENER, [{ name: 'backend', resource: proxylessListener('backend', 'c1', 'fp-1') }]);
    config.set(CLUSTER, [
      { name: 'c1', resource: edsCluster('c1') },
      { name: 'c2', resource: edsCluster('c2') },
    ]);
    config.set(CLUSTER_LOAD_ASSIGNMENT, [
      { name: 'c1', resource: loadAssignment('c1', [`127.0.0.1:${p1}`]) },
      { name: 'c2', resource: loadAssignment('c2', [`127.0.0.1:${p2}`]) },
    ]);
    const source: ConfigSource = {
      open: async () => ({
        resources: (typeUrl, names) => ({
          version,
          resources: (config.get(typeUrl) ?? []).filter((r) => names.length === 0 || names.includes(r.name)),
        }),
        onChange: (l) => {
          listeners.add(l);
          return () => listeners.delete(l);
        },
        closed: () => undefined,
      }),
    };
    ads = await serveXdsToThisProcess(source, { id: 'default.web-1', locality: { zone: 'zone-1' } });
    client = new grpc.Client('xds:///backend', grpc.credentials.createInsecure());
  });

  afterAll(async () => {
    client?.close();
    await ads?.close();
    for (const s of servers) s.forceShutdown();
  });

  const stream = (): StreamInfo => {
    const [info] = ads.streams();
    if (!info) throw new Error('no stream');
    return info;
  };

  it('configures the client: its calls reach the cluster the Listener routes to', async () => {
    expect(await call()).toBe('v1');
    expect(stream().userAgent.name).toBe('gRPC Node Pure JS');
    for (const url of [LISTENER, CLUSTER, CLUSTER_LOAD_ASSIGNMENT]) {
      expect(stream().types.get(url)).toMatchObject({
        responsesSent: 1,
        responsesAcknowledged: 1,
        responsesRejected: 0,
      });
    }
  });

  it('pushes a change that the client applies without reconnecting', async () => {
    change(LISTENER, [{ name: 'backend', resource: proxylessListener('backend', 'c2', 'fp-2') }]);
    const start = Date.now();
    let got = await call();
    while (got !== 'v2' && Date.now() - start < 3000) got = await call();
    expect(got).toBe('v2');
    expect(ads.streams()).toHaveLength(1);
  });

  it("records the client's NACK text for a Listener it cannot use", async () => {
    change(LISTENER, [{ name: 'backend', resource: { name: 'backend' } }]);
    const start = Date.now();
    while (!stream().types.get(LISTENER)?.lastNack && Date.now() - start < 3000) {
      await new Promise((r) => setTimeout(r, 20));
    }
    expect(stream().types.get(LISTENER)?.lastNack?.message).toContain('No api_listener');
    // The last good config stays in force.
    expect(await call()).toBe('v2');
  });
});
