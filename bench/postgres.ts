// The PostgreSQL scenarios, each beside a bare `pg` floor measured in the same runs, on
// the machine's PostgreSQL (bench/lib/postgres.ts: every server gets a database of its own, created
// and dropped here). `pgFigures()` returns figures shaped like bench/run.ts's.
//   put-durable-pg      durable PUTs on mesh-cp with `store.type: postgres` vs bare fastify + `pg`
//                       inserting the same batches (bench/baselines/pg-floor.ts); mesh-cp on LevelDB
//                       under the same load in the note
//   pg-propagation      two instances on one database: PUT on A until B's /_events stream carries it,
//                       vs a bare LISTEN/NOTIFY round trip (bench/baselines/pg-notify.ts)
//   pg-three-instances  the PUT load spread over three instances on one database vs all of it on one
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import { dataplane } from './fixtures.js';
import type { BenchDatabase } from './lib/postgres.js';
import { createBenchDatabase, pgStoreEnv } from './lib/postgres.js';
import type { LoadResult, Started } from './lib/processes.js';
import { cpuMsOf, runToEnd, startMeshCp, startTsBaseline } from './lib/processes.js';
import type { PutLoad, TurnLoad } from './lib/put-load.js';
import type { FigureSpec, GroupOptions } from './lib/measure.js';
import { groupSelection, measureFigure } from './lib/measure.js';
import type { Figure } from './lib/report.js';
import { median, percentile } from './lib/stats.js';

/** The durable PUT loads (bench/lib/put-load.ts) and their total connections. */
export interface PgGroupOptions extends GroupOptions {
  /** The load of pg-three-instances (several loads side by side). */
  putLoad: PutLoad;
  /** The loads of put-durable-pg's servers, taken in turns; `turnsNote` says how, for its note. */
  turnLoad: TurnLoad;
  turnsNote: string;
  connections: number;
}

const DATAPLANES = '/meshes/default/dataplanes/';

