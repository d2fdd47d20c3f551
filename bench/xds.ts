// The xds scenarios: 1,000 simulated proxies (raw ADS streams over @grpc/grpc-js, in
// this process) against mesh-cp in its own process; a policy push beside a bare grpc-js server
// pushing the same bytes (bench/baselines/bare-ads-push.ts). See bench/README.md.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import protobuf from 'protobufjs';
import { ADS_SERVICE, type DiscoveryRequest, type DiscoveryResponse } from '../src/xds/ads-protocol.js';
import { envoyType } from '../src/xds/envoy-protos.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER } from '../src/xds/type-urls.js';
import { measureFigure, groupSelection, type GroupOptions } from './lib/measure.js';
import {
  cpuMsOf,
  freePort,
  heapAfterGc,
  rssOf,
  startMeshCp,
  startTsBaseline,
  type Started,
} from './lib/processes.js';
import type { Figure } from './lib/report.js';
import { percentile } from './lib/stats.js';

const SVC = 'mesh.io/service';
const MESH = 'default';
const PROXIES = 1000;
const BACKENDS = 10;

/**
 * A DiscoveryRequest as the simulated clients write it: fields written by hand (the node, on a
 * first request, through protobufjs), empty strings left out as proto3 allows. The thousands of
 * clients share this process with nothing else to do: what they spend encoding and decoding is
 * time the machine's two cores do not give the servers measured (ours and the bare one alike).
 */
function encodeRequest(req: DiscoveryRequest): Buffer {
  const w = protobuf.Writer.create();
  if (req.version_info) w.uint32(10).string(req.version_info);
  if (req.node) {
    const node = envoyType('envoy.config.core.v3.Node');
    w.uint32(18).fork();
    node.encode(node.fromObject(req.node), w);
    w.ldelim();
  }
  for (const name of req.resource_names) w.uint32(26).string(name);
  if (req.type_url) w.uint32(34).string(req.type_url);
  if (req.response_nonce) w.uint32(42).string(req.response_nonce);
  if (req.error_detail) {
    const status = envoyType('google.rpc.Status');
    w.uint32(50).fork();
    status.encode(status.fromObject(req.error_detail), w);
    w.ldelim();
  }
  const bytes = w.finish();
  return Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
}

/** A DiscoveryResponse decoded, not converted: its resources stay `Any` messages (type_url, value). */
const decodeResponse = (bytes: Buffer): DiscoveryResponse =>
  envoyType('envoy.service.discovery.v3.DiscoveryResponse').decode(bytes) as unknown as DiscoveryResponse;

/** The client side of ADS as the simulated proxies use it (the server's definition, lean codecs). */
const ADS_CLIENT_SERVICE: grpc.ServiceDefinition = {
  StreamAggregatedResources: {
    ...(ADS_SERVICE.StreamAggregatedResources as grpc.MethodDefinition<DiscoveryRequest, DiscoveryResponse>),
    requestSerialize: encodeRequest,
    responseDeserialize: decodeResponse,
  },
};

const GenericAdsClient = grpc.makeGenericClientConstructor(ADS_CLIENT_SERVICE, 'AggregatedDiscoveryService');

/**
 * A channel of simulated clients: no retries and no channelz (each would add a layer of objects
 * and work to every call of this process; the servers measured see the same streams either way).
 */
export class AdsClient extends GenericAdsClient {
  constructor(address: string, credentials: grpc.ChannelCredentials) {
    super(address, credentials, { 'grpc.enable_retries': 0, 'grpc.enable_channelz': 0 });
  }
}

export type Client = InstanceType<typeof AdsClient>;
type Stream = grpc.ClientDuplexStream<DiscoveryRequest, DiscoveryResponse>;

