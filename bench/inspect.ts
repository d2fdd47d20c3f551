// Inspect scenarios: the policy-match view is a projection a write updates, not a
// scan per request. One mesh of 10,000 proxies and 1,000 policies (bench/inspect-fixture.ts); each
// figure beside a baseline measured on the same server in the same run, requests one at a time.
// `inspectFigures()` returns figures shaped like bench/run.ts's.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  buildInspectStore,
  HOT_SERVICES,
  MESH,
  PROXIES,
  proxyName,
  put1000,
  putNone,
  REACH_1000,
  type FixturePolicy,
} from './inspect-fixture.js';
import type { Started } from './lib/processes.js';
import { freePort, heapAfterGc, rssOf, settle, startMeshCp } from './lib/processes.js';
import type { FigureSpec } from './lib/measure.js';
import { measureFigure, groupSelection, type GroupOptions } from './lib/measure.js';
import type { Figure } from './lib/report.js';
import { median, percentile } from './lib/stats.js';

const NAMES = ['inspect-policies', 'inspect-dataplanes', 'inspect-put', 'inspect-memory'];

/** The proxies the read figures ask about, spread over the mesh (hot services and others). */
const SAMPLE = Array.from({ length: 100 }, (_, i) => proxyName((i * 997) % PROXIES));
/** A proxy of a hot service: `bench-put-1000` is its Timeout on every outbound when on. */
const HOT_PROXY = proxyName(0);

const portOf = (s: Started): number => (s.ready.apiPort ?? s.ready.port) as number;

/** µs of one request on a keep-alive connection, body read; throws on an answer that is not 2xx. */
async function timed(url: string, init?: RequestInit): Promise<number> {
  const t = performance.now();
  const res = await fetch(url, init);
  await res.arrayBuffer();
  const us = (performance.now() - t) * 1000;
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status}`);
  return us;
}

async function getJson(url: string): Promise<Record<string, unknown>> {
  const res = await fetch(url);
  const body = (await res.json()) as Record<string, unknown>;
  if (!res.ok) throw new Error(`GET ${url}: ${res.status} ${JSON.stringify(body)}`);
  return body;
}

const putInit = (p: FixturePolicy): RequestInit => ({
  method: 'PUT',
  headers: { 'content-type': 'application/json' },
  body: JSON.stringify(p.body),
});
const urlOf = (base: string, p: FixturePolicy): string =>
  `${base}/meshes/${MESH}/${p.path}/${String(p.body.name)}`;

type Item = { type: string; name: string; matchedPolicies: Record<string, Array<{ name: string }>> };

/** The Timeouts of a proxy's outbounds in its `/policies` answer, by outbound name. */
async function outboundTimeouts(base: string, proxy: string): Promise<Map<string, string | undefined>> {
  const body = await getJson(`${base}/meshes/${MESH}/dataplanes/${proxy}/policies`);
  if (body.kind !== 'SidecarDataplane') throw new Error(`/policies of ${proxy}: kind ${String(body.kind)}`);
  const items = body.items as Item[];
  return new Map(
    items.filter((i) => i.type === 'outbound').map((i) => [i.name, i.matchedPolicies.Timeout?.[0]?.name]),
  );
}

/**
 * Checks what the figures rest on, on the running server, before any is measured: `bench-reach-1000`
 * reaches 1,000 proxies (and its first page is 100 of them); a PUT of `bench-put-1000` off, then on,
 * changes the Timeout of every outbound of a hot proxy, read back at once (read-your-writes), and the
 * proxies it reaches go from 1,000 to 0 and back; `bench-put-none` reaches none. Leaves it on.
 */
async function sanityCheck(base: string, log: (s: string) => void): Promise<void> {
  const affected = async (p: FixturePolicy) => {
    const body = await getJson(`${urlOf(base, p)}/dataplanes`);
    return { total: body.total as number, page: (body.items as unknown[]).length };
  };
  const reach = await affected(REACH_1000);
  if (reach.total !== 1000 || reach.page !== 100)
    throw new Error(
      `bench-reach-1000 reaches ${reach.total} proxies (first page ${reach.page}), not 1,000 (100)`,
    );
  const put = async (p: FixturePolicy) => {
    const res = await fetch(urlOf(base, p), putInit(p));
    await res.arrayBuffer();
    if (res.status !== 200) throw new Error(`PUT ${String(p.body.name)}: ${res.status}`);
  };
  for (const on of [false, true]) {
    await put(put1000(on));
    const timeouts = await outboundTimeouts(base, HOT_PROXY);
    const wins = [...timeouts.values()].filter((n) => n === 'bench-put-1000').length;
    if (timeouts.size === 0 || wins !== (on ? timeouts.size : 0))
      throw new Error(
        `after PUT bench-put-1000 ${on ? 'on' : 'off'}, ${HOT_PROXY}'s outbound Timeouts are ${JSON.stringify([...timeouts])}`,
      );
    const n = (await affected(put1000(on))).total;
    if (n !== (on ? 1000 : 0))
      throw new Error(`bench-put-1000 ${on ? 'on' : 'off'} reaches ${n} proxies, not ${on ? 1000 : 0}`);
  }
  await put(putNone(true));
  await put(putNone(false));
  const none = (await affected(putNone(false))).total;
  if (none !== 0) throw new Error(`bench-put-none reaches ${none} proxies`);
  log(
    `  sanity: bench-reach-1000 reaches 1,000 (services ${HOT_SERVICES.join(', ')}); each bench-put-1000 PUT`,
  );
  log(
    `  moves the Timeout of all ${HOT_PROXY}'s outbounds and 1,000 proxies, read back at once; bench-put-none none`,
  );
}

