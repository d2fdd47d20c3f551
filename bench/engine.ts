// The engine scenarios: the policy engine (the match view) on a mesh of 10,000 proxies of 200
// services and 1,000 policies (bench/engine-fixture.ts). Start-up to ready against the same store
// without the policies, the event loop's longest stall while the view builds (measured inside the
// server by perf_hooks' monitorEventLoopDelay, bench/lib/loop-probe.mjs), and a policy PUT that
// reaches 2,000 proxies against one that reaches none. See bench/README.md.
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildEngineStore,
  MESH,
  meshWide,
  PROXIES,
  put2000,
  putNone,
  timeoutAll,
  type FixturePolicy,
} from './engine-fixture.js';
import { measureFigure, groupSelection, type GroupOptions } from './lib/measure.js';
import { settle, startMeshCp, type Started } from './lib/processes.js';
import type { Figure } from './lib/report.js';
import { median, percentile } from './lib/stats.js';

const NAMES = ['engine-startup', 'engine-startup-stall', 'engine-put', 'impact-mesh-wide'];
const PROBE = './bench/lib/loop-probe.mjs';

const portOf = (s: Started): number => (s.ready.apiPort ?? s.ready.port) as number;

/** What one start measured: ms to ready, the build's window and the loop's stalls. */
interface StartRun {
  ms: number;
  buildMs: number;
  /** The largest event-loop delay (ms) recorded while the view built. */
  buildStall: number;
  /** The largest over the whole start, from the probe's first sample to ready. */
  startStall: number;
  /** The build's own longest slice (its report), ms. */
  longestSlice: number;
}

/**
 * Starts mesh-cp on `dir` with the loop probe preloaded and debug logging (for the build's report
 * line), reads the probe's samples at ready, waits for it to be idle (its start-up snapshot written,
 * so that every start of the store is alike), stops it.
 */
async function measuredStart(dir: string, probeFile: string): Promise<StartRun> {
  const server = await startMeshCp(dir, { MESH_LOG_LEVEL: 'debug', BENCH_LOOP_PROBE_FILE: probeFile }, [
    '--import',
    PROBE,
  ]);
  try {
    rmSync(probeFile, { force: true });
    server.proc.kill('SIGUSR2');
    const samples = await readProbe(probeFile);
    const built = server.before.find((l) => l.msg === 'policy matches built');
    if (!built) throw new Error("mesh-cp logged no 'policy matches built' line before ready");
    const startedAt = built.startedAt as number;
    const buildMs = built.ms as number;
    // A sample at t with delay d is a stall over [t - d, t] (within the 10 ms between samples): it
    // is counted when that overlaps the build, even in part.
    const inBuild = samples.filter(([t, d]) => t >= startedAt && t - d - 10 <= startedAt + buildMs);
    return {
      ms: server.ms,
      buildMs,
      buildStall: Math.max(0, ...inBuild.map(([, d]) => d)),
      startStall: Math.max(0, ...samples.map(([, d]) => d)),
      longestSlice: built.longestSliceMs as number,
    };
  } finally {
    await settle([server.proc.pid as number]);
    await server.stop();
  }
}

/** The probe's samples once it has written them. */
async function readProbe(file: string): Promise<Array<[number, number]>> {
  for (let i = 0; i < 200; i++) {
    try {
      return JSON.parse(readFileSync(file, 'utf8')) as Array<[number, number]>;
    } catch {
      await new Promise((r) => setTimeout(r, 10));
    }
  }
  throw new Error(`the loop probe wrote no ${file}`);
}

