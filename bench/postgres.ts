// The PostgreSQL scenarios (issue 19), each beside a bare `pg` floor measured in the same runs, on
// the machine's PostgreSQL (bench/lib/postgres.ts: every server gets a database of its own, created
// and dropped here). `pgFigures()` returns figures shaped like bench/run.ts's.
//   put-durable-pg      durable PUTs on mesh-cp with `store.type: postgres` vs bare fastify + `pg`
//                       inserting the same batches (bench/baselines/pg-floor.ts); mesh-cp on LevelDB
//                       under the same load in the note
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

import type { BenchDatabase } from './lib/postgres.js';
import { createBenchDatabase, pgStoreEnv } from './lib/postgres.js';
import type { LoadResult, Started } from './lib/processes.js';
import { startMeshCp, startTsBaseline } from './lib/processes.js';
import type { PutLoad } from './lib/put-load.js';
import type { FigureSpec, GroupOptions } from './lib/measure.js';
import { groupSelection, measureFigure } from './lib/measure.js';
import type { Figure } from './lib/report.js';
import { median } from './lib/stats.js';

/** The PUT load of put-durable (bench/lib/put-load.ts) and its total connections. */
export interface PgGroupOptions extends GroupOptions {
  putLoad: PutLoad;
  connections: number;
}

const DATAPLANES = '/meshes/default/dataplanes/';

/** Runs the PostgreSQL scenarios (or those `only` names a prefix of) and returns their figures. */
export async function pgFigures(opts: PgGroupOptions): Promise<Figure[]> {
  const { log, want } = groupSelection(opts);
  const names = ['put-durable-pg'];
  if (!names.some(want)) return [];
  // Runs of request rates: five, as put-durable-etcd (two or more servers on two cores swing further
  // between runs than one against a Map).
  const LOAD_RUNS = opts.quick ? 1 : 5;
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
      throw new Error(`${what}: PUT answers not 2xx: ${bad.map(([k, r]) => `${k} ${r.non2xx}`).join(', ')}`);
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
        },
        LOAD_RUNS,
        async () => {
          // Fresh servers and databases each run, as put-durable (the first pass creates).
          const [pgDb, floorDb] = [await database(), await database()];
          const servers: Started[] = [];
          try {
            servers.push(await onPg(pgDb), await startMeshCp(tempDir('level')));
            servers.push(await startTsBaseline('bench/baselines/pg-floor.ts', [floorDb.name]));
            const [pg, level, floor] = servers;
            const run = {
              pg: await opts.putLoad(pg, DATAPLANES),
              level: await opts.putLoad(level, DATAPLANES),
              floor: await opts.putLoad(floor, '/dp/'),
            };
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
        `(medians; floor: bench/baselines/pg-floor.ts, one statement moving the head row and inserting the batch's sha256-chained rows into mesh-cp's tables, per group commit, one connection)`;
    }
  } finally {
    await Promise.allSettled(databases.map((db) => db.drop()));
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
  return figures;
}
