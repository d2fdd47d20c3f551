// The ads10k scenarios: 10,000 simulated proxyless clients (raw ADS streams over @grpc/grpc-js, in
// this process, as bench/xds.ts's 1,000) against one mesh-cp instance: the reconnect storm after a
// restart, the heap per connected proxy, and a mesh-wide Timeout change beside a bare grpc-js server
// pushing the same bytes to 10,000 streams (bench/baselines/bare-ads-push.ts). See bench/README.md.
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { toWire } from '../src/app/decide.js';
import type { WireResource } from '../src/events/types.js';
import { registry } from '../src/resources/registry.js';
import { validateBody } from '../src/resources/validate.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER } from '../src/xds/type-urls.js';
import { create, openBatchedLog } from './fixtures.js';
import { measureFigure, groupSelection, type GroupOptions } from './lib/measure.js';
import {
  cpuMsOf,
  freePort,
  heapAfterGc,
  settle,
  startMeshCp,
  startTsBaseline,
  type Started,
} from './lib/processes.js';
import type { Figure } from './lib/report.js';
import { median, percentile } from './lib/stats.js';
import { AdsClient, bareStream, put, SimProxy, type Client } from './xds.js';

const NAMES = ['ads10k-storm', 'ads10k-memory', 'ads10k-push'];
const SVC = 'mesh.io/service';
const MESH = 'default';
const PROXIES = 10_000;
const BACKENDS = 10;
/** Streams per channel: 200 channels, as 10,000 processes would not share one connection. */
const PER_CHANNEL = 50;
const T = '2026-01-01T00:00:00.000Z';

const proxyName = (i: number): string => `client-${i}`;

/** Validates a PUT body as the API does and builds the stored resource. */
function stored(kind: string, body: Record<string, unknown>): WireResource {
  const desc = registry.get(kind);
  const v = validateBody(desc, body, { mesh: MESH, name: body.name as string });
  if (!v.ok) throw new Error(`fixture ${kind} ${String(body.name)} is invalid: ${JSON.stringify(v.causes)}`);
  return toWire(desc, MESH, body.name as string, T, T, v.spec);
}

/** The mesh, 10 backends of service `backend` and the 10,000 clients' Dataplanes, straight into LevelDB. */
async function buildStore(path: string): Promise<void> {
  const w = await openBatchedLog(path);
  await w.push(create('Mesh', { type: 'Mesh', name: MESH, creationTime: T, modificationTime: T }));
  const dp = (name: string, address: string, port: number, tags: Record<string, string>) =>
    create(
      'Dataplane',
      stored('Dataplane', {
        type: 'Dataplane',
        mesh: MESH,
        name,
        networking: { address, inbound: [{ port, tags }] },
      }),
    );
  for (let i = 0; i < BACKENDS; i++)
    await w.push(dp(`backend-${i}`, `10.2.0.${i + 1}`, 50051, { [SVC]: 'backend', version: 'v1' }));
  for (let i = 0; i < PROXIES; i++)
    await w.push(dp(proxyName(i), `10.1.${i >> 8}.${i & 255}`, 9000, { [SVC]: 'client' }));
  await w.close();
}

const channels = (port: number): Client[] =>
  Array.from(
    { length: PROXIES / PER_CHANNEL },
    () => new AdsClient(`127.0.0.1:${port}`, grpc.credentials.createInsecure()),
  );

/** Opens the 10,000 streams at once; resolves with the ms until every one is configured (LDS, CDS, EDS). */
async function storm(
  clients: Client[],
  log: (s: string) => void,
): Promise<{ ms: number; proxies: SimProxy[] }> {
  const t = performance.now();
  const proxies = Array.from(
    { length: PROXIES },
    (_, i) => new SimProxy(clients[i % clients.length] as Client, `${MESH}.${proxyName(i)}`),
  );
  let configured = 0;
  const all = Promise.all(proxies.map((p) => p.configured.then(() => configured++)));
  const limit = new Promise((r) => setTimeout(r, 60_000, 'timeout'));
  if ((await Promise.race([all, limit])) === 'timeout')
    throw new Error(`only ${configured} of ${PROXIES} proxies configured after 60 s`);
  const ms = performance.now() - t;
  const reopened = proxies.reduce((n, p) => n + p.reopened, 0);
  if (reopened > 0) log(`  (${reopened} streams were ended by their session and opened again)`);
  return { ms, proxies };
}

