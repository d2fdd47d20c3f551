import * as grpc from '@grpc/grpc-js';
import * as net from 'node:net';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { AppError } from '../../src/util/errors.js';
import type { Node } from '../../src/xds/ads-protocol.js';
import { AdsServer } from '../../src/xds/ads-server.js';
import type { ConfigSource, ProxyHandle } from '../../src/xds/config-source.js';
import { decodeAny, type NamedResource } from '../../src/xds/encode-any.js';
import type { StreamInfo } from '../../src/xds/stream-info.js';
import { countersOf } from '../../src/xds/stream-info.js';
import { CLUSTER, LISTENER, SHORT_TYPE } from '../../src/xds/type-urls.js';
import type { RawAdsClient } from '../helpers/xds.js';
import { edsCluster, proxylessListener, rawAdsClient, rawNode } from '../helpers/xds.js';

/** A config source in memory: resources per type, a version bumped by each `set`, change listeners. */
class FakeSource implements ConfigSource {
  version = 1;
  readonly config = new Map<string, NamedResource[]>();
  readonly listeners = new Set<() => void>();
  readonly nodes: Node[] = [];
  closed = 0;
  refusal: Error | undefined;

  async open(node: Node): Promise<ProxyHandle> {
    if (this.refusal) throw this.refusal;
    this.nodes.push(node);
    return {
      resources: (typeUrl, names) => ({
        version: this.version,
        resources: (this.config.get(typeUrl) ?? []).filter(
          (r) => names.length === 0 || names.includes(r.name),
        ),
      }),
      onChange: (listener) => {
        this.listeners.add(listener);
        return () => this.listeners.delete(listener);
      },
      closed: () => void this.closed++,
    };
  }

  /** Replaces the resources of a type at the next version and says so. */
  set(typeUrl: string, resources: NamedResource[]): void {
    this.config.set(typeUrl, resources);
    this.version++;
    for (const l of this.listeners) l();
  }
}

const listeners = (...names: string[]): NamedResource[] =>
  names.map((name) => ({ name, resource: proxylessListener(name) }));

