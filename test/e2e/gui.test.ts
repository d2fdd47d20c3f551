import { join } from 'node:path';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  expectNoProblems,
  launchBrowser,
  screenshot,
  seriousA11yViolations,
  watchProblems,
  type PageProblems,
} from '../helpers/browser.js';
import { tempDir } from '../helpers/control-plane.js';
import { eventually } from '../helpers/eventually.js';
import { goldenPuts } from '../helpers/golden.js';
import { startMeshCp, type CpProcess } from '../helpers/process.js';
import { rawAdsClient, rawNode } from '../helpers/xds.js';
import { LISTENER } from '../../src/xds/type-urls.js';

// The web GUI in a real headless Chromium against a standalone control plane run as users run it
// (`mesh-cp run`, LevelDB, a real port), seeded with every kind. One browser and one control plane
// for the file. Admin pages are opened at 127.0.0.1 (loopback: admin, as in the API); the reader's
// at `gui.test`, a name the browser alone maps to 127.0.0.1, which the control plane does not take
// for itself, so that its caller is no admin by address and must sign in.

const SECRET_DATA = ['c2VjcmV0', 'dG9rZW4=']; // the golden secrets' data, never to be shown
const PROXIES = 60;

let cp: CpProcess;
let dir: ReturnType<typeof tempDir>;
let api: string;
let port: number;
let xdsPort: number;
let browser: Browser;