/** Runs the PostgreSQL scenarios (or those `only` names a prefix of) and returns their figures. */
export async function pgFigures(opts: PgGroupOptions): Promise<Figure[]> {
  const { log, want } = groupSelection(opts);
  const names = ['put-durable-pg', 'pg-propagation', 'pg-three-instances'];
  if (!names.some(want)) return [];
  // Runs of request rates: five, as put-durable-etcd (two or more servers on two cores swing further
  // between runs than one against a Map); the propagation percentiles: three, as the zone latencies.
  const LOAD_RUNS = opts.quick ? 1 : 5;
  const RUNS = opts.quick ? 1 : 3;
  const figures: Figure[] = [];
  const dirs: string[] = [];
  const databases: BenchDatabase[] = [];
  const tempDir = (p: string): string => {
    const d = mkdtempSync(join(tmpdir(), `mesh-bench-pg-${p}-`));
    dirs.push(d);
    return d;
  };
  const database = async (): Promise<BenchDatabase> => {
    const db = await createBenchDatabase();
    databases.push(db);
    return db;
  };
  /** mesh-cp with its log in database `db` (its data dir, unused by the log, in a temp dir). */
  const onPg = (db: BenchDatabase): Promise<Started> => startMeshCp(tempDir('data'), pgStoreEnv(db.name));
  const figure = async (
    spec: FigureSpec,
    runs: number,
    measure: () => Promise<{ ours: number; baseline: number | null }>,
  ): Promise<Figure> => {
    const f = await measureFigure(spec, measure, { runs, log });
    figures.push(f);
    return f;
  };
  const stopAll = (servers: Started[]): Promise<unknown> => Promise.all(servers.map((s) => s.stop()));
  const assert2xx = (what: string, results: Record<string, LoadResult>): void => {
    const bad = Object.entries(results).filter(([, r]) => r.non2xx > 0);
    if (bad.length > 0)
      throw new Error(
        `${what}: PUT answers not 2xx: ${bad.map(([k, r]) => `${k} ${r.non2xx} (by status ${JSON.stringify(r.statusCodes)})`).join(', ')}`,
      );
  };

  try {
    if (want('put-durable-pg')) {
      log(
        'put-durable-pg: the same durable PUTs on mesh-cp on PostgreSQL, on LevelDB, and on a bare pg floor',
      );
      const runs: Array<Record<'pg' | 'level' | 'floor', LoadResult>> = [];
      const f = await figure(
        {
          name: 'put-durable-pg',
          figure: 'req/s, mesh-cp on PostgreSQL vs bare fastify + pg inserting the same batches',
          target: 0.7,
          higherIsBetter: true,
          warmUp: false,
        },
        LOAD_RUNS,
        async () => {
          // Fresh servers and databases each run, as put-durable (the first pass creates).
          const [pgDb, floorDb] = [await database(), await database()];
          const servers: Started[] = [];
          try {
            servers.push(await onPg(pgDb), await startMeshCp(tempDir('level')));
            servers.push(await startTsBaseline('bench/baselines/pg-floor.ts', [floorDb.name]));
            const [pg, level, floor] = await opts.turnLoad([
              { server: servers[0], prefix: DATAPLANES },
              { server: servers[1], prefix: DATAPLANES },
              { server: servers[2], prefix: '/dp/' },
            ]);
            const run = { pg, level, floor };
            assert2xx('put-durable-pg', run);
            runs.push(run);
            return { ours: run.pg.rps, baseline: run.floor.rps };
          } finally {
            await stopAll(servers);
            await Promise.all([pgDb.drop(), floorDb.drop()]);
          }
        },
      );
      const counted = runs.slice(-LOAD_RUNS);
      const m = (pick: (r: (typeof runs)[number]) => number, digits = 0): string =>
        median(counted.map(pick)).toFixed(digits);
      f.note =
        `mesh-cp on LevelDB under the same load in the same runs: ${m((r) => r.level.rps)} req/s; PostgreSQL ÷ LevelDB ${m((r) => r.pg.rps / r.level.rps, 2)}; ` +
        `latency p50/p99 ms PostgreSQL ${m((r) => r.pg.p50, 1)}/${m((r) => r.pg.p99, 1)}, LevelDB ${m((r) => r.level.p50, 1)}/${m((r) => r.level.p99, 1)}, floor ${m((r) => r.floor.p50, 1)}/${m((r) => r.floor.p99, 1)} ` +
        `(medians; a run's p50 the median of its slices', its p99 the highest; floor: bench/baselines/pg-floor.ts, one statement per group commit on one connection: the head row moved, the batch's sha256-chained rows inserted into mesh-cp's tables, a pg_notify); ${opts.turnsNote}`;
    }

    if (want('pg-propagation')) await propagation();

    if (want('pg-three-instances')) {
      log('pg-three-instances: the PUT load spread over three instances on one database vs all on one');
      const c = opts.connections;
      const shares = [0, 1, 2].map((k) => Math.floor(c / 3) + (k < c % 3 ? 1 : 0));
      /** The three loads side by side, the k-th on `targets[k]` with its share of connections and data planes. */
      const spread = async (targets: Started[]): Promise<LoadResult[]> =>
        Promise.all(
          targets.map((t, k) => opts.putLoad(t, DATAPLANES, { connections: shares[k], part: [k, 3] })),
        );
      /** The loads, and the mesh-cp CPU (ms, all instances) per acknowledged write. */
      const runs: Array<{ three: LoadResult[]; one: LoadResult[]; cpuThree: number; cpuOne: number }> = [];
      /** `loads` on `targets`, with the CPU the distinct instances used per write meanwhile. */
      const measured = async (targets: Started[]): Promise<{ loads: LoadResult[]; cpu: number }> => {
        const pids = [...new Set(targets.map((t) => t.proc.pid as number))];
        const before = pids.map(cpuMsOf);
        const loads = await spread(targets);
        const used = pids.reduce((sum, pid, i) => sum + cpuMsOf(pid) - before[i], 0);
        return { loads, cpu: used / loads.reduce((n, l) => n + l.total, 0) };
      };
      const f = await figure(
        {
          name: 'pg-three-instances',
          figure: 'req/s, PUTs over three instances on one database vs one instance',
          target: 1,
          higherIsBetter: true,
          reportOnly: true,
        },
        LOAD_RUNS,
        async () => {
          const [threeDb, oneDb] = [await database(), await database()];
          const servers: Started[] = [];
          try {
            for (let i = 0; i < 3; i++) servers.push(await onPg(threeDb));
            servers.push(await onPg(oneDb));
            const one = servers[3];
            const three = await measured(servers.slice(0, 3));
            const single = await measured([one, one, one]);
            const run = { three: three.loads, one: single.loads, cpuThree: three.cpu, cpuOne: single.cpu };
            assert2xx('pg-three-instances', {
              ...Object.fromEntries(run.three.map((r, k) => [`instance ${k + 1} of 3`, r])),
              ...Object.fromEntries(run.one.map((r, k) => [`load ${k + 1} on one`, r])),
            });
            runs.push(run);
            const sum = (rs: LoadResult[]): number => rs.reduce((s, r) => s + r.rps, 0);
            return { ours: sum(run.three), baseline: sum(run.one) };
          } finally {
            await stopAll(servers);
            await Promise.all([threeDb.drop(), oneDb.drop()]);
          }
        },
      );
      const counted = runs.slice(-LOAD_RUNS);
      const per = [0, 1, 2].map((k) => median(counted.map((r) => r.three[k].rps)).toFixed(0));
      const p99 = (pick: (r: (typeof runs)[number]) => LoadResult[]): string =>
        median(counted.map((r) => Math.max(...pick(r).map((l) => l.p99)))).toFixed(1);
      f.note =
        `reported beside one instance's figure, not gated; ${c} connections in both, as three loads of ${shares.join('/')} over disjoint thirds of the 2,000 data planes, ` +
        `each on its own instance or all three on the one; per instance ${per.join(' / ')} req/s; worst load's p99 ms three ${p99((r) => r.three)}, one ${p99((r) => r.one)}; ` +
        `mesh-cp CPU per write (all instances, /proc) three ${median(counted.map((r) => r.cpuThree)).toFixed(2)} ms, one ${median(counted.map((r) => r.cpuOne)).toFixed(2)} ms (medians of the same runs)`;
    }
  } finally {
    await Promise.allSettled(databases.map((db) => db.drop()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
  return figures;

  /** pg-propagation: instances A and B on one database, the worker writing on A and reading B's stream. */
  async function propagation(): Promise<void> {
    log(
      'pg-propagation: PUT on instance A until instance B streams it, vs a bare pg LISTEN/NOTIFY round trip',
    );
    const rate = 100;
    const count = opts.quick ? 200 : 500;
    const warmupSeconds = opts.quick ? 0.5 : 1;
    const db = await database();
    const notifyDb = await database();
    const a = await onPg(db);
    const b = await onPg(db).catch(async (error: unknown) => {
      await a.stop();
      throw error;
    });
    const url = (s: Started): string => `http://127.0.0.1:${s.ready.apiPort as number}`;
    const work = tempDir('propagation');
    const runs: Array<{ afterAck: number[]; rtts: number[]; notify: number[]; ours: number[] }> = [];
    let run = 0;
    try {
      const f = await figure(
        {
          name: 'pg-propagation',
          figure: 'p99 ms from a PUT sent to instance A to its event on B’s /_events stream',
          target: 100,
          higherIsBetter: false,
          gate: 'ours',
        },
        RUNS,
        async () => {
          const first = 1_000_000 + run++ * count;
          const dps = Array.from({ length: count }, (_, i) => {
            const { creationTime: _c, modificationTime: _m, ...body } = dataplane(first + i);
            return body;
          });
          const bodies = dps.map((d) => JSON.stringify(d));
          const file = join(work, `run-${run}.json`);
          writeFileSync(
            file,
            JSON.stringify({
              writeUrl: url(a),
              watchUrl: url(b),
              rate,
              warmupSeconds,
              paths: dps.map((d) => `${DATAPLANES}${d.name}`),
              bodies,
            }),
          );
          const ours = (await runToEnd('node', ['bench/lib/propagation-worker.mjs', file])).out as {
            lags: Array<number | null>;
            afterAck: Array<number | null>;
            rtts: number[];
            missing: number;
          };
          if (ours.missing > 0)
            log(`  [pg-propagation] ${ours.missing} writes on A never reached B's stream`);
          const notifyFile = join(work, `notify-${run}.json`);
          writeFileSync(notifyFile, JSON.stringify({ database: notifyDb.name, rate, warmupSeconds, bodies }));
          const bare = (
            await runToEnd('node', ['--import', 'tsx', 'bench/baselines/pg-notify.ts', notifyFile])
          ).out as { lags: Array<number | null> };
          const finite = (xs: Array<number | null>): number[] => xs.map((x) => x ?? Infinity);
          runs.push({
            ours: finite(ours.lags),
            afterAck: finite(ours.afterAck),
            rtts: ours.rtts,
            notify: finite(bare.lags),
          });
          return { ours: percentile(finite(ours.lags), 99), baseline: percentile(finite(bare.lags), 99) };
        },
      );
      const counted = runs.slice(-RUNS);
      const m = (pick: (r: (typeof runs)[number]) => number[], p: number): string =>
        median(counted.map((r) => percentile(pick(r), p))).toFixed(1);
      f.note =
        `${count} writes at ${rate}/s per run; p50 ${m((r) => r.ours, 50)} ms (bare LISTEN/NOTIFY p50 ${m((r) => r.notify, 50)}, p99 ${m((r) => r.notify, 99)} ms: insert + pg_notify in one statement on one connection, received on another); ` +
        `from A's answer to B's event p50/p99 ${m((r) => r.afterAck, 50)}/${m((r) => r.afterAck, 99)} ms; the PUT's round trip on A p50/p99 ${m((r) => r.rtts, 50)}/${m((r) => r.rtts, 99)} ms (medians of the same runs)`;
    } finally {
      await stopAll([a, b]);
    }
  }
}
