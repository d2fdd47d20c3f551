import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import type { FastifyInstance } from 'fastify';
import { expect } from 'vitest';
import { ADS_METHOD_PATH } from '../../src/xds/ads-protocol.js';
import {
  CLUSTER,
  CLUSTER_LOAD_ASSIGNMENT,
  HTTP_CONNECTION_MANAGER,
  LISTENER,
  ROUTE_CONFIGURATION,
  ROUTER,
} from '../../src/xds/type-urls.js';
import {
  dataplaneLookup,
  type DataplaneLookup,
  type DataplaneResource,
} from '../../src/xds/node-identity.js';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { onMeshChange, xdsSources } from '../../src/runtime/xds-sources.js';
import { AdsServer } from '../../src/xds/ads-server.js';
import type { ConfigSource } from '../../src/xds/config-source.js';
import { createMeshConfigSource } from '../../src/xds/mesh-config-source.js';
import { createProxyTokenCheck } from '../../src/xds/proxy-token.js';

/** A sidecar Dataplane with one inbound per tag set (ports 8080, 8081, …). */
export function sidecar(
  mesh: string,
  name: string,
  ...inbounds: Array<Record<string, string>>
): DataplaneResource {
  return {
    mesh,
    name,
    networking: { address: '10.0.0.1', inbound: inbounds.map((tags, i) => ({ port: 8080 + i, tags })) },
  };
}

/** Writes a Dataplane through `PUT /meshes/{mesh}/dataplanes/{name}`; fails the test unless it is created. */
export async function putDataplane(
  app: FastifyInstance,
  mesh: string,
  name: string,
  networking: Record<string, unknown>,
): Promise<void> {
  const res = await app.inject({
    method: 'PUT',
    url: `/meshes/${mesh}/dataplanes/${name}`,
    payload: { type: 'Dataplane', mesh, name, networking },
  });
  expect(res.statusCode, res.body).toBe(201);
}

/** A gateway Dataplane with these gateway tags. */
export function gatewayProxy(mesh: string, name: string, tags: Record<string, string>): DataplaneResource {
  return { mesh, name, networking: { address: '10.0.0.2', gateway: { tags, type: 'BUILTIN' } } };
}

/** A lookup over a fixed set of Dataplanes. */
export function lookupOf(...dataplanes: DataplaneResource[]): DataplaneLookup {
  const byKey = new Map(dataplanes.map((dp) => [`${dp.mesh}\u0000${dp.name}`, dp]));
  return (mesh, name) => byKey.get(`${mesh}\u0000${name}`);
}

/** A proxyless client's Listener: an api_listener whose HttpConnectionManager inlines its routes. */
export function proxylessListener(name: string, cluster = 'backend', statPrefix = 'fp-1'): object {
  return {
    name,
    api_listener: {
      api_listener: {
        '@type': HTTP_CONNECTION_MANAGER,
        stat_prefix: statPrefix,
        route_config: {
          name: `${name}-routes`,
          virtual_hosts: [{ name, domains: ['*'], routes: [{ match: { prefix: '' }, route: { cluster } }] }],
        },
        http_filters: [{ name: 'envoy.filters.http.router', typed_config: { '@type': ROUTER } }],
      },
    },
  };
}

/** A RouteConfiguration splitting traffic between clusters by weight. */
export function weightedRoutes(name: string, weights: Record<string, number>): object {
  return {
    name,
    virtual_hosts: [
      {
        name,
        domains: ['*'],
        routes: [
          {
            match: { prefix: '/' },
            route: {
              weighted_clusters: {
                clusters: Object.entries(weights).map(([cluster, weight]) => ({
                  name: cluster,
                  weight: { value: weight },
                })),
              },
            },
          },
        ],
      },
    ],
  };
}

/** A Cluster whose endpoints come over ADS. */
export function edsCluster(name: string): object {
  return {
    name,
    type: 'EDS',
    eds_cluster_config: { eds_config: { ads: {}, resource_api_version: 'V3' } },
    connect_timeout: { seconds: 5 },
  };
}

/** A ClusterLoadAssignment with one locality of the given `ip:port` endpoints. */
export function loadAssignment(cluster: string, addresses: string[], zone = 'zone-1'): object {
  return {
    cluster_name: cluster,
    endpoints: [
      {
        locality: { zone },
        load_balancing_weight: { value: 1 },
        lb_endpoints: addresses.map((a) => {
          const [ip, port] = a.split(':');
          return { endpoint: { address: { socket_address: { address: ip, port_value: Number(port) } } } };
        }),
      },
    ],
  };
}

/** The four resource types, for tests that loop over them. */
export const RESOURCE_TYPES = [LISTENER, ROUTE_CONFIGURATION, CLUSTER, CLUSTER_LOAD_ASSIGNMENT] as const;

/** A response as the raw test client decodes it. */
export interface RawResponse {
  version_info: string;
  type_url: string;
  nonce: string;
  resources: { type_url: string; value: Buffer }[];
}