describe('ADS server (state of the world)', () => {
  let source: FakeSource;
  let server: AdsServer;
  let port: number;
  const clients: RawAdsClient[] = [];

  const connect = (metadata?: grpc.Metadata): RawAdsClient => {
    const c = rawAdsClient(port, metadata);
    clients.push(c);
    return c;
  };

  /** Opens a stream, asks Listener `backend` and returns the client with the first response. */
  const subscribed = async () => {
    const client = connect();
    client.send({ type_url: LISTENER, resource_names: ['backend'], node: rawNode('default.web-1') });
    return { client, first: await client.next() };
  };

  const onlyStream = (): StreamInfo => {
    const [info] = server.streams();
    if (!info) throw new Error('no open stream');
    return info;
  };

  beforeEach(async () => {
    source = new FakeSource();
    source.config.set(LISTENER, listeners('backend', 'other'));
    source.config.set(CLUSTER, [
      { name: 'backend', resource: edsCluster('backend') },
      { name: 'other', resource: edsCluster('other') },
    ]);
    server = new AdsServer(source);
    port = await server.start({ port: 0, host: '127.0.0.1' });
  });

  afterEach(async () => {
    for (const c of clients.splice(0)) c.close();
    await server.close();
  });

  it('answers the first request of a type with the subscribed resources at the current version', async () => {
    const { client, first } = await subscribed();
    expect(first.type_url).toBe(LISTENER);
    expect(first.version_info).toBe('1');
    expect(first.nonce).not.toBe('');
    expect(first.resources.map((r) => decodeAny(r))).toEqual([proxylessListener('backend')]);
    // CDS with no names is the wildcard: every cluster.
    client.send({ type_url: CLUSTER, resource_names: [] });
    const clusters = await client.next();
    expect(clusters.resources.map((r) => decodeAny(r))).toEqual([edsCluster('backend'), edsCluster('other')]);
    expect(clusters.nonce).not.toBe(first.nonce);
    expect(source.nodes[0]?.id).toBe('default.web-1');
  });

  it('answers an empty type too, so that the client is not left waiting', async () => {
    const client = connect();
    client.send({ type_url: CLUSTER, resource_names: ['missing'], node: rawNode('default.web-1') });
    const first = await client.next();
    expect(first.resources).toEqual([]);
  });

  it('does not resend after an ACK and counts it', async () => {
    const { client, first } = await subscribed();
    client.send({
      type_url: LISTENER,
      resource_names: ['backend'],
      response_nonce: first.nonce,
      version_info: '1',
    });
    await client.nothingFor(300);
    const counters = countersOf(onlyStream(), SHORT_TYPE);
    expect(counters.lds).toEqual({ responsesSent: 1, responsesAcknowledged: 1, responsesRejected: 0 });
    expect(counters.total).toEqual(counters.lds);
    expect(onlyStream().types.get(LISTENER)?.ackedVersion).toBe(1);
  });

  it('pushes a change with new content at the new version with a new nonce', async () => {
    const { client, first } = await subscribed();
    client.send({ type_url: LISTENER, resource_names: ['backend'], response_nonce: first.nonce });
    source.set(LISTENER, [{ name: 'backend', resource: proxylessListener('backend', 'backend-v2') }]);
    const pushed = await client.next();
    expect(pushed.version_info).toBe('2');
    expect(pushed.nonce).not.toBe(first.nonce);
    expect(pushed.resources.map((r) => decodeAny(r))).toEqual([proxylessListener('backend', 'backend-v2')]);
  });

  it('does not push a change that leaves the subscribed content as it was', async () => {
    const { client, first } = await subscribed();
    client.send({ type_url: LISTENER, resource_names: ['backend'], response_nonce: first.nonce });
    // A new version, an equal object for `backend`, and a change to a resource not subscribed.
    source.set(LISTENER, [
      { name: 'backend', resource: proxylessListener('backend') },
      { name: 'other', resource: proxylessListener('other', 'elsewhere') },
    ]);
    await client.nothingFor(300);
    expect(onlyStream().types.get(LISTENER)?.responsesSent).toBe(1);
  });

  it('records a NACK with its message without stalling: the next change is still pushed', async () => {
    const { client, first } = await subscribed();
    source.set(
      LISTENER,
      listeners('backend').map((r) => ({ ...r, resource: proxylessListener('backend', 'bad') })),
    );
    const second = await client.next();
    // The NACK names the new version (the research notes: never read NACKs from version_info).
    client.send({
      type_url: LISTENER,
      resource_names: ['backend'],
      response_nonce: second.nonce,
      version_info: second.version_info,
      error_detail: { code: grpc.status.INVALID_ARGUMENT, message: 'cluster bad not found' },
    });
    await client.nothingFor(200);
    const status = onlyStream().types.get(LISTENER);
    expect(status).toMatchObject({ responsesSent: 2, responsesAcknowledged: 0, responsesRejected: 1 });
    expect(status?.lastNack?.message).toBe('cluster bad not found');
    expect(status?.lastNack?.time).toBeInstanceOf(Date);
    expect(status?.ackedVersion).toBeUndefined();
    expect(first.version_info).toBe('1');

    source.set(LISTENER, [{ name: 'backend', resource: proxylessListener('backend', 'good') }]);
    const third = await client.next();
    expect(third.version_info).toBe('3');
    expect(third.resources.map((r) => decodeAny(r))).toEqual([proxylessListener('backend', 'good')]);
  });

  it('counts a NACK once when the client repeats its nonce and error to change its names', async () => {
    const { client, first } = await subscribed();
    const nack = { code: 3, message: 'bad' };
    client.send({
      type_url: LISTENER,
      resource_names: ['backend'],
      response_nonce: first.nonce,
      error_detail: nack,
    });
    client.send({
      type_url: LISTENER,
      resource_names: ['backend', 'other'],
      response_nonce: first.nonce,
      error_detail: nack,
    });
    const widened = await client.next();
    expect(widened.resources).toHaveLength(2);
    expect(onlyStream().types.get(LISTENER)?.responsesRejected).toBe(1);
  });

  it('ignores a request that carries an older nonce', async () => {
    const { client, first } = await subscribed();
    source.set(LISTENER, [
      { name: 'backend', resource: proxylessListener('backend', 'v2') },
      { name: 'other', resource: proxylessListener('other') },
    ]);
    const second = await client.next();
    // Written before the client saw `second`: stale, neither an ACK nor a new subscription.
    client.send({ type_url: LISTENER, resource_names: ['backend', 'other'], response_nonce: first.nonce });
    await client.nothingFor(300);
    expect(onlyStream().types.get(LISTENER)).toMatchObject({ responsesAcknowledged: 0, names: ['backend'] });
    // The current nonce with the wider names is answered.
    client.send({ type_url: LISTENER, resource_names: ['backend', 'other'], response_nonce: second.nonce });
    expect((await client.next()).resources).toHaveLength(2);
  });

  it('ends the stream with the status and message of a refused open', async () => {
    const refused: unknown[] = [];
    server.on('refuse', (node, status) => refused.push([node?.id, status.code]));
    source.refusal = new AppError('UNAUTHENTICATED', 'invalid token', 'the data plane token expired');
    const client = connect();
    client.send({ type_url: LISTENER, resource_names: ['backend'], node: rawNode('default.web-1') });
    const status = await client.status;
    expect(status.code).toBe(grpc.status.UNAUTHENTICATED);
    expect(status.details).toBe('the data plane token expired');
    expect(refused).toEqual([['default.web-1', grpc.status.UNAUTHENTICATED]]);

    source.refusal = new AppError('FORBIDDEN', 'forbidden', 'the token does not cover default.web-1');
    const other = connect();
    other.send({ type_url: LISTENER, resource_names: ['backend'], node: rawNode('default.web-1') });
    expect(await other.status).toMatchObject({
      code: grpc.status.PERMISSION_DENIED,
      details: 'the token does not cover default.web-1',
    });
  });

  it('refuses a stream whose first request has no node', async () => {
    const client = connect();
    client.send({ type_url: LISTENER, resource_names: ['backend'] });
    expect(await client.status).toMatchObject({ code: grpc.status.INVALID_ARGUMENT });
  });

  it('passes the node to the source with its metadata as JSON and the call metadata', async () => {
    const client = connect();
    client.send({
      type_url: LISTENER,
      resource_names: ['backend'],
      node: rawNode('default.web-1', { 'dataplane.token': 'tok-1' }),
    });
    await client.next();
    expect(source.nodes[0]?.metadata).toEqual({ 'dataplane.token': 'tok-1' });
    expect(source.nodes[0]?.locality).toEqual({ zone: 'zone-1' });
  });

  it('ends a stream that asks more than 16 resource types, or a type URL over 256 characters', async () => {
    const { client } = await subscribed();
    for (let i = 1; i < 16; i++) {
      client.send({ type_url: `type.example/t${i}` });
      await client.next();
    }
    client.send({ type_url: 'type.example/one-too-many' });
    expect(await client.status).toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: 'a stream subscribes to at most 16 resource types',
    });
    const other = connect();
    other.send({ type_url: 'x'.repeat(257), node: rawNode('default.web-1') });
    expect(await other.status).toMatchObject({
      code: grpc.status.INVALID_ARGUMENT,
      details: 'the type_url is 257 characters long; at most 256',
    });
  });

  it('keeps at most 4,096 characters of a NACK message', async () => {
    const { client, first } = await subscribed();
    client.send({
      type_url: LISTENER,
      resource_names: ['backend'],
      response_nonce: first.nonce,
      error_detail: { code: grpc.status.INVALID_ARGUMENT, message: 'n'.repeat(100_000) },
    });
    await client.nothingFor(300);
    const nack = onlyStream().types.get(LISTENER)?.lastNack;
    expect(nack?.message).toHaveLength(4096);
    expect(nack?.message.endsWith('…')).toBe(true);
  });

  it('reports connect, counter updates and disconnect with its time, and closes the handle', async () => {
    const events: string[] = [];
    let connected: StreamInfo | undefined;
    const disconnected = new Promise<StreamInfo>((resolve) =>
      server.on('disconnect', (info) => resolve(info)),
    );
    server.on('connect', (info) => {
      connected = info;
      events.push('connect');
    });
    server.on('update', () => events.push('update'));
    const { client, first } = await subscribed();
    client.send({ type_url: LISTENER, resource_names: ['backend'], response_nonce: first.nonce });
    await client.nothingFor(200);
    expect(events).toEqual(['connect', 'update', 'update']);
    expect(connected?.userAgent).toEqual({ name: 'raw-test-client', version: '9.9.9' });
    expect(connected?.connectTime).toBeInstanceOf(Date);
    expect(server.stream(connected!.id)?.served(LISTENER)).toHaveLength(1);

    client.close();
    const info = await disconnected;
    expect(info.id).toBe(connected?.id);
    expect(info.disconnectTime).toBeInstanceOf(Date);
    expect(countersOf(info, SHORT_TYPE).lds).toEqual({
      responsesSent: 1,
      responsesAcknowledged: 1,
      responsesRejected: 0,
    });
    expect(server.streams()).toEqual([]);
    expect(source.closed).toBe(1);
    expect(source.listeners.size).toBe(0);
  });

  it('serves each stream on its own: a change reaches every subscribed proxy', async () => {
    const a = await subscribed();
    const b = await subscribed();
    source.set(LISTENER, [{ name: 'backend', resource: proxylessListener('backend', 'v2') }]);
    expect((await a.client.next()).version_info).toBe('2');
    expect((await b.client.next()).version_info).toBe('2');
    expect(server.streams()).toHaveLength(2);
  });
});