async function call(method: string, path: string, body?: unknown, headers: Record<string, string> = {}) {
  const res = await fetch(api + path, {
    method,
    headers: { ...(body === undefined ? {} : { 'content-type': 'application/json' }), ...headers },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  return { status: res.status, text, json: () => JSON.parse(text) as Record<string, unknown> };
}

async function put(path: string, body: unknown): Promise<void> {
  const res = await call('PUT', path, body);
  expect([200, 201], `${path}: ${res.text}`).toContain(res.status);
}

const proxy = (i: number) => {
  const name = `dp-${String(i).padStart(2, '0')}`;
  const service = i % 2 === 0 ? 'web' : 'backend';
  return {
    url: `/meshes/default/dataplanes/${name}`,
    body: {
      type: 'Dataplane',
      mesh: 'default',
      name,
      networking: {
        address: `10.1.0.${i + 1}`,
        inbound: [{ port: 8080, tags: { 'mesh.io/service': service, version: i % 3 === 0 ? 'v2' : 'v1' } }],
        outbound: [{ port: 10001, tags: { 'mesh.io/service': 'backend' } }],
      },
    },
  };
};

const tp = (destination: string) => ({
  type: 'TrafficPermission',
  mesh: 'default',
  name: 'gui-tp',
  sources: [{ match: { 'mesh.io/service': 'web' } }],
  destinations: [{ match: { 'mesh.io/service': destination } }],
});

/** Revisions of gui-tp's three writes (created for backend, then web, then *). */
const tpRevisions: number[] = [];

beforeAll(async () => {
  dir = tempDir('mesh-cp-gui-');
  cp = startMeshCp({
    MESH_STORE_TYPE: 'level',
    MESH_STORE_LEVEL_PATH: dir.path,
    MESH_API_SERVER_HTTPS_ENABLED: 'false',
    MESH_API_SERVER_BIND_ADDRESS: '127.0.0.1',
  });
  const ready = await cp.ready;
  port = ready.apiPort;
  xdsPort = ready.xdsPort;
  api = `http://127.0.0.1:${port}`;
  // Every writable kind (the golden files' PUTs, meshes first), then the proxies and a policy with a history.
  const puts = goldenPuts().filter((p) => !p.url.includes('dryRun'));
  const isMesh = (u: string) => u.startsWith('/meshes/') && u.split('/').length === 3;
  puts.sort((a, b) => Number(isMesh(b.url)) - Number(isMesh(a.url)));
  for (const { url, body } of puts) await put(url, body);
  for (let i = 0; i < PROXIES; i += 1) await put(proxy(i).url, proxy(i).body);
  for (const dest of ['backend', 'web', '*'])
    await put('/meshes/default/traffic-permissions/gui-tp', tp(dest));
  const history = (await call('GET', '/meshes/default/traffic-permissions/gui-tp/_history')).json() as {
    items: Array<{ revision: number }>;
  };
  tpRevisions.push(...history.items.map((i) => i.revision));
  browser = await launchBrowser(['gui.test']);
}, 120_000);

afterAll(async () => {
  await browser?.close();
  cp?.proc.kill('SIGTERM');
  await cp?.exited;
  dir?.cleanup();
});

/** A page of a fresh browser context, its problems recorded. */
async function openPage(
  opts: { host?: string; viewport?: { width: number; height: number } } = {},
): Promise<{ page: Page; context: BrowserContext; problems: PageProblems; origin: string }> {
  const context = await browser.newContext({ viewport: opts.viewport ?? { width: 1280, height: 800 } });
  const page = await context.newPage();
  const problems = watchProblems(page);
  return { page, context, problems, origin: `http://${opts.host ?? '127.0.0.1'}:${port}` };
}

/** Waits until the view shows its heading and nothing is loading any more. */
async function settled(page: Page): Promise<void> {
  await page.waitForFunction(
    () =>
      document.querySelector('main h1') !== null &&
      document.querySelector('main .loading, main [aria-busy="true"]') === null &&
      !document.body.innerText.includes('Loading…'),
    undefined,
    { timeout: 15_000 },
  );
}

async function visit(page: Page, origin: string, path: string): Promise<void> {
  await page.goto(`${origin}/gui${path}`);
  await settled(page);
}

/**
 * Opens a view as following a link in the GUI does (the history API, no reload), by way of a path
 * no view has: the view is mounted anew, as on a fresh load, while the app, its event stream and
 * the accessibility checker loaded in the page stay. The sweeps over every view and the phone-width
 * tour use it after a first fresh load ({@link tour}); the other tests open their views by URL.
 */
async function follow(page: Page, path: string): Promise<void> {
  const go = (url: string) =>
    page.evaluate((to) => {
      history.pushState(null, '', to);
      dispatchEvent(new PopStateEvent('popstate'));
    }, url);
  await go('/gui/no-view-here');
  await page.waitForFunction(() => document.querySelector('main h1')?.textContent === 'Not found');
  await go(`/gui${path}`);
  await page.waitForFunction(() => document.querySelector('main h1')?.textContent !== 'Not found');
  await settled(page);
  expect(await page.evaluate(() => location.pathname + location.search)).toBe(`/gui${path}`);
}

/** Opens each stop's view in turn, the first by URL and the others with {@link follow}; yields each once it settled. */
async function* tour<T>(
  page: Page,
  origin: string,
  stops: T[],
  pathOf: (stop: T) => string,
): AsyncGenerator<T> {
  for (const [i, stop] of stops.entries()) {
    if (i === 0) await visit(page, origin, pathOf(stop));
    else await follow(page, pathOf(stop));
    yield stop;
  }
}

describe('the GUI served by the control plane', () => {
  it('the ready line says where to open it', () => {
    const line = cp.lines.find((l) => l.msg === 'mesh-cp ready');
    expect(line?.gui).toBe(`http://127.0.0.1:${port}/gui`);
  });

  it('loads every view with the seeded data, no console error, no failed request, no serious axe violation', async () => {
    const { page, context, problems, origin } = await openPage();
    const catalogue = (await call('GET', '/policies')).json() as {
      policies: Array<{ path: string; displayName: string }>;
    };
    // One stored item of each policy kind (from the seed), to open its page.
    const seeded = new Map<string, string>();
    for (const { url } of goldenPuts()) {
      const parts = url.split('?')[0].split('/');
      if (parts[1] === 'meshes' && parts[2] === 'default' && parts.length === 5)
        seeded.set(parts[3], parts[4]);
    }
    const views: Array<[string, string, string]> = [
      ['/', 'overview', 'default'],
      ['/meshes', 'meshes', 'default'],
      ['/meshes/default', 'mesh', 'Insight'],
      ['/meshes/default/dataplanes', 'proxies', 'dp-00'],
      ['/meshes/default/dataplanes/dp-00', 'proxy', '10.1.0.1'],
      ['/meshes/default/dataplanes/dp-00?tab=Policies', 'proxy-policies', 'gui-tp'],
      ['/meshes/default/dataplanes/dp-00?tab=Rules', 'proxy-rules', 'policyType'],
      ['/meshes/default/dataplanes/dp-00?tab=xDS%20config', 'proxy-xds', 'configs'],
      [
        '/meshes/default/dataplanes/dp-00?tab=Config%20timeline',
        'proxy-config-timeline',
        'create Dataplane default/dp-59',
      ],
      ['/meshes/default/dataplanes/dp-00?tab=Stats', 'proxy-stats', 'cluster_manager'],
      ['/meshes/default/dataplanes/dp-00?tab=Clusters', 'proxy-clusters', 'Clusters'],
      ['/meshes/default/services', 'services', 'backend'],
      ['/meshes/default/policies', 'policies', 'Traffic Permission'],
      ['/meshes/default/gateways', 'gateways', 'Gateways in default'],
      ['/zones', 'zones', 'Zones'],
      ['/zone-ingresses', 'zone-ingresses', 'Zone ingresses'],
      ['/zoneegresses', 'zone-egresses', 'Zone egresses'],
      ['/meshes/default/secrets', 'mesh-secrets', 'p-1'],
      ['/global-secrets', 'global-secrets', 'token'],
      ['/audit', 'audit', 'gui-tp'],
      ['/changes', 'changes', 'Preview'],
      ['/diagnostics', 'diagnostics', 'apiServer'],
      ['/sign-in', 'sign-in', 'User token'],
    ];
    for (const p of catalogue.policies) {
      views.push([`/meshes/default/${p.path}`, `list-${p.path}`, p.displayName]);
      const name = seeded.get(p.path);
      if (name) views.push([`/meshes/default/${p.path}/${name}`, `policy-${p.path}`, name]);
    }
    expect(views.length).toBeGreaterThan(40);
    for await (const [path, shot, text] of tour(page, origin, views, (v) => v[0])) {
      const body = await page.locator('main').innerText();
      expect(body, path).toContain(text);
      const html = await page.content();
      for (const data of SECRET_DATA) expect(html, path).not.toContain(data);
      expect(await seriousA11yViolations(page), path).toEqual([]);
      if (!shot.startsWith('list-') && !shot.startsWith('policy-')) await screenshot(page, shot);
      expectNoProblems(problems, path);
    }
    await context.close();
  }, 300_000);

  it('filters and pages the proxies on the server', async () => {
    const { page, context, problems, origin } = await openPage();
    const count = async (query: string) =>
      ((await call('GET', `/meshes/default/dataplanes+insights?size=1${query}`)).json() as { total: number })
        .total;
    const total = await count('');
    const web = await count('&tag=mesh.io/service:web');
    expect(total).toBeGreaterThanOrEqual(PROXIES);
    expect(web).toBeGreaterThanOrEqual(PROXIES / 2);
    await visit(page, origin, '/meshes/default/dataplanes');
    await expect.poll(() => page.locator('main').innerText()).toContain(`1–50 of ${total}`);
    await page.getByRole('button', { name: 'Next page' }).click();
    await expect
      .poll(() => page.locator('main').innerText())
      .toContain(`51–${Math.min(100, total)} of ${total}`);
    await page.getByLabel('Service').fill('web');
    await expect.poll(() => page.locator('main').innerText()).toContain(`of ${web}`);
    await page.getByLabel('Tag (key:value)').fill('version:v2');
    // web (even) and v2 (multiple of 3): 0, 6, …, 54.
    await expect.poll(() => page.locator('main tbody tr').count()).toBe(10);
    expect(await page.locator('main tbody').innerText()).toContain('dp-54');
    await page.getByLabel('Status').selectOption('online');
    await expect.poll(() => page.locator('main').innerText()).toContain('No proxy matches these filters');
    await screenshot(page, 'proxies-filtered');
    expectNoProblems(problems, 'filters');
    await context.close();
  });

  it('opens a proxy from the list, then the policies that apply to it', async () => {
    const { page, context, problems, origin } = await openPage();
    await visit(page, origin, '/meshes/default/dataplanes');
    await page.getByRole('link', { name: 'dp-02', exact: true }).click();
    await settled(page);
    expect(page.url()).toBe(`${origin}/gui/meshes/default/dataplanes/dp-02`);
    await page.getByRole('link', { name: 'Policies', exact: true }).last().click();
    await settled(page);
    await expect.poll(() => page.locator('main').innerText()).toContain('gui-tp');
    expectNoProblems(problems, 'proxy policies');
    await context.close();
  });

  it("diffs two revisions of a policy's history, and reverts after showing what it will write", async () => {
    const { page, context, problems, origin } = await openPage();
    await visit(page, origin, '/meshes/default/traffic-permissions/gui-tp');
    const [first, , third] = tpRevisions;
    await page.getByLabel(`Compare revision ${first}`).check();
    await page.getByLabel(`Compare revision ${third}`).check();
    const diff = page.getByLabel(`Difference between revision ${first} and ${third}`);
    await expect.poll(() => diff.innerText()).toContain('-       mesh.io/service: backend');
    expect(await diff.innerText()).toContain('+       mesh.io/service: "*"');
    await screenshot(page, 'policy-history-diff');
    await page.getByRole('button', { name: `Revert to ${first}` }).click();
    const dialog = page.getByRole('dialog');
    await expect.poll(() => dialog.innerText()).toContain('mesh.io/service: backend');
    await screenshot(page, 'policy-revert');
    // Nothing written before the user confirms.
    expect(
      (await call('GET', '/meshes/default/traffic-permissions/gui-tp')).json().destinations as unknown[],
    ).toEqual([{ match: { 'mesh.io/service': '*' } }]);
    await dialog.getByRole('button', { name: 'Revert', exact: true }).click();
    await eventually(async () => {
      const now = (await call('GET', '/meshes/default/traffic-permissions/gui-tp')).json();
      expect(now.destinations).toEqual([{ match: { 'mesh.io/service': 'backend' } }]);
      return true;
    });
    // The history shows the revert as a new revision, by the loopback admin.
    await expect.poll(() => page.locator('main tbody').first().innerText()).toContain('admin');
    await expect.poll(() => page.getByRole('row').count()).toBeGreaterThanOrEqual(5);
    expectNoProblems(problems, 'revert');
    await context.close();
  });

  it('travels to a revision before a change, marks it, and comes back to now', async () => {
    const { page, context, problems, origin } = await openPage();
    await visit(page, origin, '/meshes/default/dataplanes');
    const before = (await call('GET', '/meshes/default/dataplanes/dp-00')).json() as {
      modificationTime: string;
    };
    expect(before).toBeTruthy();
    // Revision 1 precedes every proxy: the list was empty then.
    await page.getByLabel('As of revision or time').fill('1');
    await page.getByRole('button', { name: 'Go' }).click();
    await expect.poll(() => page.locator('main').innerText()).toContain('Viewing the past');
    await settled(page);
    expect(await page.locator('main').innerText()).toContain('No data plane proxy in this mesh yet');
    await screenshot(page, 'time-travel');
    await page.getByRole('button', { name: 'Back to now' }).click();
    await expect.poll(() => page.locator('main').innerText()).toContain('dp-00');
    expect(await page.locator('main').innerText()).not.toContain('Viewing the past');
    expectNoProblems(problems, 'time travel');
    await context.close();
  });

  it('previews a two-document change set, shows errors at their lines, then applies it', async () => {
    const { page, context, problems, origin } = await openPage();
    await visit(page, origin, '/changes');
    const editor = page.getByLabel('Resources (YAML)');
    const set = (port: string) =>
      [
        'type: Dataplane',
        'mesh: default',
        'name: set-1',
        'networking:',
        '  address: 10.9.0.1',
        '  inbound:',
        `    - port: ${port}`,
        '      tags: {mesh.io/service: set}',
        '---',
        'type: TrafficPermission',
        'mesh: default',
        'name: set-tp',
        'sources: [{match: {mesh.io/service: set}}]',
        'destinations: [{match: {mesh.io/service: web}}]',
        '',
      ].join('\n');
    await editor.fill(set('"not-a-port"'));
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.locator('#change-errors').innerText()).toContain('Line 7');
    await screenshot(page, 'changes-error');
    problems.clear(); // the refused preview is an answer of 400, shown to the user on purpose
    await editor.fill(set('8080'));
    await page.getByRole('button', { name: 'Preview' }).click();
    await expect.poll(() => page.locator('main').innerText()).toContain('Preview: nothing written yet');
    expect((await call('GET', '/meshes/default/dataplanes/set-1')).status).toBe(404);
    // What the set does to proxies: set-1's inbound gains set-tp (it is new), and the web proxies'.
    const impact = await page.locator('main').innerText();
    expect(impact).toMatch(/Impact on proxies \(\d+\)/);
    expect(impact).toContain('TrafficPermission: added set-tp');
    await screenshot(page, 'changes-preview', { fullPage: true, height: 1100 });
    await page.getByRole('button', { name: 'Apply' }).click();
    await expect.poll(() => page.locator('main').innerText()).toContain('Applied at revision');
    expect((await call('GET', '/meshes/default/dataplanes/set-1')).status).toBe(200);
    expect((await call('GET', '/meshes/default/traffic-permissions/set-tp')).status).toBe(200);
    // The set's id leads to the audit log of its two changes.
    await page.getByRole('link', { name: /^Changes of change set/ }).click();
    await settled(page);
    await expect.poll(() => page.locator('main tbody tr').count()).toBe(2);
    expect(await page.locator('main tbody').innerText()).toContain('set-tp');
    expectNoProblems(problems, 'apply');
    await context.close();
  });

  it('shows a write made by another client live, in the proxy list and the audit log', async () => {
    const { page, context, problems, origin } = await openPage();
    await visit(page, origin, '/audit');
    await expect.poll(() => page.locator('main').innerText()).toContain('Following new changes live');
    const second = await context.newPage();
    const problems2 = watchProblems(second);
    await visit(second, origin, '/meshes/default/dataplanes?name=live-');
    await expect.poll(() => second.locator('header').innerText()).toContain('Live');
    await put('/meshes/default/dataplanes/live-1', { ...proxy(0).body, name: 'live-1' });
    await expect.poll(() => page.locator('main tbody tr').first().innerText()).toContain('live-1');
    await expect.poll(() => second.locator('main').innerText()).toContain('live-1');
    await screenshot(page, 'audit-live');
    expectNoProblems(problems, 'audit');
    expectNoProblems(problems2, 'live list');
    await context.close();
  });

  it('shows a proxy going online and offline live (runtime status, not in the log)', async () => {
    const { page, context, problems, origin } = await openPage();
    await visit(page, origin, '/meshes/default/dataplanes?name=dp-00');
    await expect.poll(() => page.locator('header').innerText()).toContain('Live');
    expect(await page.locator('main tbody').innerText()).toContain('offline');
    const token = await call('POST', '/tokens/dataplane', { name: 'dp-00', mesh: 'default' });
    expect(token.status, token.text).toBe(200);
    const ads = rawAdsClient(xdsPort);
    ads.send({
      type_url: LISTENER,
      resource_names: ['backend'],
      node: rawNode('default.dp-00', { 'dataplane.token': token.text }),
    });
    await ads.next();
    await expect.poll(() => page.locator('main tbody').innerText()).toContain('online');
    await screenshot(page, 'proxy-online');
    ads.close();
    await expect.poll(() => page.locator('main tbody').innerText()).toContain('offline');
    expectNoProblems(problems, 'live status');
    await context.close();
  });

  it('is readable at phone width', async () => {
    const { page, context, problems, origin } = await openPage({ viewport: { width: 390, height: 844 } });
    const paths = [
      '/',
      '/meshes/default/dataplanes',
      '/meshes/default/dataplanes/dp-00',
      '/meshes/default/traffic-permissions/gui-tp',
      '/audit',
      '/changes',
      '/diagnostics',
    ];
    for await (const path of tour(page, origin, paths, (p) => p)) {
      // Nothing wider than the screen: tables and code scroll on their own.
      const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
      expect(overflow, path).toBeLessThanOrEqual(0);
      expect(await seriousA11yViolations(page), path).toEqual([]);
    }
    await visit(page, origin, '/meshes/default/dataplanes');
    await screenshot(page, 'phone-proxies');
    expectNoProblems(problems, 'phone');
    await context.close();
  });
});

describe('keyboard and a lost connection', () => {
  it('is driven by the keyboard: a skip link first, then the menu, with a visible focus', async () => {
    const { page, context, problems, origin } = await openPage();
    await visit(page, origin, '/');
    await page.keyboard.press('Tab');
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Skip to content');
    const outline = () =>
      page.evaluate(() => getComputedStyle(document.activeElement as Element).outlineStyle);
    expect(await outline()).toBe('solid');
    // Past the header's controls to the menu, then a link followed with Enter.
    for (let i = 0; i < 30; i += 1) {
      await page.keyboard.press('Tab');
      if ((await page.evaluate(() => document.activeElement?.textContent)) === 'Audit log') break;
    }
    expect(await page.evaluate(() => document.activeElement?.textContent)).toBe('Audit log');
    expect(await outline()).toBe('solid');
    await page.keyboard.press('Enter');
    await settled(page);
    expect(page.url()).toBe(`${origin}/gui/audit`);
    // The new view's heading has the focus, so that a screen reader announces it.
    await expect.poll(() => page.evaluate(() => document.activeElement?.tagName)).toBe('H1');
    expectNoProblems(problems, 'keyboard');
    await context.close();
  });

  it('shows a lost connection, and resumes from the last revision seen when the server is back', async () => {
    const { page, context, problems, origin } = await openPage();
    await visit(page, origin, '/meshes/default/dataplanes?name=outage-');
    await expect.poll(() => page.locator('header').innerText()).toContain('Live');
    cp.proc.kill('SIGTERM');
    await cp.exited;
    await expect
      .poll(() => page.locator('header').innerText(), { timeout: 10_000 })
      .toContain('Connection lost');
    await screenshot(page, 'connection-lost');
    cp = startMeshCp({
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: dir.path,
      MESH_API_SERVER_HTTPS_ENABLED: 'false',
      MESH_API_SERVER_BIND_ADDRESS: '127.0.0.1',
      MESH_API_SERVER_PORT: String(port),
    });
    await cp.ready;
    // Written as soon as the server is back: whether the GUI reconnects before or after it, it sees
    // it, as its stream resumes after the last revision it saw (Last-Event-ID).
    await put('/meshes/default/dataplanes/outage-1', { ...proxy(1).body, name: 'outage-1' });
    await expect.poll(() => page.locator('main').innerText(), { timeout: 20_000 }).toContain('outage-1');
    expect(await page.locator('header').innerText()).toContain('Live');
    // What the browser logged while the server was down (refused connections) was expected.
    problems.clear();
    await context.close();
  });
});

describe('a caller who is no admin', () => {
  it('signs in with a reader token and is offered no write and no secret', async () => {
    const res = await call('POST', '/tokens/user', {
      name: 'rita',
      groups: ['mesh-system:reader'],
      validFor: '1h',
    });
    expect(res.status, res.text).toBe(200);
    const { page, context, problems, origin } = await openPage({ host: 'gui.test' });
    await visit(page, origin, '/sign-in');
    await expect.poll(() => page.locator('header').innerText()).toContain('anonymous');
    await page.getByLabel('User token').fill(res.text);
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect.poll(() => page.locator('header').innerText()).toContain('rita (token)');
    // The token is in session storage, never in a URL.
    expect(page.url()).not.toContain(res.text.slice(0, 20));
    expect(await page.evaluate(() => sessionStorage.getItem('mesh-cp.token'))).toBe(res.text);
    const nav = await page.getByRole('navigation', { name: 'Main' }).innerText();
    expect(nav).not.toContain('secrets');
    expect(nav).not.toContain('Apply changes');
    await visit(page, origin, '/meshes/default/traffic-permissions/gui-tp');
    expect(await page.getByRole('button', { name: /^Revert/ }).count()).toBe(0);
    await visit(page, origin, '/changes');
    expect(await page.getByRole('button', { name: 'Apply' }).count()).toBe(0);
    expect(await page.locator('main').innerText()).toContain('You may not write here');
    await visit(page, origin, '/global-secrets');
    expect(await page.locator('main').innerText()).toContain('Only admins may see secrets');
    await visit(page, origin, '/meshes/default/secrets');
    const html = await page.content();
    for (const data of SECRET_DATA) expect(html).not.toContain(data);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'reader');
    expectNoProblems(problems, 'reader');
    await context.close();
  });

  it('is anonymous without a token and may not write: the same-origin checks hold for its own calls', async () => {
    const { page, context, problems, origin } = await openPage({ host: 'gui.test' });
    await visit(page, origin, '/');
    await expect.poll(() => page.locator('header').innerText()).toContain('anonymous (anonymous)');
    // A write from the page itself (same origin, no token) is refused: anonymous callers read only.
    const status = await page.evaluate(async () => {
      const r = await fetch('/meshes/default/dataplanes/x', {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ type: 'Dataplane', mesh: 'default', name: 'x' }),
      });
      return r.status;
    });
    expect(status).toBe(403);
    problems.clear();
    await context.close();
  });
});