/** µs of one request on a keep-alive connection, body read; throws on an answer that is not 2xx. */
async function timed(url: string, init?: RequestInit): Promise<number> {
  const t = performance.now();
  const res = await fetch(url, init);
  await res.arrayBuffer();
  const us = (performance.now() - t) * 1000;
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status}`);
  return us;
}

const putInit = (p: FixturePolicy): RequestInit => ({
  method: 'PUT',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(p.body),
});
const urlOf = (base: string, p: FixturePolicy): string =>
  `${base}/meshes/${MESH}/${p.path}/${String(p.body.name)}`;

/** How many proxies a policy's `/dataplanes` lists. */
async function reach(base: string, p: FixturePolicy): Promise<number> {
  const res = await fetch(`${urlOf(base, p)}/dataplanes`);
  const body = (await res.json()) as { total: number };
  if (!res.ok) throw new Error(`GET ${urlOf(base, p)}/dataplanes: ${res.status}`);
  return body.total;
}

/** Checks that `bench-put-2000` reaches 2,000 proxies on, none off, and `bench-put-none` none. Leaves it on. */
async function sanityCheck(base: string, log: (s: string) => void): Promise<void> {
  for (const on of [false, true]) {
    await timed(urlOf(base, put2000(on)), putInit(put2000(on)));
    const n = await reach(base, put2000(on));
    if (n !== (on ? 2000 : 0))
      throw new Error(`bench-put-2000 ${on ? 'on' : 'off'} reaches ${n} proxies, not ${on ? 2000 : 0}`);
  }
  await timed(urlOf(base, putNone(true)), putInit(putNone(true)));
  await timed(urlOf(base, putNone(false)), putInit(putNone(false)));
  const none = await reach(base, putNone(false));
  if (none !== 0) throw new Error(`bench-put-none reaches ${none} proxies`);
  log('  sanity: each bench-put-2000 PUT moves 2,000 proxies (read back at once), bench-put-none none');
}

/** The engine figures; empty unless `only` names one of them (or is unset). */
export async function engineFigures(opts: GroupOptions): Promise<Figure[]> {
  const { log, want } = groupSelection(opts);
  const figures: Figure[] = [];
  if (!NAMES.some(want)) return figures;
  const runs = opts.quick ? 1 : 3;
  const dirs: string[] = [];
  const tempDir = (p: string): string => {
    const d = mkdtempSync(join(tmpdir(), `mesh-bench-${p}-`));
    dirs.push(d);
    return d;
  };
  try {
    const withPolicies = tempDir('engine');
    log(`engine: building a mesh of ${PROXIES.toLocaleString()} proxies, with and without 1,000 policies…`);
    const t = performance.now();
    await buildEngineStore(withPolicies, true);
    const without = tempDir('engine-bare');
    await buildEngineStore(without, false);
    log(`  built in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    if (want('engine-startup') || want('engine-startup-stall')) {
      log(
        'engine-startup: ms to ready with the 1,000 policies vs the same proxies without (loop probe in both)',
      );
      const probeFile = join(tempDir('probe'), 'samples.json');
      const ours: StartRun[] = [];
      const bare: StartRun[] = [];
      figures.push(
        await measureFigure(
          {
            name: 'engine-startup',
            figure: 'ms to ready, 10,000 proxies and 1,000 policies vs the same proxies alone',
            target: 1.5,
            higherIsBetter: false,
          },
          async () => {
            const o = await measuredStart(withPolicies, probeFile);
            const b = await measuredStart(without, probeFile);
            ours.push(o);
            bare.push(b);
            return { ours: o.ms, baseline: b.ms };
          },
          { runs, log },
        ),
      );
      // The warm-up start (the first, before the store has a snapshot) is not counted.
      const counted = ours.slice(1);
      const fmt = (xs: number[]): string => xs.map((x) => x.toFixed(1)).join(', ');
      figures[figures.length - 1].note =
        `view build ${fmt(counted.map((r) => r.buildMs))} ms with the policies, ${fmt(bare.slice(1).map((r) => r.buildMs))} ms without; ` +
        `each start from the store's start-up snapshot (written after the warm-up start)`;
      figures.push(
        await measureFigure(
          {
            name: 'engine-startup-stall',
            figure: 'longest event-loop delay (ms) while the view builds, monitorEventLoopDelay in mesh-cp',
            target: 50,
            higherIsBetter: false,
            warmUp: false,
          },
          async () => {
            const r = counted.shift() ?? (await measuredStart(withPolicies, probeFile));
            return { ours: r.buildStall, baseline: null };
          },
          { runs, log },
        ),
      );
      figures[figures.length - 1].note =
        `per start: ${fmt(ours.slice(1).map((r) => r.buildStall))} ms while building (the build's own longest slice ${fmt(ours.slice(1).map((r) => r.longestSlice))} ms); ` +
        `over the whole start (module loading and store load included) ${fmt(ours.slice(1).map((r) => r.startStall))} ms; without the policies ${fmt(bare.slice(1).map((r) => r.buildStall))} ms while building`;
    }

    if (want('engine-put')) {
      log(
        'engine-put: p50 of a policy PUT that changes the matches of 2,000 proxies vs one that changes none',
      );
      const server = await startMeshCp(withPolicies);
      const o = `http://127.0.0.1:${portOf(server)}`;
      const PUTS = opts.quick ? 40 : 200;
      const p99s: Array<{ ours: number; baseline: number }> = [];
      try {
        await settle([server.proc.pid as number]);
        await sanityCheck(o, log);
        figures.push(
          await measureFigure(
            {
              name: 'engine-put',
              figure: 'p50 µs of a policy PUT reaching 2,000 proxies vs one reaching none',
              target: 1.5,
              higherIsBetter: false,
            },
            async () => {
              const a: number[] = [];
              const b: number[] = [];
              // bench-put-2000 starts on: the i-th PUT turns it off for even i, on for odd i.
              for (let i = 0; i < PUTS; i++) {
                const p = put2000(i % 2 === 1);
                a.push(await timed(urlOf(o, p), putInit(p)));
                const q = putNone(i % 2 === 0);
                b.push(await timed(urlOf(o, q), putInit(q)));
              }
              p99s.push({ ours: percentile(a, 99), baseline: percentile(b, 99) });
              return { ours: percentile(a, 50), baseline: percentile(b, 50) };
            },
            { runs, log },
          ),
        );
        // A class applies a policy write at its next read: the cost a PUT no longer pays is paid by
        // the first read after it that needs the reverse index (the policy's affected proxies).
        const readAfter = { reach: [] as number[], none: [] as number[] };
        const firstPage = (p: FixturePolicy): string => `${urlOf(o, p)}/dataplanes?size=1`;
        for (let i = 0; i < PUTS / 2; i++) {
          const p = put2000(i % 2 === 1);
          await timed(urlOf(o, p), putInit(p));
          readAfter.reach.push(await timed(firstPage(put2000(true))));
          const q = putNone(i % 2 === 0);
          await timed(urlOf(o, q), putInit(q));
          readAfter.none.push(await timed(firstPage(put2000(true))));
        }
        figures[figures.length - 1].note =
          `p99 µs ${median(p99s.map((r) => r.ours)).toFixed(0)} against ${median(p99s.map((r) => r.baseline)).toFixed(0)} (medians over the runs); ${PUTS} pairs per run, no xDS stream connected; ` +
          `the first read of bench-put-2000's affected proxies (first page) after each PUT, where the reached classes apply it: p50 µs ${percentile(readAfter.reach, 50).toFixed(0)} after a PUT reaching 2,000 against ${percentile(readAfter.none, 50).toFixed(0)} after one reaching none`;
      } finally {
        await server.stop();
      }
    }
    if (want('impact-mesh-wide')) {
      log(
        'impact-mesh-wide: p50 of a dry-run PUT with ?impact=true of a policy every one of 10,000 proxies lists vs the real PUT of it',
      );
      const server = await startMeshCp(withPolicies);
      const o = `http://127.0.0.1:${portOf(server)}`;
      const PUTS = opts.quick ? 20 : 100;
      const totals = new Set<number>();
      const diffed: number[] = [];
      try {
        await settle([server.proc.pid as number]);
        // Created once: every write measured is an update that flips the action.
        await timed(urlOf(o, meshWide(true)), putInit(meshWide(true)));
        let allow = false;
        const settled = `${urlOf(o, meshWide(true))}/dataplanes?size=1`;
        /** µs of a dry-run PUT of `p` with its impact; checks the answer and notes its total. */
        const dryRun = async (p: FixturePolicy): Promise<number> => {
          const t = performance.now();
          const res = await fetch(`${urlOf(o, p)}?dryRun=true&impact=true`, putInit(p));
          const body = (await res.json()) as { impact?: { total: number } };
          const us = (performance.now() - t) * 1000;
          if (!res.ok || !body.impact) throw new Error(`dry run with impact: ${res.status}`);
          totals.add(body.impact.total);
          return us;
        };
        figures.push(
          await measureFigure(
            {
              name: 'impact-mesh-wide',
              figure:
                'p50 µs of a dry-run PUT ?impact=true (first page of 100) vs the durable PUT of the same change',
              target: 2,
              higherIsBetter: false,
            },
            async () => {
              const a: number[] = [];
              const b: number[] = [];
              for (let i = 0; i < PUTS; i++) {
                // The write (the baseline), then a read of the policy's proxies: it applies the
                // write to the classes that deferred it (what a write leaves to the next read, see
                // engine-put), so the dry run measured pays for its own change only.
                const written = meshWide(allow);
                b.push(await timed(urlOf(o, written), putInit(written)));
                await timed(settled);
                const p = meshWide(!allow);
                a.push(await dryRun(p));
                allow = !allow;
              }
              return { ours: percentile(a, 50), baseline: percentile(b, 50) };
            },
            { runs, log },
          ),
        );
        // A dry run right after a write, the write's deferred matching not applied yet.
        const unsettled: number[] = [];
        for (let i = 0; i < (opts.quick ? 5 : 20); i++) {
          const written = meshWide(allow);
          await timed(urlOf(o, written), putInit(written));
          unsettled.push(await dryRun(meshWide(!allow)));
          allow = !allow;
        }
        // A version that names other callers (a change of what it selects, not only of what it
        // sets): every class is matched again on its copy.
        const reselected: number[] = [];
        await timed(settled);
        for (let i = 0; i < (opts.quick ? 5 : 20); i++) {
          const p = meshWide(!allow, { kind: 'MeshService', name: `svc-${i % 7}` });
          reselected.push(await dryRun(p));
        }
        // A change that moves a policy: bench-put-2000 (stored on) turned off, 2,000 proxies re-matched.
        const moved: number[] = [];
        for (let i = 0; i < (opts.quick ? 5 : 20); i++) {
          const t = performance.now();
          const off = put2000(false);
          const res = await fetch(`${urlOf(o, off)}?dryRun=true&impact=true`, putInit(off));
          const body = (await res.json()) as { impact?: { total: number } };
          moved.push((performance.now() - t) * 1000);
          if (!res.ok || body.impact?.total !== 2000) throw new Error(`bench-put-2000 off: ${res.status}`);
        }
        // A settings change of a policy that shapes config: the proxies of the page are rendered.
        await timed(urlOf(o, timeoutAll(10)), putInit(timeoutAll(10)));
        const shaping: number[] = [];
        let shaped = 0;
        let page: string[] = [];
        for (let i = 0; i < (opts.quick ? 5 : 20); i++) {
          const t = performance.now();
          const p = timeoutAll(11 + (i % 5));
          const res = await fetch(`${urlOf(o, p)}?dryRun=true&impact=true`, putInit(p));
          const body = (await res.json()) as { impact?: { total: number; items: Array<{ name: string }> } };
          shaping.push((performance.now() - t) * 1000);
          if (!res.ok || !body.impact) throw new Error(`bench-timeout-all: ${res.status}`);
          shaped = body.impact.total;
          page = body.impact.items.map((item) => item.name);
        }
        // The floor of that page's work: each of its proxies' config rendered once, read through
        // `/xds` (the impact renders each twice, before and after), less a GET's own cost (a GET of
        // one proxy), both summed over the page.
        const floor = { xds: 0, get: 0 };
        for (const name of page) {
          floor.xds += await timed(`${o}/meshes/default/dataplanes/${name}/xds`);
          floor.get += await timed(`${o}/meshes/default/dataplanes/${name}`);
        }
        // The stored version is meshWide(!allow) now: each dry run flips it.
        await timed(settled);
        for (let i = 0; i < (opts.quick ? 3 : 10); i++) {
          const p = meshWide(allow);
          diffed.push(await timed(`${urlOf(o, p)}?dryRun=true&impact=diff`, putInit(p)));
        }
        figures[figures.length - 1].note =
          `the impact listed ${[...totals].join(', ')} proxies (exact total; a MeshTrafficPermission shapes no client config, so no proxy of the page is rendered); ` +
          `a dry run right after a write, its deferred matching of 10,000 proxies not yet applied, p50 µs ${percentile(unsettled, 50).toFixed(0)}; ` +
          `a version that names other callers (each class it reaches placed twice to see that nothing moves) p50 µs ${percentile(reselected, 50).toFixed(0)}; ` +
          `bench-timeout-all's request timeout changed (${shaped} proxies, the page's Listeners rendered in both states) p50 µs ${percentile(shaping, 50).toFixed(0)}; ` +
          `the floor of its page, each proxy's config rendered once (${page.length} GETs of /xds less as many GETs of the proxy): µs ${(floor.xds - floor.get).toFixed(0)}, twice that for both states; ` +
          `bench-put-2000 turned off (2,000 proxies lose it: their classes copied and matched again, the page rendered) p50 µs ${percentile(moved, 50).toFixed(0)}; ` +
          `with each resource's diff (?impact=diff) p50 µs ${percentile(diffed, 50).toFixed(0)}`;
      } finally {
        await server.stop();
      }
    }
    return figures;
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
