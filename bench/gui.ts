// The web GUI (bench/README.md, "gui"): the data plane proxy list of a mesh of 10,000 proxies,
// interactive after navigation in headless Chromium, against the same page of a mesh of 10; and
// the size of the GUI's JavaScript as the browser receives it (compressed).
import { readdirSync, readFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { brotliCompressSync, gzipSync } from 'node:zlib';
import { transformSync } from 'esbuild';
import type { Browser } from 'playwright-core';
import { launchBrowser } from '../test/helpers/browser.js';
import { create, dataplane, openBatchedLog } from './fixtures.js';
import { groupSelection, measureFigure, type GroupOptions } from './lib/measure.js';
import { ROOT, settle, startMeshCp, type Started } from './lib/processes.js';
import type { Figure } from './lib/report.js';
import { median } from './lib/stats.js';

const NAMES = ['gui-proxies-10k', 'gui-js-size'];
const BIG = 10_000;
const SMALL = 10;
const T = '2026-01-01T00:00:00.000Z';

/** A store with mesh `big` (10,000 proxies) and mesh `small` (10), written through our log adapter. */
async function buildStore(path: string): Promise<number> {
  const w = await openBatchedLog(path);
  for (const [mesh, count] of [
    ['big', BIG],
    ['small', SMALL],
  ] as const) {
    await w.push(create('Mesh', { type: 'Mesh', name: mesh, creationTime: T, modificationTime: T }));
    for (let i = 0; i < count; i++) await w.push(create('Dataplane', dataplane(i, mesh)));
  }
  return w.close();
}

/**
 * Ms from navigation start until the proxy list shows its first page and the main thread is free
 * (a frame painted, then a task run): what a user can click. Each load in a fresh browser context,
 * so nothing is cached: the page, the script, the API's answers.
 */
async function interactiveMs(browser: Browser, url: string): Promise<number> {
  const context = await browser.newContext({ viewport: { width: 1280, height: 800 } });
  try {
    const page = await context.newPage();
    await page.goto(url, { waitUntil: 'commit' });
    await page.waitForSelector('main tbody tr', { timeout: 30_000 });
    return await page.evaluate(
      () =>
        new Promise<number>((resolve) =>
          requestAnimationFrame(() => setTimeout(() => resolve(performance.now()), 0)),
        ),
    );
  } finally {
    await context.close();
  }
}

/** The GUI's figures; empty unless `only` names one of them (or is unset). */
export async function guiFigures(opts: GroupOptions): Promise<Figure[]> {
  const { log, want } = groupSelection(opts);
  const figures: Figure[] = [];
  if (!NAMES.some(want)) return figures;
  if (want('gui-js-size')) {
    const dir = join(ROOT, 'dist', 'gui', 'assets');
    const scripts = readdirSync(dir).filter((f) => f.endsWith('.js'));
    const bytes = scripts.map((f) => readFileSync(join(dir, f)));
    const br = bytes.reduce((n, b) => n + brotliCompressSync(b).length, 0) / 1024;
    const gz = bytes.reduce((n, b) => n + gzipSync(b, { level: 9 }).length, 0) / 1024;
    const raw = bytes.reduce((n, b) => n + b.length, 0) / 1024;
    // The baseline: Preact alone, minified by the same esbuild.
    const preact = transformSync(
      readFileSync(join(ROOT, 'node_modules', 'preact', 'dist', 'preact.mjs'), 'utf8'),
      {
        minify: true,
        format: 'esm',
      },
    ).code;
    const preactBr = brotliCompressSync(preact).length / 1024;
    figures.push(
      await measureFigure(
        {
          name: 'gui-js-size',
          figure: "KB of the GUI's JavaScript, brotli-compressed (as served) vs Preact alone",
          target: 250,
          higherIsBetter: false,
          gate: 'ours',
          warmUp: false,
        },
        async () => ({ ours: br, baseline: preactBr }),
        { runs: 1, log },
      ),
    );
    figures[figures.length - 1].note =
      `${scripts.length} script file(s): ${raw.toFixed(0)} KB minified, ${gz.toFixed(1)} KB gzip, ${br.toFixed(1)} KB brotli`;
  }
  if (!want('gui-proxies-10k')) return figures;
  const runs = opts.quick ? 1 : 3;
  const loads = opts.quick ? 2 : 5;
  const dir = mkdtempSync(join(tmpdir(), 'mesh-bench-gui-'));
  let server: Started | undefined;
  let browser: Browser | undefined;
  try {
    const t = performance.now();
    const entries = await buildStore(dir);
    log(
      `gui: a store of ${entries.toLocaleString()} entries built in ${((performance.now() - t) / 1000).toFixed(1)} s`,
    );
    server = await startMeshCp(dir, { MESH_DEFAULTS_SKIP_MESH_CREATION: 'true' });
    await settle([server.proc.pid as number]);
    browser = await launchBrowser();
    const base = `http://127.0.0.1:${(server.ready.apiPort ?? server.ready.port) as number}/gui/meshes`;
    const b = browser;
    figures.push(
      await measureFigure(
        {
          name: 'gui-proxies-10k',
          figure: 'median ms to an interactive proxy list of 10,000 proxies after navigation vs of 10',
          target: 1000,
          higherIsBetter: false,
          gate: 'ours',
        },
        async () => {
          const ours: number[] = [];
          const baseline: number[] = [];
          for (let i = 0; i < loads; i++) {
            ours.push(await interactiveMs(b, `${base}/big/dataplanes`));
            baseline.push(await interactiveMs(b, `${base}/small/dataplanes`));
          }
          return { ours: median(ours), baseline: median(baseline) };
        },
        { runs, log },
      ),
    );
    figures[figures.length - 1].note =
      `${loads} loads of each per run, each in a fresh browser context (nothing cached); the list is paged by the server (50 a page)`;
    return figures;
  } finally {
    await browser?.close();
    await server?.stop();
    rmSync(dir, { recursive: true, force: true });
  }
}
