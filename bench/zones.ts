// Multi-zone sync scenarios, each beside a bare @grpc/grpc-js stream of the same messages
// measured in the same run (bench/baselines/bare-sync.ts). Global runs in this process (so a burst
// of writes can be made faster than HTTP allows, and its commits timed exactly); zones run as
// `mesh-cp run` processes. `zoneFigures()` returns figures shaped like bench/run.ts's; run alone:
//   npm run build && node --import tsx bench/zones.ts [--quick] [--only NAME]
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { loadConfig } from '../src/config/load.js';
import type { ControlPlane } from '../src/runtime/control-plane.js';
import { startControlPlane } from '../src/runtime/control-plane.js';
import { registry } from '../src/resources/registry.js';
import { validSpec } from '../src/resources/validate.js';
import { dataplane, policy } from './fixtures.js';
import type { BareSync } from './baselines/bare-sync.js';
import { startBareSync } from './baselines/bare-sync.js';
import type { Started } from './lib/processes.js';
import { settle, startMeshCp } from './lib/processes.js';
import type { FigureSpec } from './lib/measure.js';
import { measureFigure, groupSelection, type GroupOptions } from './lib/measure.js';
import type { Figure } from './lib/report.js';
import { formatTable } from './lib/report.js';
import type { FloorRun } from './lib/stats.js';
import { floorMedians, median, percentile, workFloorMedians } from './lib/stats.js';

export type { Figure } from './lib/report.js';

const ACTOR = { name: 'bench', groups: ['mesh-system:admin'], address: 'local' };

const specOf = (r: Record<string, unknown>): Record<string, unknown> => {
  const { type: _t, mesh: _m, name: _n, creationTime: _c, modificationTime: _mt, ...spec } = r;
  return spec;
};

/**
 * Runs every zone scenario (or those `only` names a prefix of) and returns their figures. `quick`:
 * 2,000 entries instead of 10,000 and one timed run instead of three.
 */
