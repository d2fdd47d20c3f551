// `npm run bench [-- --quick] [-- --only NAME]`: every figure beside a baseline measured in the same
// run, as the median of per-run ratios over interleaved runs (A B A B A B). See bench/README.md.
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { cpus, release, tmpdir, totalmem } from 'node:os';
import { join } from 'node:path';
import { dataplane } from './fixtures.js';
import { buildStore } from './fixtures.js';
import { configHistoryFigures } from './config-history.js';
import { engineFigures } from './engine.js';
import { guiFigures } from './gui.js';
import { inspectFigures } from './inspect.js';
import { meshctlFigures } from './meshctl.js';
import { changeSetFigures } from './change-sets.js';
import { pgFigures } from './postgres.js';
import { writeSnapshot } from './snapshot-fixture.js';
import { xdsFigures } from './xds.js';
import { xds10kFigures } from './xds-10k.js';
import { zoneFigures } from './zones.js';
import { startEtcd } from './lib/etcd.js';
import type { LoadResult, Started } from './lib/processes.js';
import type { TurnLoad } from './lib/put-load.js';
import { createPutLoad, createTurnLoad } from './lib/put-load.js';
import {
  load,
  ROOT,
  rssOf,
  runToEnd,
  settle,
  startMeshCp,
  startProcess,
  startTsBaseline,
} from './lib/processes.js';
import type { FigureSpec } from './lib/measure.js';
import { measureFigure } from './lib/measure.js';
import type { Figure } from './lib/report.js';
import { formatTable } from './lib/report.js';
import type { FloorRun } from './lib/stats.js';
import { floorMedians, median, percentile } from './lib/stats.js';

const args = process.argv.slice(2);
const QUICK = args.includes('--quick');
const onlyIdx = args.indexOf('--only');
const ONLY = onlyIdx >= 0 ? args[onlyIdx + 1] : undefined;
// --quick is a smoke check (under 2 minutes): one run of each figure after its warm-up, as bench/zones.ts.
const RUNS = QUICK ? 1 : 3;
// Request-rate figures: more, shorter runs. The machine's throughput drifts up to 2x within a
// minute, and a median of five 3 s runs is steadier than one of three 4 s runs in the same time.
const LOAD_RUNS = QUICK ? 1 : 5;
const DURATION = QUICK ? 1 : 3;
// Each durable PUT run starts fresh servers. The servers a figure compares take their loads in turns
// (TURN_*, bench/lib/put-load.ts createTurnLoad, from 2026-11-27): each warmed with 5 s of the load,
// not counted (the first pass, which creates, and mesh-cp's first seconds, before its JIT has made it
// warm: it reaches its rate after ~4 s of load, a baseline within one), then two rounds of 2 s
// slices in mirrored order, A B then B A (each slice after 1 s of its own load process, not
// counted), so that 4 s are counted of each, as before, and the machine's drift meets both alike.
// Before: each server 4 s in a row after 2 s not counted (PUT_WARMUP, still the load of
// pg-three-instances), and before that with nothing not counted.
const PUT_DURATION = QUICK ? 1 : 4;
const PUT_WARMUP = QUICK ? 0 : 2;
const TURN_WARMUP = QUICK ? 1 : 5;
const TURN_SLICE = QUICK ? 1 : PUT_DURATION / 2;
const TURN_SLICE_WARMUP = QUICK ? 0 : 1;
const TURN_ROUNDS = QUICK ? 1 : 2;
// put-durable-etcd: five runs, as the read rates, since two servers on two cores swing further
// between runs than one against a Map (0.4–1.6 per run in its first three-run medians).
const ETCD_RUNS = QUICK ? 1 : 5;
const CONNECTIONS = 50;
const N = 100_000;
const STARTUP_ENTRIES = QUICK ? 200_000 : 1_000_000;