/** One simulated proxyless client: LDS for `backend`, CDS wildcard, EDS for the clusters; ACKs at once. */
export class SimProxy {
  private stream!: Stream;
  readonly got = new Set<string>();
  configured: Promise<void>;
  onListener?: () => void;
  responses = 0;
  lastListener?: DiscoveryResponse;
  /** The last response of each type (the bytes a baseline server serves back in a storm). */
  readonly last = new Map<string, DiscoveryResponse>();
  /** The last error a stream of this proxy ended with (it then opens a new one, as clients do). */
  error?: string;
  /** Streams opened again after an error. */
  reopened = 0;
  private closed = false;
  private done: () => void = () => undefined;

  constructor(
    private readonly client: Client,
    private readonly id: string,
  ) {
    this.configured = new Promise<void>((r) => (this.done = r));
    this.open();
  }

  private open(): void {
    this.got.clear();
    this.edsNames = [];
    const stream = (
      this.client as unknown as { StreamAggregatedResources(): Stream }
    ).StreamAggregatedResources();
    this.stream = stream;
    // A session the server closed (Node's http2 ends one that sees a burst of stream resets, as the
    // cancels of a previous round) ends its streams: a proxy then opens a new one, as clients do.
    stream.on('error', (e: Error) => {
      this.error = e.message;
      if (this.closed || stream !== this.stream) return;
      this.reopened++;
      setTimeout(() => this.closed || this.open(), 50);
    });
    stream.on('data', (res: DiscoveryResponse) => {
      this.responses++;
      this.last.set(res.type_url, res);
      let names: string[] = [];
      if (res.type_url === LISTENER) {
        names = ['backend'];
        this.lastListener = res;
        this.onListener?.();
      }
      if (res.type_url === CLUSTER_LOAD_ASSIGNMENT) names = this.edsNames;
      this.send(res.type_url, names, res.nonce);
      if (res.type_url === CLUSTER && !this.got.has(CLUSTER)) {
        const cluster = envoyType('envoy.config.cluster.v3.Cluster');
        this.edsNames = res.resources.map((r) =>
          String((cluster.decode(r.value) as unknown as { name: string }).name),
        );
        this.send(CLUSTER_LOAD_ASSIGNMENT, this.edsNames, '');
      }
      this.got.add(res.type_url);
      if (this.got.size === 3) this.done();
    });
    stream.write({
      node: { id: this.id, locality: {} } as never,
      type_url: LISTENER,
      resource_names: ['backend'],
      response_nonce: '',
      version_info: '',
    });
    this.send(CLUSTER, [], '');
  }

  private edsNames: string[] = [];

  private send(type_url: string, names: string[], nonce: string): void {
    this.stream.write({ type_url, resource_names: names, response_nonce: nonce, version_info: '' });
  }

  close(): void {
    this.closed = true;
    this.stream.cancel();
  }
}

/**
 * A raw stream to the bare baseline: registers, then counts the responses pushed to it and ACKs
 * each at once, as a SimProxy does, so that the clients (in this process) do the same work in both
 * measurements and the comparison is of the servers.
 */
export function bareStream(client: Client, onPush: () => void): Stream {
  const s = (client as unknown as { StreamAggregatedResources(): Stream }).StreamAggregatedResources();
  s.on('error', () => undefined);
  s.on('data', (res: DiscoveryResponse) => {
    onPush();
    s.write({
      type_url: res.type_url,
      resource_names: ['backend'],
      response_nonce: res.nonce,
      version_info: '',
    });
  });
  s.write({ type_url: LISTENER, resource_names: ['backend'], response_nonce: '', version_info: '' });
  return s;
}

export async function put(base: string, path: string, body: Record<string, unknown>): Promise<number> {
  const t = performance.now();
  const res = await fetch(`${base}${path}`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });
  const text = await res.text();
  if (!res.ok) throw new Error(`PUT ${path}: ${res.status} ${text}`);
  return performance.now() - t;
}

/** Runs `fns` with at most `n` at once. */
async function pool<T>(items: readonly T[], n: number, fn: (t: T) => Promise<unknown>): Promise<void> {
  let i = 0;
  await Promise.all(
    Array.from({ length: n }, async () => {
      while (i < items.length) await fn(items[i++] as T);
    }),
  );
}