describe('ADS server: a proxy that vanished without closing its connection', () => {
  it('is detected by keepalive pings and its stream gets a disconnectTime', async () => {
    const source = new FakeSource();
    source.config.set(LISTENER, listeners('backend'));
    const server = new AdsServer(source, { keepaliveTimeMs: 300, keepaliveTimeoutMs: 300 });
    const port = await server.start({ port: 0, host: '127.0.0.1' });
    // A TCP relay that can go silent, as a host that lost power: nothing is closed, nothing answers.
    const sockets: net.Socket[] = [];
    let silent = false;
    const relay = net.createServer((down) => {
      const up = net.connect(port, '127.0.0.1');
      sockets.push(down, up);
      down.on('data', (b) => void (silent || up.write(b)));
      up.on('data', (b) => void (silent || down.write(b)));
      down.on('error', () => undefined);
      up.on('error', () => undefined);
    });
    await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
    const client = rawAdsClient((relay.address() as net.AddressInfo).port);
    try {
      const disconnected = new Promise<StreamInfo>((resolve) =>
        server.on('disconnect', (info) => resolve(info)),
      );
      client.send({ type_url: LISTENER, resource_names: ['backend'], node: rawNode('default.web-1') });
      await client.next();
      expect(server.streams()).toHaveLength(1);
      const vanished = Date.now();
      silent = true;
      const info = await disconnected;
      expect(info.disconnectTime).toBeInstanceOf(Date);
      expect(Date.now() - vanished).toBeLessThan(5000);
      expect(server.streams()).toEqual([]);
      // The client's side of the relay is still open: the server ended the stream on its own.
      expect(sockets[0].destroyed).toBe(false);
    } finally {
      client.close();
      for (const s of sockets) s.destroy();
      relay.close();
      await server.close();
    }
  });
});