const figures: Figure[] = [];
const tmp: string[] = [];
const t0 = performance.now();
/** Progress on stderr, each line with the seconds since the bench started. */
const log = (s: string): void => {
  process.stderr.write(`[${((performance.now() - t0) / 1000).toFixed(0).padStart(4)} s] ${s}\n`);
};
const tempDir = (p: string): string => {
  const d = mkdtempSync(join(tmpdir(), `mesh-bench-${p}-`));
  tmp.push(d);
  return d;
};

/** Measures a figure with `runs` interleaved runs (RUNS unless told) and adds it to the report. */
async function figure(
  spec: FigureSpec,
  measure: () => Promise<{ ours: number; baseline: number | null }>,
  runs = RUNS,
): Promise<void> {
  figures.push(await measureFigure(spec, measure, { runs, log }));
}

const want = (name: string): boolean => ONLY === undefined || name.startsWith(ONLY) || ONLY.startsWith(name);
/** Whether one figure of a group is selected: `--only` is its name or a prefix of it. */
const selected = (name: string): boolean => ONLY === undefined || name.startsWith(ONLY);

// ---------------------------------------------------------------- shared fixtures

let store100k: string | undefined;
async function big(): Promise<string> {
  if (!store100k) {
    store100k = tempDir('100k');
    log(`building a store of ${N} data planes and 10,000 policies…`);
    const t = performance.now();
    await buildStore(store100k, { dataplanes: N, policies: 10_000 });
    log(`  built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
  }
  return store100k;
}

async function withServers<T>(fn: (ours: Started, base: Started) => Promise<T>): Promise<T> {
  const dir = await big();
  log('starting mesh-cp on the 100k store and the bare fastify baseline…');
  const ours = await startMeshCp(dir);
  const base = await startTsBaseline('bench/baselines/map-server.ts', [String(N)]);
  // The store has no snapshot: mesh-cp writes one once it is quiet after start-up; not in a run.
  const t = performance.now();
  await settle([ours.proc.pid as number, base.proc.pid as number]);
  log(`  idle after ${((performance.now() - t) / 1000).toFixed(1)} s (mesh-cp wrote its first snapshot)`);
  try {
    return await fn(ours, base);
  } finally {
    await ours.stop();
    await base.stop();
  }
}

const portOf = (s: Started): number => (s.ready.apiPort ?? s.ready.port) as number;

// ---------------------------------------------------------------- scenarios

async function readScenarios(): Promise<void> {
  if (!want('get-one') && !want('page') && !want('overview-tag') && !want('memory')) return;
  await withServers(async (ours, base) => {
    const o = `http://127.0.0.1:${portOf(ours)}`;
    const b = `http://127.0.0.1:${portOf(base)}`;
    const names = Array.from({ length: 100 }, (_, i) => dataplane((i * 997) % N).name);
    if (want('get-one')) {
      log('get-one: GET one data plane by name, 100k stored, 50 connections');
      await figure(
        { name: 'get-one', figure: 'req/s', target: 0.75, higherIsBetter: true },
        async () => ({
          ours: (
            await load({
              url: o,
              connections: CONNECTIONS,
              duration: DURATION,
              paths: names.map((n) => `/meshes/default/dataplanes/${n}`),
            })
          ).rps,
          baseline: (
            await load({
              url: b,
              connections: CONNECTIONS,
              duration: DURATION,
              paths: names.map((n) => `/dp/${n}`),
            })
          ).rps,
        }),
        LOAD_RUNS,
      );
    }
    if (want('page')) {
      const page = async (url: string) =>
        (await load({ url, connections: CONNECTIONS, duration: DURATION })).rps;
      for (const offset of [0, 50_000, 99_900]) {
        log(`page-${offset}: GET a page of 100 data planes at offset ${offset} of 100k`);
        await figure(
          { name: `page-${offset}`, figure: 'req/s', target: 1.5, higherIsBetter: true },
          async () => ({
            ours: await page(`${o}/meshes/default/dataplanes?size=100&offset=${offset}`),
            baseline: await page(`${b}/page?offset=${offset}`),
          }),
          LOAD_RUNS,
        );
      }
      // Its own interleaved runs (offset 0, then 99,900, on the same server, each run), so that
      // drift over the minutes the page figures take does not pass for a cost of depth.
      log('page-depth: the first page against the deepest, interleaved');
      await figure(
        {
          name: 'page-depth',
          figure: 'req/s at offset 0 ÷ at 99,900 (ours)',
          target: 1.3,
          higherIsBetter: false,
          ratioOf: (deep, first) => first / deep,
        },
        async () => ({
          baseline: await page(`${o}/meshes/default/dataplanes?size=100&offset=0`),
          ours: await page(`${o}/meshes/default/dataplanes?size=100&offset=99900`),
        }),
        LOAD_RUNS,
      );
    }
    if (want('overview-tag')) {
      log('overview-tag: dataplanes+insights page of 100 with a tag filter matching 1% of 100k');
      await figure(
        { name: 'overview-tag', figure: 'req/s', target: 0.8, higherIsBetter: true },
        async () => ({
          ours: (
            await load({
              url: `${o}/meshes/default/dataplanes+insights?tag=team:t5&size=100`,
              connections: CONNECTIONS,
              duration: DURATION,
            })
          ).rps,
          baseline: (await load({ url: `${b}/overviews`, connections: CONNECTIONS, duration: DURATION })).rps,
        }),
        LOAD_RUNS,
      );
    }
    if (want('memory')) {
      log('memory: RSS growth per data plane, 100k data planes and 10k policies');
      await figure(
        {
          name: 'memory',
          figure: 'RSS growth per data plane (KB)',
          target: 3,
          higherIsBetter: false,
          warmUp: false,
        },
        async () => {
          const empty = await startMeshCp(tempDir('empty'));
          await new Promise((r) => setTimeout(r, 1000));
          const rssEmpty = rssOf(empty.proc.pid as number);
          await empty.stop();
          const rssBig = rssOf(ours.proc.pid as number);
          return { ours: (rssBig - rssEmpty) / N / 1024, baseline: null };
        },
      );
    }
  });
}