const proxyName = (i: number): string => `client-${i}`;

/** The xds figures; empty unless `only` names one of them (or is unset). */
export async function xdsFigures(opts: GroupOptions): Promise<Figure[]> {
  const { log, want } = groupSelection(opts);
  if (!want('xds')) return [];
  const runs = opts.quick ? 1 : 3;
  const figures: Figure[] = [];
  const dir = mkdtempSync(join(tmpdir(), 'mesh-bench-xds-'));
  const inspectPort = await freePort();
  const ours: Started = await startMeshCp(
    dir,
    { MESH_DP_SERVER_AUTHN_TYPE: 'none', MESH_DEFAULTS_SKIP_DEFAULT_POLICIES: 'true' },
    [`--inspect=127.0.0.1:${inspectPort}`],
  );
  const clients: Client[] = [];
  let proxies: SimProxy[] = [];
  const closeAll = () => {
    for (const p of proxies) p.close();
    proxies = [];
  };
  let bare: Started | undefined;
  try {
    const base = `http://127.0.0.1:${(ours.ready.apiPort ?? ours.ready.port) as number}`;
    const xdsPort = ours.ready.xdsPort as number;
    log(`xds: writing ${PROXIES} client Dataplanes and ${BACKENDS} backends…`);
    const dps = [
      ...Array.from({ length: BACKENDS }, (_, i) => ({
        name: `backend-${i}`,
        networking: {
          address: `10.2.0.${i + 1}`,
          inbound: [{ port: 50051, tags: { [SVC]: 'backend', version: 'v1' } }],
        },
      })),
      ...Array.from({ length: PROXIES }, (_, i) => ({
        name: proxyName(i),
        networking: {
          address: `10.1.${i >> 8}.${i & 255}`,
          inbound: [{ port: 9000, tags: { [SVC]: 'client' } }],
        },
      })),
    ];
    await pool(dps, 20, (d) =>
      put(base, `/meshes/${MESH}/dataplanes/${d.name}`, { type: 'Dataplane', mesh: MESH, ...d }),
    );
    // Channels of their own, 50 streams each, as 1,000 processes would not share one connection.
    for (let i = 0; i < PROXIES / 50; i++)
      clients.push(new AdsClient(`127.0.0.1:${xdsPort}`, grpc.credentials.createInsecure()));
    const connectAll = async (): Promise<number> => {
      closeAll();
      await new Promise((r) => setTimeout(r, 300));
      const t = performance.now();
      proxies = Array.from(
        { length: PROXIES },
        (_, i) => new SimProxy(clients[i % clients.length] as Client, `${MESH}.${proxyName(i)}`),
      );
      let configured = 0;
      const all = Promise.all(proxies.map((p) => p.configured.then(() => configured++)));
      const limit = new Promise((r) => setTimeout(r, 30_000, 'timeout'));
      if ((await Promise.race([all, limit])) === 'timeout') {
        const stuck = proxies.find((p) => p.got.size < 3);
        throw new Error(
          `only ${configured} of ${PROXIES} proxies configured after 30 s; one of the others got ` +
            `${JSON.stringify([...(stuck?.got ?? [])])}, last stream error: ${stuck?.error ?? 'none'}`,
        );
      }
      const ms = performance.now() - t;
      const reopened = proxies.reduce((n, p) => n + p.reopened, 0);
      if (reopened > 0) log(`  (${reopened} streams were ended by their session and opened again)`);
      return ms;
    };

    log('xds-connect: 1,000 raw ADS streams connect and are fully configured (LDS, CDS, EDS ACKed)');
    figures.push(
      await measureFigure(
        {
          name: 'xds-connect',
          figure: 'ms until 1,000 proxies are configured',
          target: 2000,
          higherIsBetter: false,
        },
        async () => ({ ours: await connectAll(), baseline: null }),
        { runs, log },
      ),
    );

    log('xds-memory: heap of mesh-cp after GC with 1,000 configured proxies vs with none');
    closeAll();
    await new Promise((r) => setTimeout(r, 500));
    const heapNone = await heapAfterGc(inspectPort);
    const rssNone = rssOf(ours.proc.pid as number);
    await connectAll();
    const heapAll = await heapAfterGc(inspectPort);
    const rssAll = rssOf(ours.proc.pid as number);
    figures.push(
      await measureFigure(
        {
          name: 'xds-memory',
          figure: 'heap growth per connected proxy after GC (KB)',
          target: 30,
          higherIsBetter: false,
          warmUp: false,
        },
        async () => ({ ours: (heapAll - heapNone) / PROXIES / 1024, baseline: null }),
        { runs: 1, log },
      ),
    );
    figures[figures.length - 1].note =
      `RSS grew ${((rssAll - rssNone) / PROXIES / 1024).toFixed(1)} KB per proxy over the same connect (no GC); heap with none ${(heapNone / 2 ** 20).toFixed(1)} MiB`;

    // The push: a Timeout on `backend` for every client, changed each run; ours is the p99 of
    // PUT-to-Listener-response over the 1,000 streams (each ACKs on receipt).
    const listenerBytes = proxies[0]?.lastListener;
    if (!listenerBytes) throw new Error('no Listener was served');
    const file = join(dir, 'listener.json');
    writeFileSync(
      file,
      JSON.stringify({
        type_url: LISTENER,
        resources: listenerBytes.resources.map((r) => ({
          type_url: r.type_url,
          value: Buffer.from(r.value).toString('base64'),
        })),
      }),
    );
    bare = await startTsBaseline('bench/baselines/bare-ads-push.ts', [file]);
    const bareClients = Array.from(
      { length: PROXIES / 50 },
      () => new AdsClient(`127.0.0.1:${bare?.ready.port as number}`, grpc.credentials.createInsecure()),
    );
    const bareLatencies: number[] = [];
    let bareStart = 0;
    let bareDone: () => void = () => undefined;
    const bareStreams = Array.from({ length: PROXIES }, (_, i) =>
      bareStream(bareClients[i % bareClients.length] as Client, () => {
        bareLatencies.push(performance.now() - bareStart);
        if (bareLatencies.length === PROXIES) bareDone();
      }),
    );
    const trigger = bareStream(bareClients[0] as Client, () => undefined);
    await new Promise((r) => setTimeout(r, 500));
    const barePush = async (): Promise<number> => {
      bareLatencies.length = 0;
      const all = new Promise<void>((r) => (bareDone = r));
      const cpu0 = cpuMsOf(bare?.proc.pid as number);
      bareStart = performance.now();
      trigger.write({ type_url: 'trigger', resource_names: [], response_nonce: 'x', version_info: '' });
      await all;
      await new Promise((r) => setTimeout(r, 100));
      log(`  [xds-push] bare server CPU ${cpuMsOf(bare?.proc.pid as number) - cpu0} ms`);
      return percentile(bareLatencies, 99);
    };
    let value = 0;
    const ourPush = async (): Promise<number> => {
      const latencies: number[] = [];
      const all = new Promise<void>((resolve) => {
        for (const p of proxies)
          p.onListener = () => {
            latencies.push(performance.now() - start);
            p.onListener = undefined;
            if (latencies.length === PROXIES) resolve();
          };
      });
      const cpu0 = cpuMsOf(ours.proc.pid as number);
      const start = performance.now();
      await put(base, `/meshes/${MESH}/timeouts/bench-all`, {
        type: 'Timeout',
        mesh: MESH,
        name: 'bench-all',
        sources: [{ match: { [SVC]: '*' } }],
        destinations: [{ match: { [SVC]: 'backend' } }],
        conf: { grpc: { maxStreamDuration: `${1000 + ++value}ms` } },
      });
      await Promise.race([all, new Promise((r) => setTimeout(r, 10_000))]);
      if (latencies.length < PROXIES) throw new Error(`only ${latencies.length} of ${PROXIES} got the push`);
      // Where the time goes: until the first proxy has it (the PUT, its durable append, the first
      // recomputation), then the fan-out to the others.
      // And the work it cost mesh-cp: CPU time until every ACK is in (the insight publish after it
      // is not counted), beside the bare server's for its push (a noisy machine stretches the
      // latencies, not these).
      await new Promise((r) => setTimeout(r, 100));
      const cpu = cpuMsOf(ours.proc.pid as number) - cpu0;
      log(
        `  [xds-push] first Listener after ${Math.min(...latencies).toFixed(1)} ms, p50 ${percentile(latencies, 50).toFixed(1)} ms, mesh-cp CPU ${cpu} ms`,
      );
      return percentile(latencies, 99);
    };
    log('xds-push: a Timeout touching all 1,000, p99 PUT-to-Listener; bare grpc-js push of the same bytes');
    const oursP99s: number[] = [];
    // A push takes about 0.1 s and one run's ratio swings 2× on this machine: seven runs, and the
    // figure is their median (measureFigure), so that one noisy run does not decide it.
    const pushRuns = opts.quick ? 1 : 7;
    // The warm-up run is not counted, as in measureFigure.
    const worst = (): number => Math.max(...oursP99s.slice(-pushRuns));
    figures.push(
      await measureFigure(
        {
          name: 'xds-push',
          figure: 'p99 ms, a policy change to 1,000 proxies (ratio: bare push p99 ÷ ours)',
          target: 0.5,
          higherIsBetter: true,
          ratioOf: (o, b) => b / o,
          extraOk: () => worst() <= 1000,
        },
        async () => {
          const o = await ourPush();
          oursP99s.push(o);
          return { ours: o, baseline: await barePush() };
        },
        { runs: pushRuns, log },
      ),
    );
    figures[figures.length - 1].note =
      `every counted run's p99 ≤ 1000 ms: ${worst() <= 1000 ? 'yes' : 'no'} (largest ${worst().toFixed(1)} ms; warm-up ${oursP99s[0]?.toFixed(1)} ms)`;
    for (const s of [...bareStreams, trigger]) s.cancel();
    for (const c of bareClients) c.close();

    log('xds-quiet-write: a Timeout whose sources select no proxy, then a Secret: responses pushed');
    let putMs: number[] = [];
    figures.push(
      await measureFigure(
        {
          name: 'xds-quiet-write',
          figure: 'responses pushed to 1,000 proxies by writes that touch none',
          target: 0,
          higherIsBetter: false,
        },
        async () => {
          await new Promise((r) => setTimeout(r, 300));
          const before = proxies.reduce((n, p) => n + p.responses, 0);
          putMs.push(
            await put(base, `/meshes/${MESH}/timeouts/bench-none`, {
              type: 'Timeout',
              mesh: MESH,
              name: 'bench-none',
              sources: [{ match: { [SVC]: 'nobody' } }],
              destinations: [{ match: { [SVC]: 'backend' } }],
              conf: { grpc: { maxStreamDuration: `${2000 + ++value}ms` } },
            }),
          );
          putMs.push(
            await put(base, `/meshes/${MESH}/secrets/bench-secret`, {
              type: 'Secret',
              mesh: MESH,
              name: 'bench-secret',
              data: Buffer.from(`s${value}`).toString('base64'),
            }),
          );
          await new Promise((r) => setTimeout(r, 500));
          return { ours: proxies.reduce((n, p) => n + p.responses, 0) - before, baseline: null };
        },
        { runs, log },
      ),
    );
    putMs = putMs.slice(2);
    figures[figures.length - 1].note =
      `PUT round trips of those writes: p50 ${percentile(putMs, 50).toFixed(1)} ms, max ${Math.max(...putMs).toFixed(1)} ms (responses counted over 500 ms after each pair)`;
  } finally {
    closeAll();
    for (const c of clients) c.close();
    await bare?.stop();
    await ours.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