/** A raw ADS client: @grpc/grpc-js and @grpc/proto-loader over proto/third_party, not the server's code. */
export interface RawAdsClient {
  send(req: {
    type_url: string;
    resource_names?: string[];
    response_nonce?: string;
    version_info?: string;
    node?: object;
    error_detail?: { code: number; message: string };
  }): void;
  /** The next response (rejects after `ms`). */
  next(ms?: number): Promise<RawResponse>;
  /** Resolves when no response comes within `ms`; rejects with the one that came. */
  nothingFor(ms: number): Promise<void>;
  /** The status the stream ended with. */
  status: Promise<grpc.StatusObject>;
  close(): void;
}

const THIRD_PARTY = join(dirname(fileURLToPath(import.meta.url)), '..', '..', 'proto', 'third_party');

let adsPackage: grpc.GrpcObject | undefined;

/**
 * proto-loader's definition of ads.proto (the reference the hand-written service is checked against),
 * parsed once: a parse holds this process's loop, which tests of the server's loop delay share.
 */
export function loadAdsPackage(): grpc.GrpcObject {
  if (adsPackage) return adsPackage;
  const def = loadSync('envoy/service/discovery/v3/ads.proto', {
    includeDirs: ['envoy-api', 'xds', 'googleapis', 'protoc-gen-validate'].map((d) => join(THIRD_PARTY, d)),
    keepCase: true,
    longs: Number,
    enums: String,
    arrays: true,
    oneofs: true,
  });
  adsPackage = grpc.loadPackageDefinition(def);
  return adsPackage;
}

/** A node as a proxyless client sends it; `metadata` is a plain object turned into a Struct. */
export function rawNode(id: string, metadata: Record<string, string> = {}): object {
  return {
    id,
    locality: { zone: 'zone-1' },
    user_agent_name: 'raw-test-client',
    user_agent_version: '9.9.9',
    metadata: {
      fields: Object.fromEntries(Object.entries(metadata).map(([k, v]) => [k, { stringValue: v }])),
    },
  };
}

/** Opens an ADS stream to `127.0.0.1:port`. */
export function rawAdsClient(port: number, metadata = new grpc.Metadata()): RawAdsClient {
  type AdsClient = grpc.Client & {
    StreamAggregatedResources(md: grpc.Metadata): grpc.ClientDuplexStream<object, RawResponse>;
  };
  const pkg = loadAdsPackage() as unknown as {
    envoy: {
      service: {
        discovery: {
          v3: { AggregatedDiscoveryService: new (a: string, c: grpc.ChannelCredentials) => AdsClient };
        };
      };
    };
  };
  const client = new pkg.envoy.service.discovery.v3.AggregatedDiscoveryService(
    `127.0.0.1:${port}`,
    grpc.credentials.createInsecure(),
  );
  const call = client.StreamAggregatedResources(metadata);
  const queue: RawResponse[] = [];
  const waiters: ((r: RawResponse) => void)[] = [];
  call.on('data', (r: RawResponse) => {
    const w = waiters.shift();
    if (w) w(r);
    else queue.push(r);
  });
  const status = new Promise<grpc.StatusObject>((resolve) => {
    call.on('status', resolve);
    call.on('error', () => undefined);
  });
  const next = (ms = 2000): Promise<RawResponse> => {
    const r = queue.shift();
    if (r) return Promise.resolve(r);
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        waiters.splice(waiters.indexOf(waiter), 1);
        reject(new Error(`no response within ${ms} ms`));
      }, ms);
      const waiter = (resp: RawResponse): void => {
        clearTimeout(timer);
        resolve(resp);
      };
      waiters.push(waiter);
    });
  };
  return {
    send: (req) => call.write(req),
    next,
    nothingFor: async (ms) => {
      const got = await next(ms).catch(() => undefined);
      if (got) throw new Error(`unexpected response ${got.type_url} version ${got.version_info}`);
    },
    status,
    close: () => {
      call.cancel();
      client.close();
    },
  };
}

/** The status a stream ends with, or a failure when it does not end within `ms` (a hung client). */
export async function statusWithin(client: RawAdsClient, ms = 5000): Promise<grpc.StatusObject> {
  let timer: NodeJS.Timeout | undefined;
  try {
    return await Promise.race([
      client.status,
      new Promise<never>((_, fail) => {
        timer = setTimeout(() => fail(new Error(`the stream did not end within ${ms} ms`)), ms);
      }),
    ]);
  } finally {
    clearTimeout(timer);
    client.close();
  }
}

/** A length-delimited protobuf field: tag, length, bytes. */
export function pbField(number: number, bytes: Buffer): Buffer {
  const varint = (n: number): number[] => {
    const out: number[] = [];
    for (; n > 127; n >>>= 7) out.push((n & 127) | 128);
    out.push(n);
    return out;
  };
  return Buffer.concat([Buffer.from(varint((number << 3) | 2)), Buffer.from(varint(bytes.length)), bytes]);
}

/**
 * Sends `bytes` as the first message of an ADS stream: resolves with `{ answered: true }` at the
 * first response, or with the status the stream ended with (a deadline of `ms`: DEADLINE_EXCEEDED
 * when neither came). The bytes are encoded before the call: only the server's work is in it.
 */