export async function zoneFigures(opts: GroupOptions): Promise<Figure[]> {
  const { log, want } = groupSelection(opts);
  const N = opts.quick ? 2000 : 10_000;
  const RUNS = opts.quick ? 1 : 3;
  const SAMPLES = opts.quick ? 30 : 100;
  const figures: Figure[] = [];
  const names = [
    'zone-initial-sync',
    'zone-latency-down',
    'zone-latency-up',
    'zone-burst',
    'zone-resume',
    'zone-both-ways',
  ];
  if (!names.some(want)) return figures;
  const dirs: string[] = [];
  const procs: Started[] = [];
  const tempDir = (p: string): string => {
    const d = mkdtempSync(join(tmpdir(), `mesh-bench-zones-${p}-`));
    dirs.push(d);
    return d;
  };
  /** Interleaved runs with a warm-up, as bench/run.ts; ratios are "times better" both ways. */
  const figure = async (
    spec: FigureSpec & { gate: 'ours' | 'ratio' },
    measure: () => Promise<{ ours: number; baseline: number | null }>,
  ): Promise<void> => {
    const ratioOf = (o: number, b: number) => (spec.higherIsBetter ? o / b : b / o);
    figures.push(await measureFigure({ ratioOf, ...spec }, measure, { runs: RUNS, log }));
  };

  log('zones: starting Global in this process (LevelDB in a temp dir, TLS on the sync port)…');
  const gdir = tempDir('global');
  const global: ControlPlane = await startControlPlane(
    loadConfig({
      env: {
        MESH_MODE: 'global',
        MESH_STORE_LEVEL_PATH: gdir,
        MESH_API_SERVER_PORT: '0',
        MESH_API_SERVER_HTTPS_PORT: '0',
        MESH_DIAGNOSTICS_PORT: '0',
        MESH_XDS_SERVER_GRPC_PORT: '0',
        MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
      },
    }),
  );
  await global.defaultsReady;
  const caFile = join(gdir, 'tls', 'cert.pem');
  const bare: BareSync = await startBareSync(
    { key: readFileSync(join(gdir, 'tls', 'key.pem'), 'utf8'), cert: readFileSync(caFile, 'utf8') },
    caFile,
  );
  // The durable floor of a zone's apply: the same stream, its client writing each batch to
  // classic-level (synced) before the ack; and its work floor, which also validates, seals (hash
  // chain) and keeps each entry as a zone must. Shown beside zone-burst and zone-resume.
  const floorsWanted = want('zone-burst') || want('zone-resume');
  const tlsFiles = (): { key: string; cert: string } => ({
    key: readFileSync(join(gdir, 'tls', 'key.pem'), 'utf8'),
    cert: readFileSync(caFile, 'utf8'),
  });
  const durableBare: BareSync | undefined = floorsWanted
    ? await startBareSync(tlsFiles(), caFile, tempDir('durable-floor'))
    : undefined;
  const workBare: BareSync | undefined = floorsWanted
    ? await startBareSync(tlsFiles(), caFile, tempDir('work-floor'), true)
    : undefined;
  /** The note of a figure: the floors' medians over the counted runs. */
  const floorNote = (floors: FloorRun[]): string => {
    const floor = floorMedians(floors, RUNS);
    const work = workFloorMedians(floors, RUNS);
    const durable = `the durable floor (the same stream, each batch written to classic-level, synced, before its ack; bench/baselines/bare-sync-client.mjs): ${floor.rate.toFixed(0)} entries/s, ${floor.ratio.toFixed(2)}× the bare stream`;
    if (!work) return `${durable} (median of the same runs)`;
    return `${durable}; the work floor (the durable floor plus mesh-cp's validation, hash-chained entry and a Map of what it holds, per entry): ${work.rate.toFixed(0)} entries/s, ${work.ratio.toFixed(2)}× the bare stream (medians of the same runs)`;
  };
  const gUrl = `http://127.0.0.1:${global.ports.api}`;

  const token = async (zone: string): Promise<string> =>
    (await global.tokens.issue('zone', { zone, validFor: '24h' })).token;
  const startZone = async (name: string, dir: string): Promise<Started & { api: string; diag: string }> => {
    const z = await startMeshCp(dir, {
      MESH_MODE: 'zone',
      MESH_MULTIZONE_ZONE_NAME: name,
      MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: `grpcs://127.0.0.1:${global.ports.kds}`,
      MESH_MULTIZONE_ZONE_KDS_TOKEN: await token(name),
      MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE: caFile,
    });
    procs.push(z);
    return {
      ...z,
      api: `http://127.0.0.1:${z.ready.apiPort as number}`,
      diag: `http://127.0.0.1:${z.ready.diagnosticsPort as number}`,
    };
  };
  const revisionOf = async (diag: string): Promise<number> =>
    ((await (await fetch(`${diag}/ready`)).json()) as { revision: number }).revision;
  const until = async (check: () => Promise<boolean> | boolean, ms: number, what: string, every = 2) => {
    const end = performance.now() + ms;
    while (!(await check())) {
      if (performance.now() > end) throw new Error(`timed out: ${what}`);
      if (every > 0) await new Promise((r) => setTimeout(r, every));
    }
  };
  const connected = (z: { api: string }) =>
    until(
      async () =>
        ((await (await fetch(`${z.api}/`)).json()) as { zone?: { connected: boolean } }).zone?.connected ===
        true,
      20_000,
      'zone connected',
      10,
    );
  type Sub = {
    status: { total: Record<string, string> };
    sync: { globalToZone: { start: string; snapshotResources: number } };
  };
  const lastSub = (zone: string): Sub | undefined =>
    (global.status.zoneInsight(zone)?.subscriptions as Sub[] | undefined)?.at(-1);

  /** Writes `n` new traffic permissions on Global at once (group commit makes a burst of a few batches). */
  let written = 0;
  const burst = async (n: number): Promise<void> => {
    const base = written;
    written += n;
    await Promise.all(
      Array.from({ length: n }, (_, i) => {
        const p = policy(base + i);
        return global.commands.put({
          kind: 'TrafficPermission',
          mesh: 'default',
          name: p.name,
          spec: validSpec(registry.get('TrafficPermission'), { mesh: 'default', name: p.name }, specOf(p)),
          actor: ACTOR,
        });
      }),
    );
  };
  const resources = Array.from({ length: N }, (_, i) => Buffer.from(JSON.stringify(policy(i))));
  /** The pids a run waits to be idle: the zone's and the floors' clients (Global is in this process). */
  const quiet = (zonePid?: number): Promise<void> =>
    settle([...(zonePid ? [zonePid] : []), ...[durableBare, workBare].flatMap((b) => (b ? [b.pid] : []))]);
  /**
   * The entries/s of the bare stream sending `resources`, after recording its floors' in `floors`;
   * first waits for the zone `zonePid` (and Global, in this process) to finish what our run left.
   */
  const bareThenFloor = async (floors: FloorRun[], zonePid: number): Promise<number> => {
    await quiet(zonePid);
    const rate = async (s: BareSync | undefined): Promise<number> =>
      (N / (await (s as BareSync).sendDown(resources))) * 1000;
    const baseline = await rate(bare);
    floors.push({ baseline, floor: await rate(durableBare), work: await rate(workBare) });
    return baseline;
  };

  try {
    // ---------------------------------------------------------------- initial sync
    if (want('zone-initial-sync')) {
      await burst(N);
      log(
        `zone-initial-sync: a new zone receives Global's ${N.toLocaleString()} policies (snapshot), ms from ready`,
      );
      let k = 0;
      await figure(
        {
          name: 'zone-initial-sync',
          figure: `ms to a new zone holding ${N.toLocaleString()} resources`,
          target: 2000,
          higherIsBetter: false,
          gate: 'ours',
        },
        async () => {
          const name = `init-${k++}`;
          const z = await startZone(name, tempDir(name));
          const t0 = performance.now();
          await until(
            () => lastSub(name)?.sync.globalToZone.start === 'snapshot',
            20_000,
            'snapshot started',
            1,
          );
          const want = lastSub(name)?.sync.globalToZone.snapshotResources ?? N;
          await until(async () => (await revisionOf(z.diag)) >= want, 30_000, 'snapshot applied', 10);
          const ours = performance.now() - t0;
          await z.stop();
          return { ours, baseline: await bare.sendDown(resources) };
        },
      );
    }

    const mainDir = tempDir('zone-1');
    let main = await startZone('zone-1', mainDir);
    await connected(main);

    // ---------------------------------------------------------------- latency both ways
    if (want('zone-latency-down')) {
      log(`zone-latency-down: PUT on Global → visible on the zone, p99 of ${SAMPLES}`);
      await figure(
        {
          name: 'zone-latency-down',
          figure: 'p99 ms, write on Global to read on the zone',
          target: 100,
          higherIsBetter: false,
          gate: 'ours',
        },
        async () => {
          const lat: number[] = [];
          for (let i = 0; i < SAMPLES; i++) {
            const body = {
              ...policy(0),
              name: 'lat-down',
              sources: [{ match: { 'mesh.io/service': `s-${i}` } }],
            };
            const t0 = performance.now();
            const res = await fetch(`${gUrl}/meshes/default/traffic-permissions/lat-down`, {
              method: 'PUT',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(specOfBody(body)),
            });
            const stored = (await res.json()) as { modificationTime: string };
            await until(
              async () => {
                const r = await fetch(`${main.api}/meshes/default/traffic-permissions/lat-down`);
                return (
                  r.status === 200 &&
                  ((await r.json()) as { modificationTime: string }).modificationTime ===
                    stored.modificationTime
                );
              },
              5000,
              'latency sample',
              0,
            );
            lat.push(performance.now() - t0);
          }
          return {
            ours: percentile(lat, 99),
            baseline: percentile(await bare.roundTrips(resources[0], SAMPLES), 99),
          };
        },
      );
    }
    if (want('zone-latency-up')) {
      log(`zone-latency-up: PUT on the zone → committed on Global, p99 of ${SAMPLES}`);
      await figure(
        {
          name: 'zone-latency-up',
          figure: 'p99 ms, write on the zone to commit on Global',
          target: 100,
          higherIsBetter: false,
          gate: 'ours',
        },
        async () => {
          const lat: number[] = [];
          for (let i = 0; i < SAMPLES; i++) {
            const body = specOfBody({ ...dataplane(i), name: 'lat-up' });
            let seen: () => void = () => undefined;
            const arrived = new Promise<void>((resolve) => (seen = resolve));
            const off = global.log.onCommit((entries) => {
              if (
                entries.some(
                  (e) =>
                    e.name === 'zone-1.lat-up' &&
                    e.resource?.networking &&
                    JSON.stringify(e.resource.networking) === JSON.stringify(body.networking),
                )
              )
                seen();
            });
            const t0 = performance.now();
            await fetch(`${main.api}/meshes/default/dataplanes/lat-up`, {
              method: 'PUT',
              headers: { 'content-type': 'application/json' },
              body: JSON.stringify(body),
            });
            await arrived;
            lat.push(performance.now() - t0);
            off();
          }
          return {
            ours: percentile(lat, 99),
            baseline: percentile(await bare.roundTrips(resources[0], SAMPLES), 99),
          };
        },
      );
    }

    // ---------------------------------------------------------------- burst
    if (want('zone-burst')) {
      log(
        `zone-burst: ${N.toLocaleString()} writes on Global at once, applied on the zone (entries/s from durable on Global to applied on the zone)`,
      );
      const endToEnd: number[] = [];
      const floors: FloorRun[] = [];
      await figure(
        {
          name: 'zone-burst',
          figure: `entries/s, ${N.toLocaleString()} writes on Global applied on a zone`,
          target: 0.4,
          higherIsBetter: true,
          gate: 'ratio',
          extraOk: () => true,
        },
        async () => {
          await quiet(main.proc.pid as number);
          const r0 = await revisionOf(main.diag);
          const tw = performance.now();
          await burst(N);
          // The sync's rate: from the burst being durable on Global (the stream starts from the log).
          const t0 = performance.now();
          await until(async () => (await revisionOf(main.diag)) >= r0 + N, 60_000, 'burst applied', 10);
          const t1 = performance.now();
          endToEnd.push((N / (t1 - tw)) * 1000);
          const ours = (N / (t1 - t0)) * 1000;
          return { ours, baseline: await bareThenFloor(floors, main.proc.pid as number) };
        },
      );
      const f = figures[figures.length - 1];
      const e2e = `from the first write on Global: median ${median(endToEnd).toFixed(0)} entries/s (Global's own write path included); ${floorNote(floors)}`;
      if (f.ours !== null && f.ours < 20_000) {
        f.ok = false;
        f.note = `below the absolute floor of 20,000 entries/s; ${e2e}`;
      } else f.note = `also gated: ≥ 20,000 entries/s absolute; ${e2e}`;
    }

    // ---------------------------------------------------------------- resume
    if (want('zone-resume')) {
      log(
        `zone-resume: the zone is stopped, Global takes ${N.toLocaleString()} writes, the zone restarts and catches up`,
      );
      let resumed = true;
      const floors: FloorRun[] = [];
      await figure(
        {
          name: 'zone-resume',
          figure: `entries/s caught up after ${N.toLocaleString()} missed (must be by resume, no snapshot)`,
          target: 0.4,
          higherIsBetter: true,
          gate: 'ratio',
          extraOk: () => resumed,
        },
        async () => {
          const r0 = await revisionOf(main.diag);
          await main.stop();
          await until(
            () => global.multizone?.zoneStatuses().find((s) => s.name === 'zone-1')?.active === false,
            15_000,
            'zone-1 inactive',
            5,
          );
          await burst(N);
          // Global (in this process) finishes what the burst left (a due snapshot) first.
          await quiet();
          main = await startZone('zone-1', mainDir);
          const t0 = performance.now();
          await until(async () => (await revisionOf(main.diag)) >= r0 + N, 60_000, 'resume applied', 10);
          const ours = (N / (performance.now() - t0)) * 1000;
          await until(
            () => lastSub('zone-1')?.status.total.responsesAcknowledged === String(N),
            10_000,
            'acks counted',
            5,
          );
          const s = lastSub('zone-1');
          if (s?.sync.globalToZone.start !== 'resume' || s.sync.globalToZone.snapshotResources !== 0)
            resumed = false;
          return { ours, baseline: await bareThenFloor(floors, main.proc.pid as number) };
        },
      );
      figures[figures.length - 1].note = `${
        resumed ? 'every run resumed: no snapshot (zones+insights counters)' : 'a run started with a snapshot'
      }; ${floorNote(floors)}`;
    }

    // ---------------------------------------------------------------- both directions
    if (want('zone-both-ways')) {
      log(
        `zone-both-ways: ${N.toLocaleString()} writes on Global and ${N.toLocaleString()} on the zone at once`,
      );
      let dpRound = 0;
      const rates: Array<{ ours: number; bare: number }> = [];
      await figure(
        {
          name: 'zone-both-ways',
          figure: `longest ms a direction made no progress, ${N.toLocaleString()} writes each way at once`,
          target: 1000,
          higherIsBetter: false,
          gate: 'ours',
        },
        async () => {
          const round = dpRound++;
          const tpBefore = await countOn(main.api, '/meshes/default/traffic-permissions?size=1');
          const dpBefore = global.views.count('Dataplane', 'default');
          const progress = {
            down: { n: tpBefore, at: performance.now(), gap: 0 },
            up: { n: dpBefore, at: performance.now(), gap: 0 },
          };
          let done = false;
          const watcher = (async () => {
            while (!done) {
              const now = performance.now();
              const down = await countOn(main.api, '/meshes/default/traffic-permissions?size=1');
              const up = global.views.count('Dataplane', 'default');
              for (const [k, v] of [
                ['down', down],
                ['up', up],
              ] as const) {
                const p = progress[k];
                const target = (k === 'down' ? tpBefore : dpBefore) + N;
                if (v > p.n) {
                  p.gap = Math.max(p.gap, now - p.at);
                  p.n = v;
                  p.at = now;
                } else if (p.n < target) p.gap = Math.max(p.gap, now - p.at);
              }
              await new Promise((r) => setTimeout(r, 10));
            }
          })();
          const t0 = performance.now();
          const downWrites = (async () => {
            for (let i = 0; i < N; i += 500) await burst(Math.min(500, N - i));
          })();
          const upWrites = putAll(
            main.api,
            Array.from({ length: N }, (_, i) => {
              const d = { ...dataplane(i), name: `both-${round}-${i}` };
              return { path: `/meshes/default/dataplanes/${d.name}`, body: specOfBody(d) };
            }),
            64,
          );
          await Promise.all([downWrites, upWrites]);
          await until(
            async () =>
              (await countOn(main.api, '/meshes/default/traffic-permissions?size=1')) >= tpBefore + N &&
              global.views.count('Dataplane', 'default') >= dpBefore + N,
            60_000,
            'both directions applied',
            5,
          );
          const ms = performance.now() - t0;
          done = true;
          await watcher;
          const [bd, bu] = await Promise.all([
            bare.sendDown(resources),
            bare.sendUp(N, JSON.stringify(dataplane(1))),
          ]);
          rates.push({ ours: ((2 * N) / ms) * 1000, bare: ((2 * N) / Math.max(bd, bu)) * 1000 });
          return { ours: Math.max(progress.down.gap, progress.up.gap), baseline: null };
        },
      );
      const f = figures[figures.length - 1];
      f.note = `every entry arrived both ways; entries/s both ways at once (writes included): ours ${median(rates.map((r) => r.ours)).toFixed(0)}, bare stream ${median(rates.map((r) => r.bare)).toFixed(0)}`;
    }
  } finally {
    for (const p of procs) await p.stop().catch(() => undefined);
    await bare.close();
    await durableBare?.close();
    await workBare?.close();
    await global.close();
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
  return figures;
}

/** A PUT body from a wire resource: times dropped (decisions §2: ignored anyway). */
function specOfBody(r: Record<string, unknown>): Record<string, unknown> & { networking?: unknown } {
  const { creationTime: _c, modificationTime: _m, ...body } = r;
  return body;
}

/** `total` of a list. */
async function countOn(api: string, path: string): Promise<number> {
  return ((await (await fetch(`${api}${path}`)).json()) as { total: number }).total;
}

/** PUTs every body with `concurrency` requests in flight; throws on a non-2xx answer. */
async function putAll(
  api: string,
  items: Array<{ path: string; body: unknown }>,
  concurrency: number,
): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const it = items[next++];
      const res = await fetch(`${api}${it.path}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(it.body),
      });
      await res.arrayBuffer();
      if (res.status >= 300) throw new Error(`PUT ${it.path}: ${res.status}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, worker));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? '').href) {
  const args = process.argv.slice(2);
  const only = args.includes('--only') ? args[args.indexOf('--only') + 1] : undefined;
  const figures = await zoneFigures({ quick: args.includes('--quick'), only });
  process.stdout.write(`${formatTable(figures)}\n`);
  for (const f of figures) if (f.note) process.stdout.write(`${f.name}: ${f.note}\n`);
  process.exit(0);
}