describe('a Global and a zone, as processes', () => {
  const procs: CpProcess[] = [];
  let gdir: ReturnType<typeof tempDir>;
  let zdir: ReturnType<typeof tempDir>;
  let g: string;
  let z: string;
  const at = async (origin: string, method: string, path: string, body?: unknown) => {
    const res = await fetch(origin + path, {
      method,
      headers: body === undefined ? {} : { 'content-type': 'application/json' },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, text: await res.text() };
  };
  beforeAll(async () => {
    gdir = tempDir('mesh-cp-gui-global-');
    zdir = tempDir('mesh-cp-gui-zone-');
    const global = startMeshCp({
      MESH_MODE: 'global',
      MESH_STORE_LEVEL_PATH: gdir.path,
      MESH_API_SERVER_HTTPS_ENABLED: 'false',
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
    });
    procs.push(global);
    const gready = await global.ready;
    g = `http://127.0.0.1:${gready.apiPort}`;
    const token = await at(g, 'POST', '/tokens/zone', { zone: 'zone-1', validFor: '1h' });
    expect(token.status, token.text).toBe(200);
    const zone = startMeshCp({
      MESH_MODE: 'zone',
      MESH_STORE_LEVEL_PATH: zdir.path,
      MESH_API_SERVER_HTTPS_ENABLED: 'false',
      MESH_MULTIZONE_ZONE_NAME: 'zone-1',
      MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: `grpcs://127.0.0.1:${gready.kdsPort}`,
      MESH_MULTIZONE_ZONE_KDS_TOKEN: token.text,
      MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE: join(gdir.path, 'tls', 'cert.pem'),
    });
    procs.push(zone);
    z = `http://127.0.0.1:${(await zone.ready).apiPort}`;
    await eventually(
      async () => (await at(z, 'GET', '/meshes/default')).status === 200,
      15_000,
      'the mesh on the zone',
    );
    const dp = await at(z, 'PUT', '/meshes/default/dataplanes/zoned-1', {
      ...proxy(4).body,
      name: 'zoned-1',
    });
    expect(dp.status, dp.text).toBe(201);
    await eventually(
      async () => (await at(g, 'GET', '/meshes/default/dataplanes/zone-1.zoned-1')).status === 200,
      15_000,
      'the proxy on Global',
    );
    for (const dest of ['backend', 'web']) {
      const res = await at(g, 'PUT', '/meshes/default/traffic-permissions/gui-tp', tp(dest));
      expect([200, 201], res.text).toContain(res.status);
    }
    await eventually(
      async () => (await at(z, 'GET', '/meshes/default/traffic-permissions/gui-tp')).text.includes('"web"'),
      15_000,
      'the policy on the zone',
    );
  }, 90_000);
  afterAll(async () => {
    for (const p of procs) p.proc.kill('SIGTERM');
    await Promise.all(procs.map((p) => p.exited));
    gdir?.cleanup();
    zdir?.cleanup();
  });

  it('every view on Global, seeded with every kind, and on the zone loads with no console error, no failed request, no serious axe violation', async () => {
    // Every kind of the golden PUTs, meshes first: on Global, or on the zone for the kinds only a
    // zone takes (Global answers 405 for those).
    const puts = goldenPuts().filter((p) => !p.url.includes('dryRun'));
    const isMesh = (u: string) => u.startsWith('/meshes/') && u.split('/').length === 3;
    puts.sort((a, b) => Number(isMesh(b.url)) - Number(isMesh(a.url)));
    const where = { global: 0, zone: 0 };
    for (const { url, body } of puts) {
      const res = await at(g, 'PUT', url, body);
      if (res.status === 200 || res.status === 201) {
        where.global++;
        continue;
      }
      expect(res.status, `${url}: ${res.text}`).toBe(405);
      const onZone = await at(z, 'PUT', url, body);
      expect([200, 201], `${url} on the zone: ${onZone.text}`).toContain(onZone.status);
      where.zone++;
    }
    expect(where.global).toBeGreaterThan(20);
    expect(where.zone).toBeGreaterThan(0);
    const catalogue = JSON.parse((await at(g, 'GET', '/policies')).text) as {
      policies: Array<{ path: string }>;
    };
    const views = [
      '/',
      '/meshes',
      '/meshes/default',
      '/meshes/default/dataplanes',
      '/meshes/default/services',
      '/meshes/default/policies',
      '/meshes/default/gateways',
      '/zones',
      '/zone-ingresses',
      '/zoneegresses',
      '/meshes/default/secrets',
      '/global-secrets',
      '/audit',
      '/changes',
      '/diagnostics',
      ...catalogue.policies.map((p) => `/meshes/default/${p.path}`),
    ];
    const { page, context, problems } = await openPage();
    for (const origin of [g, z]) {
      for await (const path of tour(page, origin, views, (p) => p)) {
        const html = await page.content();
        for (const data of SECRET_DATA) expect(html, path).not.toContain(data);
        expect(await seriousA11yViolations(page), `${origin} ${path}`).toEqual([]);
        expectNoProblems(problems, `${origin} ${path}`);
      }
    }
    await context.close();
  }, 180_000);

  it("Global's GUI shows the zone online and its proxies; the zone's shows its own, policies read-only", async () => {
    const { page, context, problems } = await openPage();
    await visit(page, g, '/zones');
    await expect.poll(() => page.locator('main').innerText()).toContain('online');
    expect(await page.locator('main').innerText()).toContain('zone-1');
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'global-zones');
    await visit(page, g, '/');
    expect(await page.locator('main').innerText()).toContain('1 of 1 zones online');
    await visit(page, g, '/meshes/default/dataplanes');
    expect(await page.locator('main').innerText()).toContain('zone-1.zoned-1');
    expectNoProblems(problems, 'global');
    // A zone's proxy seen from Global: every view of it (Global asks the zone for its config).
    for (const tab of ['', 'Policies', 'Rules', 'xDS config', 'Config timeline', 'Stats', 'Clusters']) {
      const path = `/meshes/default/dataplanes/zone-1.zoned-1${tab ? `?tab=${encodeURIComponent(tab)}` : ''}`;
      await visit(page, g, path);
      expectNoProblems(problems, `global ${path}`);
    }

    await visit(page, z, '/meshes/default/dataplanes');
    await expect.poll(() => page.locator('header').innerText()).toContain('zone');
    expect(await page.locator('main').innerText()).toContain('zoned-1');
    // Global takes policy writes: a revert is offered there; a zone takes none: no revert offered.
    await visit(page, g, '/meshes/default/traffic-permissions/gui-tp');
    expect(await page.getByRole('button', { name: /^Revert/ }).count()).toBe(1);
    await visit(page, z, '/meshes/default/traffic-permissions');
    await page.getByRole('link', { name: 'gui-tp', exact: true }).click();
    await settled(page);
    expect(await page.locator('main').innerText()).toContain('History');
    expect(await page.getByRole('checkbox').count()).toBe(2);
    expect(await page.getByRole('button', { name: /^Revert/ }).count()).toBe(0);
    expect(await seriousA11yViolations(page)).toEqual([]);
    await screenshot(page, 'zone-policy');
    expectNoProblems(problems, 'zone');
    await context.close();
  });
});
