import { existsSync, mkdirSync, readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import type { Browser, Page } from 'playwright-core';
import { chromium } from 'playwright-core';
import { expect } from 'vitest';
import { REPO_ROOT } from './process.js';

/** Where the browser tests write their screenshots (git-ignored). */
export const SCREENSHOTS = join(REPO_ROOT, 'test-results', 'gui');

/**
 * The Chromium the browser tests drive: `CHROMIUM_PATH`, else Debian's `chromium-headless-shell`
 * (`.ci/run` installs it), else Debian's `chromium`. The headless shell is the same Blink without the
 * browser's UI layers (what Playwright's own headless mode runs): the GUI tests took ~90 s of CPU in
 * `chromium --headless` and ~50 s in it, on this project's 2-core machines.
 */
export function chromiumPath(): string {
  const candidates = [
    process.env.CHROMIUM_PATH,
    '/usr/bin/chromium-headless-shell',
    '/usr/bin/chromium',
    '/usr/bin/chromium-browser',
  ];
  const found = candidates.find((p): p is string => p !== undefined && p !== '' && existsSync(p));
  // A missing browser fails the tests: they are never skipped.
  if (!found) {
    throw new Error(
      "no Chromium for the GUI tests: install Debian's package (apt-get install -y chromium-headless-shell) or set CHROMIUM_PATH",
    );
  }
  return found;
}

/**
 * Starts headless Chromium. `hosts` maps host names to 127.0.0.1 inside the browser only, so that a
 * page can be opened under a name that is not loopback to the control plane (no admin by address).
 */
export function launchBrowser(hosts: string[] = []): Promise<Browser> {
  const rules = hosts.map((h) => `MAP ${h} 127.0.0.1`).join(',');
  return chromium.launch({
    executablePath: chromiumPath(),
    headless: true,
    args: ['--no-sandbox', '--disable-dev-shm-usage', ...(rules ? [`--host-resolver-rules=${rules}`] : [])],
  });
}

/** What went wrong on a page: console errors, page errors, failed requests, error answers. */
export interface PageProblems {
  list: string[];
  clear(): void;
}

/** Records every console error, uncaught error, failed request and 4xx/5xx answer of `page`. */
export function watchProblems(page: Page): PageProblems {
  const list: string[] = [];
  page.on('console', (m) => {
    if (m.type() === 'error') list.push(`console: ${m.text()}`);
  });
  page.on('pageerror', (e) => list.push(`page error: ${e.message}`));
  page.on('requestfailed', (r) => {
    const why = r.failure()?.errorText ?? '';
    // A stream the page itself closes (leaving a view, a new filter) is aborted on purpose.
    if (why.includes('ERR_ABORTED') && r.url().includes('/_events')) return;
    if (why.includes('ERR_ABORTED') && r.resourceType() === 'fetch') return;
    list.push(`request failed: ${r.method()} ${r.url()} ${why}`);
  });
  page.on('response', (r) => {
    if (r.status() >= 400) list.push(`HTTP ${r.status()}: ${r.request().method()} ${r.url()}`);
  });
  return {
    list,
    clear: () => void list.splice(0, list.length),
  };
}

const axeSource = readFileSync(createRequire(import.meta.url).resolve('axe-core/axe.min.js'), 'utf8');

/** Runs axe-core in the page; returns the serious and critical violations, each with its targets. */
export async function seriousA11yViolations(page: Page): Promise<string[]> {
  // Evaluated through the DevTools protocol, which the page's Content-Security-Policy does not govern;
  // once per document (a view opened without a reload keeps it).
  if (!(await page.evaluate(() => 'axe' in window))) await page.evaluate(axeSource);
  const result = (await page.evaluate(() =>
    (window as unknown as { axe: { run: (o: object) => Promise<unknown> } }).axe.run({
      resultTypes: ['violations'],
    }),
  )) as {
    violations: Array<{ id: string; impact: string; help: string; nodes: Array<{ target: string[] }> }>;
  };
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.impact} ${v.id}: ${v.help} at ${v.nodes.map((n) => n.target.join(' ')).join(', ')}`);
}

/** Saves a screenshot of the page (the window, or the whole page, or its first `height` pixels) as `<name>.png` in {@link SCREENSHOTS}. */
export async function screenshot(
  page: Page,
  name: string,
  opts: { fullPage?: boolean; height?: number } = {},
): Promise<void> {
  mkdirSync(SCREENSHOTS, { recursive: true });
  const clip = opts.height
    ? { x: 0, y: 0, width: page.viewportSize()?.width ?? 1280, height: opts.height }
    : undefined;
  await page.screenshot({ path: join(SCREENSHOTS, `${name}.png`), fullPage: opts.fullPage === true, clip });
}

/** Fails with the page's problems, if any, and forgets them. */
export function expectNoProblems(problems: PageProblems, where: string): void {
  expect(problems.list, where).toEqual([]);
  problems.clear();
}