/**
 * Runs every inspect scenario (or those `only` names a prefix of) and returns their figures.
 * `quick`: fewer requests and one timed run instead of three.
 */
export async function inspectFigures(opts: GroupOptions): Promise<Figure[]> {
  const { log, want } = groupSelection(opts);
  const figures: Figure[] = [];
  if (!NAMES.some(want)) return figures;
  const RUNS = opts.quick ? 1 : 3;
  const READS = opts.quick ? 300 : 1500;
  // Even, so that each run leaves bench-put-1000 as it found it (on).
  const PUTS = opts.quick ? 40 : 200;
  const figure = async (
    spec: FigureSpec,
    measure: () => Promise<{ ours: number; baseline: number | null }>,
  ): Promise<void> => {
    figures.push(await measureFigure(spec, measure, { runs: RUNS, log }));
  };
  const dirs: string[] = [];
  const tempDir = (p: string): string => {
    const d = mkdtempSync(join(tmpdir(), `mesh-bench-${p}-`));
    dirs.push(d);
    return d;
  };
  try {
    const dir = tempDir('inspect');
    log(`inspect: building a mesh of ${PROXIES.toLocaleString()} proxies and 1,000 policies…`);
    const t = performance.now();
    await buildInspectStore(dir);
    log(`  built in ${((performance.now() - t) / 1000).toFixed(1)} s`);

    if (want('inspect-memory')) {
      log('inspect-memory: heap after GC before and after the first inspect read builds the view, per proxy');
      // A fresh server each run: the view is built once per mesh, on its first inspect read.
      const rss: number[] = [];
      const firstMs: number[] = [];
      const heapMiB: number[] = [];
      await figure(
        {
          name: 'inspect-memory',
          figure: 'heap growth per proxy after GC (KB), first inspect read builds the view',
          target: 2,
          higherIsBetter: false,
          warmUp: false,
        },
        async () => {
          const port = await freePort();
          const server = await startMeshCp(dir, {}, [`--inspect=127.0.0.1:${port}`]);
          const pid = server.proc.pid as number;
          try {
            await settle([pid]);
            const heapBefore = await heapAfterGc(port);
            const rssBefore = rssOf(pid);
            firstMs.push(
              (await timed(
                `http://127.0.0.1:${portOf(server)}/meshes/${MESH}/dataplanes/${HOT_PROXY}/policies`,
              )) / 1000,
            );
            await settle([pid]);
            const heapAfter = await heapAfterGc(port);
            rss.push((rssOf(pid) - rssBefore) / PROXIES / 1024);
            heapMiB.push(heapAfter / 2 ** 20);
            return { ours: (heapAfter - heapBefore) / PROXIES / 1024, baseline: null };
          } finally {
            await server.stop();
          }
        },
      );
      const runs = (xs: number[]) => xs.map((x) => x.toFixed(2)).join(', ');
      // The first read's time shows whether it built the view (a view built at start-up would
      // leave nothing for this figure to see: then the heap after start holds it).
      figures[figures.length - 1].note =
        `RSS growth over the same first read (from /proc, no GC asked): ${median(rss).toFixed(2)} KB per proxy (runs ${runs(rss)}); that first read took ${runs(firstMs)} ms; heap after it ${runs(heapMiB)} MiB`;
    }

    if (!['inspect-policies', 'inspect-dataplanes', 'inspect-put'].some(want)) return figures;
    log('inspect: starting mesh-cp on the inspect mesh…');
    const server = await startMeshCp(dir);
    const o = `http://127.0.0.1:${portOf(server)}`;
    try {
      await settle([server.proc.pid as number]);
      await sanityCheck(o, log);

      /** p50 of `ours` and `baseline` requests, `n` of each, taken in turn. */
      const pairs = async (
        n: number,
        ours: (i: number) => Promise<number>,
        baseline: (i: number) => Promise<number>,
      ): Promise<{ ours: number; baseline: number }> => {
        const a: number[] = [];
        const b: number[] = [];
        for (let i = 0; i < n; i++) {
          a.push(await ours(i));
          b.push(await baseline(i));
        }
        return { ours: percentile(a, 50), baseline: percentile(b, 50) };
      };

      if (want('inspect-policies')) {
        log(
          'inspect-policies: p50 of GET …/dataplanes/{name}/policies vs GET of the data plane, 100 proxies in turn',
        );
        await figure(
          {
            name: 'inspect-policies',
            figure: 'p50 µs of /policies of one proxy vs GET one',
            target: 1.5,
            higherIsBetter: false,
          },
          () =>
            pairs(
              READS,
              (i) => timed(`${o}/meshes/${MESH}/dataplanes/${SAMPLE[i % SAMPLE.length]}/policies`),
              (i) => timed(`${o}/meshes/${MESH}/dataplanes/${SAMPLE[i % SAMPLE.length]}`),
            ),
        );
      }

      if (want('inspect-dataplanes')) {
        log(
          'inspect-dataplanes: p50 of the first page of a policy reaching 1,000 proxies vs a 100-item list page',
        );
        await figure(
          {
            name: 'inspect-dataplanes',
            figure: 'p50 µs of /dataplanes of a policy on 1,000 proxies (first page) vs a page of 100',
            target: 2,
            higherIsBetter: false,
          },
          () =>
            pairs(
              READS,
              () => timed(`${urlOf(o, REACH_1000)}/dataplanes`),
              () => timed(`${o}/meshes/${MESH}/dataplanes?size=100`),
            ),
        );
      }

      if (want('inspect-put')) {
        log(
          'inspect-put: p50 of a policy PUT that changes the matches of 1,000 proxies vs one that changes none',
        );
        await figure(
          {
            name: 'inspect-put',
            figure: "p50 µs of a policy PUT moving 1,000 proxies' matches vs one moving none",
            target: 1.5,
            higherIsBetter: false,
          },
          // bench-put-1000 starts on: the i-th PUT turns it off for even i, on for odd i.
          () =>
            pairs(
              PUTS,
              (i) => {
                const p = put1000(i % 2 === 1);
                return timed(urlOf(o, p), putInit(p));
              },
              (i) => {
                const p = putNone(i % 2 === 0);
                return timed(urlOf(o, p), putInit(p));
              },
            ),
        );
      }
    } finally {
      await server.stop();
    }
    return figures;
  } finally {
    for (const d of dirs) rmSync(d, { recursive: true, force: true });
  }
}