async function growthScenario(): Promise<void> {
  if (!want('growth')) return;
  log('growth: p50 of GET one and of a list page at 1k, 10k and 100k stored');
  const sizes = [1_000, 10_000, N];
  const servers: Record<number, Started> = {};
  for (const size of sizes) {
    const dir = size === N ? await big() : tempDir(`g${size}`);
    if (size !== N) await buildStore(dir, { dataplanes: size });
    servers[size] = await startMeshCp(dir);
  }
  await settle(Object.values(servers).map((s) => s.proc.pid as number));
  /** µs of one keep-alive request, body read. */
  const timed = async (url: string): Promise<number> => {
    const t = performance.now();
    const res = await fetch(url);
    await res.arrayBuffer();
    return (performance.now() - t) * 1000;
  };
  const count = QUICK ? 300 : 1500;
  try {
    for (const [label, path] of [
      ['growth-get', (size: number) => `/meshes/default/dataplanes/${dataplane(Math.floor(size / 2)).name}`],
      ['growth-list', (size: number) => `/meshes/default/dataplanes?size=100&offset=${Math.floor(size / 2)}`],
    ] as const) {
      await figure(
        { name: label, figure: 'p50 µs at 100k vs at 1k', target: 1.3, higherIsBetter: false },
        async () => {
          // Sequential requests, one to each store size in turn, so that the machine's drift over
          // the run (2x swings here) falls on every size alike rather than on the one measured last.
          const urls = sizes.map((size) => `http://127.0.0.1:${portOf(servers[size])}${path(size)}`);
          const times = sizes.map((): number[] => []);
          for (let i = 0; i < count; i++) {
            for (const [j, url] of urls.entries()) times[j].push(await timed(url));
          }
          return { ours: percentile(times[2], 50), baseline: percentile(times[0], 50) };
        },
      );
    }
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
}

/** The durable PUT load of pg-three-instances (bench/postgres.ts). */
const putLoad = createPutLoad({ connections: CONNECTIONS, duration: PUT_DURATION, warmup: PUT_WARMUP });
/** The durable PUT loads of servers compared: put-durable, put-durable-etcd, put-durable-pg. */
const turnLoad = createTurnLoad({
  connections: CONNECTIONS,
  warmup: TURN_WARMUP,
  slice: TURN_SLICE,
  sliceWarmup: TURN_SLICE_WARMUP,
  rounds: TURN_ROUNDS,
});
/** How a compared durable PUT load is run, for the figures' notes. */
const TURNS_NOTE = `${CONNECTIONS} connections, each server warmed with ${TURN_WARMUP} s of the load not counted, then ${TURN_ROUNDS * TURN_SLICE} s counted in ${TURN_SLICE} s slices taken in turns in mirrored order, each after ${TURN_SLICE_WARMUP} s of its own not counted`;

async function putScenario(): Promise<void> {
  if (!want('put')) return;
  if (selected('put-durable')) await putDurable(turnLoad);
  if (selected('put-durable-etcd')) await putDurableEtcd(turnLoad);
}

async function putDurable(turns: TurnLoad): Promise<void> {
  log('put-durable: durable PUT (create, then update) of data planes, 50 concurrent writers');
  // The durable floor of the stack (bench/baselines/durable-floor.ts), loaded in turn with the other
  // two: shown beside the figure so a reader sees how much of the gap the log itself costs.
  const floors: FloorRun[] = [];
  await figure(
    { name: 'put-durable', figure: 'req/s', target: 0.75, higherIsBetter: true, warmUp: false },
    async () => {
      const servers = [
        await startMeshCp(tempDir('put')),
        await startTsBaseline('bench/baselines/map-server.ts', ['0']),
        await startTsBaseline('bench/baselines/durable-floor.ts', [tempDir('floor')]),
      ];
      try {
        const [o, bl, fl] = await turns([
          { server: servers[0], prefix: '/meshes/default/dataplanes/' },
          { server: servers[1], prefix: '/dp/' },
          { server: servers[2], prefix: '/dp/' },
        ]);
        if (o.non2xx > 0 || bl.non2xx > 0 || fl.non2xx > 0)
          throw new Error(`PUT answers not 2xx: ours ${o.non2xx}, baseline ${bl.non2xx}, floor ${fl.non2xx}`);
        floors.push({ floor: fl.rps, baseline: bl.rps });
        return { ours: o.rps, baseline: bl.rps };
      } finally {
        for (const s of servers) await s.stop();
      }
    },
  );
  const floor = floorMedians(floors, RUNS);
  figures[figures.length - 1].note =
    `the stack's durable floor (bare fastify + the same schema + a sha256-chained log in classic-level, one synced batch per group commit, no auth/hooks/projections; bench/baselines/durable-floor.ts): ${floor.rate.toFixed(0)} req/s, ${floor.ratio.toFixed(2)}× the baseline (median of the same runs); ${TURNS_NOTE}`;
}

// A peer store: etcd 3.4, the store behind Kubernetes, taking the same durable writes
// through its HTTP/JSON gateway. Each run starts both fresh (mesh-cp's first pass creates, as in
// put-durable; etcd keeps every revision), then loads them in turns.
async function putDurableEtcd(turns: TurnLoad): Promise<void> {
  log('put-durable-etcd: the same durable PUTs on mesh-cp (LevelDB) and on etcd 3.4 (/v3/kv/put)');
  const runs: Array<{ ours: LoadResult; etcd: LoadResult }> = [];
  let version = '';
  await figure(
    {
      name: 'put-durable-etcd',
      figure: 'req/s, mesh-cp on LevelDB vs etcd 3.4 /v3/kv/put',
      target: 1,
      higherIsBetter: true,
      warmUp: false,
    },
    async () => {
      const ours = await startMeshCp(tempDir('put-etcd'));
      const etcd = await startEtcd(tempDir('etcd'));
      version = etcd.version;
      try {
        const [o, e] = await turns([
          { server: ours, prefix: '/meshes/default/dataplanes/' },
          { server: etcd, prefix: '/mesh/default/dataplanes/', etcdPut: true },
        ]);
        if (o.non2xx > 0 || e.non2xx > 0)
          throw new Error(`PUT answers not 2xx: mesh-cp ${o.non2xx}, etcd ${e.non2xx}`);
        runs.push({ ours: o, etcd: e });
        return { ours: o.rps, baseline: e.rps };
      } finally {
        await ours.stop();
        await etcd.stop();
      }
    },
    ETCD_RUNS,
  );
  const counted = runs.slice(-ETCD_RUNS);
  const ms = (pick: (r: (typeof runs)[number]) => number): string => median(counted.map(pick)).toFixed(1);
  figures[figures.length - 1].note =
    `etcd ${version}, one member in a temp dir on free ports, default durability (its WAL is fsynced before a write is answered; 3.4 has no switch to turn that off), through its HTTP/JSON gateway POST /v3/kv/put with the same bodies base64 as values under /mesh/default/dataplanes/<name>; ${TURNS_NOTE}; latency p50/p99 ms mesh-cp ${ms((r) => r.ours.p50)}/${ms((r) => r.ours.p99)}, etcd ${ms((r) => r.etcd.p50)}/${ms((r) => r.etcd.p99)} (medians of the same runs; each run's p50 the median of its slices', its p99 the highest)`;
}

async function insightLagScenario(): Promise<void> {
  if (!want('insight-lag')) return;
  log('insight-lag: MeshInsight counts under 1,000 writes/s, write-to-insight p99');
  // One server for the warm-up and the timed runs, as for the request figures: a process that has
  // just started runs cold code for its first second or two, and this figure is about steady state.
  const ours = await startMeshCp(tempDir('lag'));
  const seconds = QUICK ? 2 : 5;
  const rate = 1000;
  let run = 0;
  try {
    await figure(
      { name: 'insight-lag', figure: 'p99 ms from write to insight', target: 1000, higherIsBetter: false },
      async () => {
        const first = run++ * rate * seconds;
        const dps = Array.from({ length: rate * seconds }, (_, i) => {
          const { creationTime: _c, modificationTime: _m, ...body } = dataplane(first + i);
          return body;
        });
        const file = join(tempDir('lag-load'), 'load.json');
        writeFileSync(
          file,
          JSON.stringify({
            url: `http://127.0.0.1:${portOf(ours)}`,
            rate,
            seconds,
            // The client is a new process each run: its own cold start is not the server's lag.
            warmupSeconds: QUICK ? 0.5 : 1,
            paths: dps.map((d) => `/meshes/default/dataplanes/${d.name}`),
            bodies: dps.map((d) => JSON.stringify(d)),
          }),
        );
        // The writer and poller run in a process of their own, like the other loads.
        const { out } = await runToEnd('node', ['bench/lib/lag-worker.mjs', file]);
        const lags = (out.lags as Array<number | null>).map((l) => l ?? Infinity);
        return { ours: percentile(lags, 99), baseline: null };
      },
    );
  } finally {
    await ours.stop();
  }
}

async function startupScenarios(): Promise<void> {
  if (want('startup-empty')) {
    log('startup-empty: ms to ready on an empty store vs a bare fastify+level+grpc-js process');
    await figure(
      { name: 'startup-empty', figure: 'ms to ready', target: 1.5, higherIsBetter: false, warmUp: false },
      async () => {
        const ours = await startMeshCp(tempDir('start'));
        await ours.stop();
        const bare = await startProcess('node', ['bench/baselines/bare-start.mjs'], {}, ['ready']);
        await bare.stop();
        return { ours: ours.ms, baseline: bare.ms };
      },
    );
  }
  if (want('startup-log') || want('startup-snapshot')) {
    const dir = tempDir('1m');
    log(
      `startup-log: building a log of ${STARTUP_ENTRIES.toLocaleString()} entries (100k data planes, updates)…`,
    );
    const t = performance.now();
    const entries = await buildStore(dir, { dataplanes: N, totalEntries: STARTUP_ENTRIES });
    log(`  built in ${((performance.now() - t) / 1000).toFixed(1)} s`);
    // The first start writes the signing keys; measure the starts after it. Snapshots off: this
    // figure is the replay of the whole log.
    const noSnapshot = { MESH_STORE_SNAPSHOT_EVERY: '0' };
    await (await startMeshCp(dir, noSnapshot)).stop();
    const total = entries + 4;
    if (want('startup-log')) {
      await figure(
        {
          name: 'startup-log',
          warmUp: false,
          figure: `entries/s to ready, ${total.toLocaleString()} entries, no snapshot`,
          target: 0.7,
          higherIsBetter: true,
        },
        async () => {
          const ours = await startMeshCp(dir, noSnapshot);
          await ours.stop();
          const raw = await runToEnd('node', ['bench/baselines/raw-scan.mjs', dir]);
          return { ours: (total / ours.ms) * 1000, baseline: ((raw.out.entries as number) / raw.ms) * 1000 };
        },
      );
    }
    if (want('startup-snapshot')) {
      const snap = await writeSnapshot(dir);
      log(
        `  snapshot of ${snap.resources} resources at revision ${snap.revision} written in ${snap.ms.toFixed(0)} ms`,
      );
      await figure(
        {
          name: 'startup-snapshot',
          warmUp: false,
          figure: `ms to ready, same log with a snapshot, vs an empty store`,
          target: 5,
          higherIsBetter: false,
        },
        async () => {
          const ours = await startMeshCp(dir);
          await ours.stop();
          const empty = await startMeshCp(tempDir('start'));
          await empty.stop();
          return { ours: ours.ms, baseline: empty.ms };
        },
      );
    }
  }
}

// ---------------------------------------------------------------- report

function report(): void {
  process.stdout.write(`${formatTable(figures)}\n`);
  for (const f of figures) if (f.note) process.stdout.write(`${f.name}: ${f.note}\n`);
  const machine = {
    cpu: cpus()[0]?.model ?? 'unknown',
    cores: cpus().length,
    memoryGiB: Math.round(totalmem() / 2 ** 30),
    node: process.version,
    kernel: release(),
  };
  mkdirSync(join(ROOT, 'bench', 'results'), { recursive: true });
  writeFileSync(
    join(ROOT, 'bench', 'results', 'latest.json'),
    `${JSON.stringify({ machine, at: new Date().toISOString(), quick: QUICK, scenarios: figures }, null, 2)}\n`,
  );
  log(`machine: ${machine.cpu}, ${machine.cores} cores, ${machine.memoryGiB} GiB, node ${machine.node}`);
  log('wrote bench/results/latest.json');
}

try {
  await readScenarios();
  await growthScenario();
  await putScenario();
  figures.push(
    ...(await pgFigures({
      quick: QUICK,
      only: ONLY,
      log,
      putLoad,
      turnLoad,
      turnsNote: TURNS_NOTE,
      connections: CONNECTIONS,
    })),
  );
  await insightLagScenario();
  await startupScenarios();
  figures.push(...(await inspectFigures({ quick: QUICK, only: ONLY, log })));
  figures.push(...(await engineFigures({ quick: QUICK, only: ONLY, log })));
  figures.push(...(await configHistoryFigures({ quick: QUICK, only: ONLY, log })));
  figures.push(...(await zoneFigures({ quick: QUICK, only: ONLY, log })));
  figures.push(...(await xdsFigures({ quick: QUICK, only: ONLY, log })));
  figures.push(...(await xds10kFigures({ quick: QUICK, only: ONLY, log })));
  figures.push(...(await meshctlFigures({ quick: QUICK, only: ONLY, log })));
  figures.push(...(await changeSetFigures({ quick: QUICK, only: ONLY, log })));
  figures.push(...(await guiFigures({ quick: QUICK, only: ONLY, log })));
  report();
  log(`done in ${((performance.now() - t0) / 1000).toFixed(0)} s`);
} finally {
  for (const d of tmp) rmSync(d, { recursive: true, force: true });
}
