// A proxy's config through time (bench/README.md, "config history"): the config timeline of one
// proxy over 10,000 revisions (`GET …/xds/_history`, its first request: the log replayed through a
// match view of its own), against the floor of reading those entries (a raw `nextv` + JSON.parse
// scan of the same store); and `…/xds?revision=R` for R after the last snapshot (the projections
// loaded from it, the tail replayed, the mesh matched, the proxy rendered) against `…/xds` now.
import { cpSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { toWire } from '../src/app/decide.js';
import type { EventInput, WireResource } from '../src/events/types.js';
import { registry } from '../src/resources/registry.js';
import { validateBody } from '../src/resources/validate.js';
import { create, openBatchedLog } from './fixtures.js';
import { groupSelection, measureFigure, type GroupOptions } from './lib/measure.js';
import { runToEnd, settle, startMeshCp, type Started } from './lib/processes.js';
import type { Figure } from './lib/report.js';
import { percentile } from './lib/stats.js';

const NAMES = ['config-timeline', 'xds-at-revision'];
const MESH = 'default';
const SVC = 'mesh.io/service';
/** Log entries of the store: the mesh, the proxies, then policy writes up to this count. */
const ENTRIES = 10_000;
const SERVICES = 10;
const PROXIES = 100;
/** The proxies whose timelines are read (one per run: a timeline is kept for the last two asked). */
const PROBES = 6;
const T = Date.parse('2026-01-01T00:00:00.000Z');

const stored = (kind: string, body: Record<string, unknown>, seconds: number): WireResource => {
  const desc = registry.get(kind);
  const v = validateBody(desc, body, { mesh: MESH, name: body.name as string });
  if (!v.ok) throw new Error(`fixture ${kind} ${String(body.name)}: ${JSON.stringify(v.causes)}`);
  const at = new Date(T + seconds * 1000).toISOString();
  return toWire(desc, MESH, body.name as string, at, at, v.spec);
};

const proxy = (name: string, service: number): Record<string, unknown> => ({
  type: 'Dataplane',
  mesh: MESH,
  name,
  networking: {
    address: '10.0.0.1',
    inbound: [{ port: 8080, tags: { [SVC]: `svc-${service}`, 'mesh.io/protocol': 'http' } }],
    outbound: [1, 2].map((d, j) => ({ port: 10001 + j, tags: { [SVC]: `svc-${(service + d) % SERVICES}` } })),
  },
});

/**
 * The store: the mesh, 100 proxies of 10 services plus the probes (service 0), then Timeout writes
 * (50 names, each rewritten with a new request timeout) up to 10,000 entries; a fifth of them have
 * service 0's proxies as their sources, so each probe's config changes about 2,000 times.
 */
async function buildStore(path: string): Promise<number> {
  const w = await openBatchedLog(path);
  let s = 0;
  const push = async (kind: string, body: Record<string, unknown>, operation: EventInput['operation']) =>
    w.push({ ...create(kind, stored(kind, body, s++)), operation });
  await push('Mesh', { type: 'Mesh', name: MESH }, 'create');
  for (let i = 0; i < PROXIES; i++) await push('Dataplane', proxy(`dp-${i}`, i % SERVICES), 'create');
  for (let i = 0; i < PROBES; i++) await push('Dataplane', proxy(`probe-${i}`, 0), 'create');
  for (let k = 0; w.count() < ENTRIES; k++) {
    const n = k % 50;
    await push(
      'Timeout',
      {
        type: 'Timeout',
        mesh: MESH,
        name: `timeout-${n}`,
        sources: [{ match: { [SVC]: `svc-${n % 5 === 0 ? 0 : 1 + (n % (SERVICES - 1))}` } }],
        destinations: [{ match: { [SVC]: '*' } }],
        conf: { connectTimeout: '2s', http: { requestTimeout: `${1 + (k % 300)}s` } },
      },
      k < 50 ? 'create' : 'update',
    );
  }
  return w.close();
}

const portOf = (s: Started): number => (s.ready.apiPort ?? s.ready.port) as number;

async function timed(
  url: string,
  init?: RequestInit,
): Promise<{ ms: number; body: string; headers: Headers }> {
  const t = performance.now();
  const res = await fetch(url, init);
  const body = await res.text();
  const ms = performance.now() - t;
  if (!res.ok) throw new Error(`${init?.method ?? 'GET'} ${url}: ${res.status} ${body}`);
  return { ms, body, headers: res.headers };
}

/** The config-history figures; empty unless `only` names one of them (or is unset). */
export async function configHistoryFigures(opts: GroupOptions): Promise<Figure[]> {
  const { log, want } = groupSelection(opts);
  const figures: Figure[] = [];
  if (!NAMES.some(want)) return figures;
  const runs = opts.quick ? 1 : 3;
  const dir = mkdtempSync(join(tmpdir(), 'mesh-bench-config-history-'));
  try {
    const t = performance.now();
    const entries = await buildStore(dir);
    log(
      `config-history: a store of ${entries.toLocaleString()} entries built in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    // The raw scan reads a copy: mesh-cp holds the store's lock.
    const copy = `${dir}-raw`;
    cpSync(dir, copy, { recursive: true });
    const server = await startMeshCp(dir);
    const base = `http://127.0.0.1:${portOf(server)}/meshes/${MESH}/dataplanes`;
    try {
      await settle([server.proc.pid as number]);
      if (want('config-timeline')) {
        let probe = 0;
        const sizes: number[] = [];
        figures.push(
          await measureFigure(
            {
              name: 'config-timeline',
              figure:
                "ms of one proxy's config timeline over 10,000 revisions (first request) vs a raw scan of them",
              target: 1000,
              higherIsBetter: false,
              gate: 'ours',
            },
            async () => {
              // A proxy not asked before: its replay starts from the first revision.
              const name = `probe-${probe++ % PROBES}`;
              const ours = await timed(`${base}/${name}/xds/_history?size=1`);
              sizes.push((JSON.parse(ours.body) as { total: number }).total);
              const raw = await runToEnd('node', ['bench/baselines/raw-scan.mjs', copy]);
              return { ours: ours.ms, baseline: raw.ms };
            },
            { runs: Math.min(runs, PROBES - 1), log },
          ),
        );
        figures[figures.length - 1].note =
          `${sizes.at(-1)} changes in the probe's timeline; the raw scan reads every entry (a process of its own, its start included)`;
      }
      if (want('xds-at-revision')) {
        // R after the start-up snapshot: writes through the API, each a revision to ask for.
        const after: number[] = [];
        for (let i = 0; i < 60; i++) {
          const body = {
            type: 'Timeout',
            mesh: MESH,
            name: 'timeout-0',
            sources: [{ match: { [SVC]: 'svc-0' } }],
            destinations: [{ match: { [SVC]: '*' } }],
            conf: { connectTimeout: '2s', http: { requestTimeout: `${500 + i}s` } },
          };
          const res = await timed(`http://127.0.0.1:${portOf(server)}/meshes/${MESH}/timeouts/timeout-0`, {
            method: 'PUT',
            headers: { 'content-type': 'application/json' },
            body: JSON.stringify(body),
          });
          after.push(Number(res.headers.get('etag')?.replace(/"/g, '')));
        }
        await settle([server.proc.pid as number]);
        let next = 0;
        const N = opts.quick ? 5 : 15;
        figures.push(
          await measureFigure(
            {
              name: 'xds-at-revision',
              figure:
                "p50 ms of a proxy's /xds at a revision after the last snapshot (each a new one) vs /xds now",
              target: 10,
              higherIsBetter: false,
            },
            async () => {
              const past: number[] = [];
              const now: number[] = [];
              for (let i = 0; i < N; i++) {
                // Each R asked once: the past states kept (the last four) never answer it.
                past.push((await timed(`${base}/probe-0/xds?revision=${after[next++ % after.length]}`)).ms);
                now.push((await timed(`${base}/probe-0/xds`)).ms);
              }
              return { ours: percentile(past, 50), baseline: percentile(now, 50) };
            },
            { runs, log },
          ),
        );
        figures[figures.length - 1].note =
          `${N} requests of each per run; the store's start-up snapshot is at revision ${entries}`;
      }
    } finally {
      await server.stop();
    }
    return figures;
  } finally {
    rmSync(dir, { recursive: true, force: true });
    rmSync(`${dir}-raw`, { recursive: true, force: true });
  }
}