/** A storm against `server` with the server's CPU and this process's (the clients') over it. */
async function measuredStorm(
  server: Started,
  clients: Client[],
  log: (s: string) => void,
): Promise<{ ms: number; proxies: SimProxy[]; serverCpu: number; clientCpu: number }> {
  const pid = server.proc.pid as number;
  const serverCpu = cpuMsOf(pid);
  const clientCpu = process.cpuUsage();
  const s = await storm(clients, log);
  const used = process.cpuUsage(clientCpu);
  return { ...s, serverCpu: cpuMsOf(pid) - serverCpu, clientCpu: (used.user + used.system) / 1000 };
}

/** The last Listener, Cluster and ClusterLoadAssignment responses a proxy got, stored as JSON. */
function storedResponses(proxy: SimProxy | undefined): unknown[] {
  const out = [LISTENER, CLUSTER, CLUSTER_LOAD_ASSIGNMENT].map((url) => proxy?.last.get(url));
  if (out.some((r) => r === undefined)) throw new Error('a proxy lacks a response of some type');
  return out.map((r) => ({
    type_url: r?.type_url,
    resources: r?.resources.map((a) => ({
      type_url: a.type_url,
      value: Buffer.from(a.value).toString('base64'),
    })),
  }));
}

/** The ads10k figures; empty unless `only` names one of them (or is unset). */
export async function xds10kFigures(opts: GroupOptions): Promise<Figure[]> {
  const { log, want } = groupSelection(opts);
  const figures: Figure[] = [];
  if (!NAMES.some(want)) return figures;
  const runs = opts.quick ? 1 : 3;
  const dir = mkdtempSync(join(tmpdir(), 'mesh-bench-ads10k-'));
  const env = { MESH_DP_SERVER_AUTHN_TYPE: 'none', MESH_DEFAULTS_SKIP_DEFAULT_POLICIES: 'true' };
  let ours: Started | undefined;
  let clients: Client[] = [];
  let proxies: SimProxy[] = [];
  let inspectPort = 0;
  const closeProxies = () => {
    for (const p of proxies) p.close();
    proxies = [];
    for (const c of clients) c.close();
    clients = [];
  };
  const stopOurs = async () => {
    closeProxies();
    await ours?.stop();
    ours = undefined;
  };
  let bare: Started | undefined;
  try {
    log(`ads10k: writing ${PROXIES.toLocaleString()} client Dataplanes and ${BACKENDS} backends…`);
    await buildStore(dir);
    // Each run: mesh-cp (re)started on the store, idle, heap after GC; then the 10,000 open their
    // streams at once, as after a restart; the heap after GC again. Then the same storm against a
    // bare grpc-js server (fresh, idle) that answers each type with the bytes mesh-cp served: the
    // baseline, measured with the clients in the same state (mesh-cp's streams closed first).
    const heaps: Array<{ none: number; all: number }> = [];
    const cpu: Array<{ server: number; clients: number; bare: number; bareClients: number }> = [];
    const stormRun = async (): Promise<{ ours: number; baseline: number }> => {
      await stopOurs();
      inspectPort = await freePort();
      ours = await startMeshCp(dir, env, [`--inspect=127.0.0.1:${inspectPort}`]);
      await settle([ours.proc.pid as number]);
      const none = await heapAfterGc(inspectPort);
      clients = channels(ours.ready.xdsPort as number);
      const s = await measuredStorm(ours, clients, log);
      proxies = s.proxies;
      heaps.push({ none, all: await heapAfterGc(inspectPort) });
      const file = join(dir, 'responses.json');
      writeFileSync(file, JSON.stringify({ responses: storedResponses(proxies[0]) }));
      closeProxies();
      const b = await startTsBaseline('bench/baselines/bare-ads-push.ts', [file, '--answer']);
      try {
        await settle([b.proc.pid as number]);
        const bareClients = channels(b.ready.port as number);
        const bs = await measuredStorm(b, bareClients, log);
        for (const p of bs.proxies) p.close();
        for (const c of bareClients) c.close();
        cpu.push({
          server: s.serverCpu,
          clients: s.clientCpu,
          bare: bs.serverCpu,
          bareClients: bs.clientCpu,
        });
        log(
          `  [ads10k-storm] mesh-cp ${s.ms.toFixed(0)} ms (CPU ${s.serverCpu} ms, clients' ${s.clientCpu.toFixed(0)} ms); bare ${bs.ms.toFixed(0)} ms (CPU ${bs.serverCpu} ms, clients' ${bs.clientCpu.toFixed(0)} ms)`,
        );
        return { ours: s.ms, baseline: bs.ms };
      } finally {
        await b.stop();
      }
    };
    log(
      'ads10k-storm: mesh-cp restarted, then 10,000 streams at once until each has LDS, CDS and EDS; the same against a bare server',
    );
    figures.push(
      await measureFigure(
        {
          name: 'ads10k-storm',
          figure:
            'ms until 10,000 proxies are configured, all connecting at once after a restart (ratio: ours ÷ bare grpc-js)',
          target: 5000,
          higherIsBetter: false,
          warmUp: false,
          gate: 'ours',
        },
        stormRun,
        { runs, log },
      ),
    );
    figures[figures.length - 1].note =
      `CPU over each storm: mesh-cp ${cpu.map((c) => c.server).join(', ')} ms, its clients (this process) ${cpu.map((c) => c.clients.toFixed(0)).join(', ')} ms; the bare server ${cpu.map((c) => c.bare).join(', ')} ms, its clients ${cpu.map((c) => c.bareClients.toFixed(0)).join(', ')} ms`;
    // The 10,000 connect to mesh-cp again (not measured) for the push.
    clients = channels((ours as Started).ready.xdsPort as number);
    proxies = (await storm(clients, log)).proxies;
    const perProxy = heaps.map((h) => (h.all - h.none) / PROXIES / 1024);

    // The bare grpc-js server (bench/baselines/bare-ads-push.ts): 10,000 streams of the same shape
    // from the same clients, each pushed the Listener mesh-cp served; its heap per stream after GC
    // is the floor under ads10k-memory (the transport's own call objects), and it is the baseline
    // of ads10k-push.
    const listener = proxies[0]?.lastListener;
    if (!listener) throw new Error('no Listener was served');
    const file = join(dir, 'listener.json');
    writeFileSync(
      file,
      JSON.stringify({
        type_url: LISTENER,
        resources: listener.resources.map((r) => ({
          type_url: r.type_url,
          value: Buffer.from(r.value).toString('base64'),
        })),
      }),
    );
    const bareInspect = await freePort();
    bare = await startTsBaseline(
      'bench/baselines/bare-ads-push.ts',
      [file],
      [`--inspect=127.0.0.1:${bareInspect}`],
    );
    await settle([bare.proc.pid as number]);
    const bareNone = await heapAfterGc(bareInspect);
    const bareClients = channels(bare.ready.port as number);
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
    await new Promise((r) => setTimeout(r, 2000));
    const barePush = async (): Promise<number> => {
      bareLatencies.length = 0;
      const all = new Promise<void>((r) => (bareDone = r));
      const cpu0 = cpuMsOf(bare?.proc.pid as number);
      bareStart = performance.now();
      trigger.write({ type_url: 'trigger', resource_names: [], response_nonce: 'x', version_info: '' });
      await Promise.race([all, new Promise((r) => setTimeout(r, 20_000))]);
      if (bareLatencies.length < PROXIES)
        throw new Error(`the bare server reached ${bareLatencies.length} of ${PROXIES}`);
      await new Promise((r) => setTimeout(r, 300));
      log(
        `  [ads10k-push] bare: first after ${Math.min(...bareLatencies).toFixed(1)} ms, p50 ${percentile(bareLatencies, 50).toFixed(1)} ms, CPU ${cpuMsOf(bare?.proc.pid as number) - cpu0} ms (until 300 ms after the last)`,
      );
      return percentile(bareLatencies, 99);
    };
    await barePush();
    await new Promise((r) => setTimeout(r, 500));
    const barePerStream = ((await heapAfterGc(bareInspect)) - bareNone) / PROXIES / 1024;
    figures.push(
      await measureFigure(
        {
          name: 'ads10k-memory',
          figure: 'heap growth per connected proxy after GC (KB), 10,000 connected (baseline: bare grpc-js)',
          target: 5,
          higherIsBetter: false,
          warmUp: false,
          gate: 'ours',
        },
        async () => ({ ours: perProxy.shift() as number, baseline: barePerStream }),
        { runs: heaps.length, log },
      ),
    );
    figures[figures.length - 1].note =
      `heap with none connected ${median(heaps.map((h) => h.none / 2 ** 20)).toFixed(1)} MiB, with 10,000 ${median(heaps.map((h) => h.all / 2 ** 20)).toFixed(1)} MiB (medians over the storm runs); the bare grpc-js server holds ${barePerStream.toFixed(2)} KB per stream (its call objects, one response sent)`;

    if (want('ads10k-push')) {
      const server = ours as Started;
      const base = `http://127.0.0.1:${(server.ready.apiPort ?? server.ready.port) as number}`;
      let value = 0;
      const putMs: number[] = [];
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
        const cpu0 = cpuMsOf(server.proc.pid as number);
        const start = performance.now();
        putMs.push(
          await put(base, `/meshes/${MESH}/timeouts/bench-all`, {
            type: 'Timeout',
            mesh: MESH,
            name: 'bench-all',
            sources: [{ match: { [SVC]: '*' } }],
            destinations: [{ match: { [SVC]: 'backend' } }],
            conf: { grpc: { maxStreamDuration: `${1000 + ++value}ms` } },
          }),
        );
        await Promise.race([all, new Promise((r) => setTimeout(r, 20_000))]);
        if (latencies.length < PROXIES)
          throw new Error(`only ${latencies.length} of ${PROXIES} got the push`);
        await new Promise((r) => setTimeout(r, 300));
        log(
          `  [ads10k-push] first Listener after ${Math.min(...latencies).toFixed(1)} ms, p50 ${percentile(latencies, 50).toFixed(1)} ms, mesh-cp CPU ${cpuMsOf(server.proc.pid as number) - cpu0} ms (until 300 ms after the last)`,
        );
        return percentile(latencies, 99);
      };
      log(
        'ads10k-push: a Timeout on every client, p99 PUT-to-Listener over 10,000; bare push of the same bytes',
      );
      const oursP99s: number[] = [];
      const pushRuns = opts.quick ? 1 : 5;
      const worst = (): number => Math.max(...oursP99s.slice(-pushRuns));
      figures.push(
        await measureFigure(
          {
            name: 'ads10k-push',
            figure: 'p99 ms, a mesh-wide Timeout change to 10,000 proxies (ratio: bare push p99 ÷ ours)',
            target: 0.6,
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
        `every counted run's p99 ≤ 1000 ms: ${worst() <= 1000 ? 'yes' : 'no'} (largest ${worst().toFixed(1)} ms); the PUT's round trip p50 ${percentile(putMs, 50).toFixed(1)} ms; each client ACKs on receipt`;
    }
    for (const s of [...bareStreams, trigger]) s.cancel();
    for (const c of bareClients) c.close();
  } finally {
    await stopOurs();
    await bare?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
  return figures;
}