export function rawAdsExchange(
  port: number,
  bytes: Buffer,
  metadata = new grpc.Metadata(),
  ms = 5000,
): Promise<{ answered: true } | grpc.StatusObject> {
  const client = new grpc.Client(`127.0.0.1:${port}`, grpc.credentials.createInsecure());
  const call = client.makeBidiStreamRequest(ADS_METHOD_PATH, raw, raw, metadata, {
    deadline: Date.now() + ms,
  });
  call.on('error', () => undefined);
  const outcome = new Promise<{ answered: true } | grpc.StatusObject>((resolve) => {
    call.once('data', () => resolve({ answered: true }));
    call.on('status', resolve);
  });
  call.write(bytes);
  return outcome.finally(() => {
    call.cancel();
    client.close();
  });
}

/** Sends `bytes` as the first message of an ADS stream and resolves with its status (5 s at most). */
export async function rawAdsRequest(port: number, bytes: Buffer): Promise<grpc.StatusObject> {
  const outcome = await rawAdsExchange(port, bytes);
  if ('answered' in outcome) throw new Error('the server answered a request it should refuse');
  return outcome;
}

/** A DiscoveryRequest in wire format, as the raw test client encodes it (proto-loader's encoder). */
export function encodeAdsRequest(req: object): Buffer {
  const pkg = loadAdsPackage() as unknown as {
    envoy: {
      service: { discovery: { v3: { AggregatedDiscoveryService: { service: grpc.ServiceDefinition } } } };
    };
  };
  const method = pkg.envoy.service.discovery.v3.AggregatedDiscoveryService.service.StreamAggregatedResources;
  return (method as grpc.MethodDefinition<object, unknown>).requestSerialize(req);
}

const raw = (b: Buffer): Buffer => b;

/** The method of the echo backends: bytes in, the backend's tag out. */
export const ECHO = '/test.Echo/Echo';

/**
 * A plain gRPC server on 127.0.0.1 (port 0) whose Echo answers `tag`; resolves with it and its port.
 * `behave(n)` (n = 1 for the first call) may delay the answer or fail it with a status.
 */
export async function echoBackend(
  tag: string,
  behave: (n: number) => { delayMs?: number; fail?: grpc.status } = () => ({}),
): Promise<{ server: grpc.Server; port: number }> {
  let calls = 0;
  const server = new grpc.Server();
  const service = {
    Echo: {
      path: ECHO,
      requestStream: false,
      responseStream: false,
      requestSerialize: raw,
      requestDeserialize: raw,
      responseSerialize: raw,
      responseDeserialize: raw,
    },
  } as unknown as grpc.ServiceDefinition;
  server.addService(service, {
    Echo: (_call: unknown, cb: grpc.sendUnaryData<Buffer>) => {
      const { delayMs = 0, fail } = behave(++calls);
      const answer = () =>
        fail === undefined ? cb(null, Buffer.from(tag)) : cb({ code: fail, details: `${tag} fails` });
      if (delayMs > 0) setTimeout(answer, delayMs);
      else answer();
    },
  });
  const port = await new Promise<number>((resolve, reject) =>
    server.bindAsync('127.0.0.1:0', grpc.ServerCredentials.createInsecure(), (e, p) =>
      e ? reject(e) : resolve(p),
    ),
  );
  return { server, port };
}

/** One Echo call on `client` (5 s deadline): the tag of the backend that answered. */
export function echo(client: grpc.Client): Promise<string> {
  return new Promise((resolve, reject) =>
    client.makeUnaryRequest(ECHO, raw, raw, Buffer.from('hi'), { deadline: Date.now() + 5000 }, (e, v) =>
      e ? reject(e) : resolve(String(v)),
    ),
  );
}

/**
 * Starts `source` behind an ADS server on 127.0.0.1 and makes this process's @grpc/grpc-js-xds use
 * it, as `node` (the client reads one bootstrap per process: one such call per test file).
 */
export async function serveXdsToThisProcess(source: ConfigSource, node: object): Promise<AdsServer> {
  const ads = new AdsServer(source);
  const port = await ads.start({ port: 0, host: '127.0.0.1' });
  process.env.GRPC_XDS_BOOTSTRAP_CONFIG = JSON.stringify({
    xds_servers: [
      {
        server_uri: `127.0.0.1:${port}`,
        channel_creds: [{ type: 'insecure' }],
        server_features: ['ignore_resource_deletion'],
      },
    ],
    node,
  });
  const xds = await import('@grpc/grpc-js-xds');
  xds.register();
  return ads;
}

/** The mesh config source of a control plane, with tokens checked as `authnType` says. */
export function meshSourceOf(cp: ControlPlane, authnType: 'dpToken' | 'none' = 'dpToken'): ConfigSource {
  return createMeshConfigSource({
    lookup: dataplaneLookup(cp.views),
    checkToken: createProxyTokenCheck({ tokens: cp.tokens, authnType }),
    sources: xdsSources(cp.views, cp.matches),
    matches: cp.matches,
    onMeshChange: onMeshChange(cp.views),
  });
}
