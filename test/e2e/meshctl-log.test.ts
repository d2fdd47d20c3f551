import { createHash } from 'node:crypto';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { b64, decodeJwt } from '../helpers/auth.js';
import { startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { callApi, meshctl, startMeshctl } from '../helpers/meshctl.js';
import { eventually } from '../helpers/multizone.js';

/**
 * What only mesh-cp can do: `meshctl history|diff|revert|watch|audit`, the built
 * CLI as a process against a control plane listening on a free port. Expected values come from the
 * API itself (`/_history`, `/_events`, `?revision=` reads), never from the CLI's own code.
 */
const SVC = 'mesh.io/service';
const TP = 'traffic-permissions';

type Page = {
  total: number;
  items: Array<Record<string, unknown> & { revision: number }>;
  next: string | null;
};

describe('meshctl history, diff, revert, watch and audit', () => {
  const dir = tempDir('e2e-meshctl-log-');
  const store = join(dir.path, 'data');
  let cp: ControlPlane;
  let address: string;

  const api = async (method: string, path: string, body?: unknown) => {
    const res = await callApi(address, method, path, body);
    expect(res.status, `${method} ${path}: ${res.text}`).toBeLessThan(300);
    return res;
  };
  const permission = (mesh: string, name: string, source: string) =>
    api('PUT', `/meshes/${mesh}/${TP}/${name}`, {
      type: 'TrafficPermission',
      mesh,
      name,
      sources: [{ match: { [SVC]: source } }],
      destinations: [{ match: { [SVC]: '*' } }],
    });
  const head = async (): Promise<number> =>
    Number((await api('GET', '/meshes')).headers.get('x-mesh-revision'));
  const history = async (path: string): Promise<Page> => (await api('GET', `${path}/_history`)).body as Page;
  // No config file (none is created by reads): every command names the server with --api-address.
  const config = join(dir.path, 'meshctl-config.yaml');
  const run = (...args: string[]) => meshctl(['--api-address', address, ...args], { config });
  const watchOf = (...args: string[]) => startMeshctl(['--api-address', address, ...args], { config });

  const start = async (port = '0') => {
    cp = await startListeningPlane({
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: store,
      MESH_API_SERVER_PORT: port,
    });
    address = `http://127.0.0.1:${cp.ports.api}`;
  };

  beforeAll(async () => {
    await start();
    await permission('default', 'web-in', 'web');
    await permission('default', 'web-in', 'api');
    await permission('default', 'web-in', 'gateway');
  });
  afterAll(async () => {
    await cp?.close();
    dir.cleanup();
  });

  it('history prints one row per change with the revisions, operations and actors of /_history', async () => {
    const page = await history(`/meshes/default/${TP}/web-in`);
    const out = await run('history', 'traffic-permission', 'web-in');
    expect(out.stderr).toBe('');
    expect(out.code).toBe(0);
    const rows = out.stdout.trim().split('\n');
    expect(rows[0].split(/\s+/)).toEqual(['REVISION', 'TIME', 'OPERATION', 'ACTOR']);
    expect(rows.slice(1).map((r) => r.split(/\s+/))).toEqual(
      page.items.map((i) => [String(i.revision), i.time, i.operation, (i.actor as { name: string }).name]),
    );
    const json = await run('history', TP, 'web-in', '-o', 'json');
    expect(JSON.parse(json.stdout)).toEqual(page);
  });

  it('history pages with --size and --offset and says how to get the rest', async () => {
    const page = await history(`/meshes/default/${TP}/web-in`);
    const first = await run('history', TP, 'web-in', '--size', '2');
    expect(first.stdout).toContain(`Rest of the history: meshctl history ${TP} web-in --size 2 --offset 2`);
    const rest = await run('history', TP, 'web-in', '--size', '2', '--offset', '2');
    expect(rest.stdout).toContain(`\n${page.items[2].revision} `);
    expect(rest.stdout).not.toContain('Rest of the history');
  });

  it('history of a mesh and of a deleted resource; a resource that never existed is the server’s 404', async () => {
    const mesh = await run('history', 'mesh', 'default');
    expect(mesh.stdout).toMatch(/\n1 +\S+ +create /);
    await permission('default', 'short-lived', 'web');
    await api('DELETE', `/meshes/default/${TP}/short-lived`);
    const gone = await run('history', TP, 'short-lived');
    expect(gone.code).toBe(0);
    expect(gone.stdout).toMatch(/ delete /);
    const never = await run('history', TP, 'never-was');
    expect(never.code).not.toBe(0);
    expect(never.stderr).toContain('Error: Not found');
    expect(never.stderr).toContain('never-was');
  });

  it('history of a computed kind is a usage error naming the stored kinds', async () => {
    const out = await run('history', 'dataplanes+insights', 'x');
    expect(out.code).toBe(1);
    expect(out.stderr).toContain('not stored');
    expect(out.stderr).toContain('traffic-permissions');
  });

  it('diff shows the lines that changed between two revisions, and up to the head by default', async () => {
    const [a, b, c] = (await history(`/meshes/default/${TP}/web-in`)).items.map((i) => i.revision);
    const ab = await run('diff', TP, 'web-in', '--revision', String(a), '--to', String(b));
    expect(ab.code).toBe(0);
    expect(ab.stdout).toContain(
      `--- meshes/default/${TP}/web-in@${a}\n+++ meshes/default/${TP}/web-in@${b}\n`,
    );
    expect(ab.stdout).toContain(`-      ${SVC}: web\n+      ${SVC}: api\n`);
    const toHead = await run('diff', TP, 'web-in', '--revision', String(a));
    expect(toHead.stdout).toContain(`+++ meshes/default/${TP}/web-in@${await head()}`);
    expect(toHead.stdout).toContain(`-      ${SVC}: web\n+      ${SVC}: gateway\n`);
    const same = await run('diff', TP, 'web-in', '--revision', String(c), '--to', String(c));
    expect(same).toMatchObject({ code: 0, stdout: '' });
  });

  it('diff from before a resource existed shows all of it added', async () => {
    const first = (await history(`/meshes/default/${TP}/web-in`)).items[0].revision;
    const out = await run('diff', TP, 'web-in', '--revision', String(first - 1), '--to', String(first));
    expect(out.code).toBe(0);
    expect(out.stdout).toContain('+type: TrafficPermission\n');
    expect(out.stdout).not.toMatch(/^-[^-]/m);
  });

  it('diff at a revision above the head prints the server’s message and exits non-zero', async () => {
    const h = await head();
    const out = await run('diff', TP, 'web-in', '--revision', String(h + 5));
    expect(out.code).not.toBe(0);
    expect(out.stdout).toBe('');
    expect(out.stderr).toContain('Invalid query parameters');
    expect(out.stderr).toContain(`revision: must not be above the head revision ${h}`);
  });

  it('revert --dry-run prints the diff it would make and writes nothing; revert writes it once', async () => {
    await permission('default', 'revert-me', 'one');
    await permission('default', 'revert-me', 'two');
    const path = `/meshes/default/${TP}/revert-me`;
    const target = (await history(path)).items[0].revision;
    const before = await head();
    const dry = await run('revert', TP, 'revert-me', '--to-revision', String(target), '--dry-run');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain(`-      ${SVC}: two\n+      ${SVC}: one\n`);
    expect(dry.stdout).toContain('dry run');
    expect(await head()).toBe(before);

    const done = await run('revert', TP, 'revert-me', '--to-revision', String(target));
    expect(done.code).toBe(0);
    expect(done.stdout).toBe(
      `TrafficPermission "revert-me" in mesh "default" reverted to revision ${target}: updated (revision ${before + 1})\n`,
    );
    const now = (await api('GET', path)).body as Record<string, unknown>;
    const then = (await api('GET', `${path}?revision=${target}`)).body as Record<string, unknown>;
    expect(now.sources).toEqual(then.sources);

    const again = await run('revert', TP, 'revert-me', '--to-revision', String(target));
    expect(again.stdout).toContain('unchanged');
    expect(await head()).toBe(before + 1);
  });

  it('revert to a revision before the resource existed deletes it; -o json prints the server’s answer', async () => {
    await permission('default', 'revert-gone', 'one');
    const created = (await history(`/meshes/default/${TP}/revert-gone`)).items[0].revision;
    const out = await run('revert', TP, 'revert-gone', '--to-revision', String(created - 1), '-o', 'json');
    expect(out.code).toBe(0);
    expect(JSON.parse(out.stdout)).toEqual({});
    const last = (await history(`/meshes/default/${TP}/revert-gone`)).items.at(-1);
    expect(last?.operation).toBe('delete');
  });

  it('revert above the head prints the server’s cause on toRevision', async () => {
    const h = await head();
    const out = await run('revert', TP, 'web-in', '--to-revision', String(h + 1));
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain(`toRevision: must not be above the head revision ${h}`);
  });

  it('audit prints the entries of /_events with the same filters, and pages', async () => {
    const query = `kind=TrafficPermission&mesh=default&name=web-in`;
    const page = (await api('GET', `/_events?${query}`)).body as Page;
    const out = await run('audit', '--kind', TP, '--mesh', 'default', '--name', 'web-in');
    expect(out.code).toBe(0);
    const rows = out.stdout.trim().split('\n');
    expect(rows[0].split(/\s+/)).toEqual(['REVISION', 'TIME', 'OPERATION', 'KIND', 'NAME', 'ACTOR']);
    expect(rows.slice(1).map((r) => r.split(/\s+/).slice(0, 5))).toEqual(
      page.items.map((i) => [String(i.revision), i.time, i.operation, 'TrafficPermission', 'default/web-in']),
    );
    const json = await run(
      'audit',
      '--kind',
      'TrafficPermission',
      '--mesh',
      'default',
      '--name',
      'web-in',
      '-o',
      'json',
    );
    expect(JSON.parse(json.stdout)).toEqual(page);

    const paged = await run('audit', '--from-revision', '2', '--size', '1');
    expect(paged.stdout).toMatch(/\n2 +\S+ +create +TrafficPermission +default\/allow-all-default/);
    expect(paged.stdout).toContain('Rest of the log: meshctl audit --from-revision 2 --size 1 --offset 1');
  });

  it("history and audit show a secret's data as its sha256, and the data with --include-secret-data", async () => {
    await api('PUT', '/meshes/default/secrets/db-password', {
      type: 'Secret',
      mesh: 'default',
      name: 'db-password',
      data: b64('hunter2'),
    });
    const digest = { sha256: createHash('sha256').update('hunter2').digest('hex') };
    const hidden = await run('history', 'secret', 'db-password', '-o', 'json');
    expect(hidden.code, hidden.stderr).toBe(0);
    expect(
      (JSON.parse(hidden.stdout) as Page).items.map((i) => (i.resource as { data: unknown }).data),
    ).toEqual([digest]);
    const shown = await run('history', 'secret', 'db-password', '-o', 'json', '--include-secret-data');
    expect(
      (JSON.parse(shown.stdout) as Page).items.map((i) => (i.resource as { data: unknown }).data),
    ).toEqual([b64('hunter2')]);
    const audit = async (...flags: string[]) =>
      (
        JSON.parse(
          (await run('audit', '--kind', 'secret', '--name', 'db-password', '-o', 'json', ...flags)).stdout,
        ) as Page
      ).items.map((i) => (i.resource as { data: unknown }).data);
    expect(await audit()).toEqual([digest]);
    expect(await audit('--include-secret-data')).toEqual([b64('hunter2')]);
  });

  it('audit errors: an unknown kind is a usage error, a bad filter value the server’s causes', async () => {
    const kind = await run('audit', '--kind', 'bogus');
    expect(kind.code).toBe(1);
    expect(kind.stderr).toContain('unknown kind "bogus"');
    const h = await head();
    const from = await run('audit', '--from-revision', String(h + 2));
    expect(from.code).not.toBe(0);
    expect(from.stderr).toContain(
      `fromRevision: must not be above ${h + 1}, the next revision (the head revision is ${h})`,
    );
  });

  it('watch prints the backlog from --from-revision, then a live change, one line each, and stops on SIGINT', async () => {
    const from = (await history(`/meshes/default/${TP}/web-in`)).items[0].revision;
    const watch = watchOf('watch', '--from-revision', String(from), '--kind', TP, '--name', 'web-in');
    const backlog = (await history(`/meshes/default/${TP}/web-in`)).items;
    const lineOf = (i: Record<string, unknown> & { revision: number }) =>
      `${i.revision}  ${i.time}  ${i.operation}  TrafficPermission  default/web-in  ${(i.actor as { name: string }).name}\n`;
    const expected = backlog.map(lineOf).join('');
    await watch.until((out) => out === expected);
    await permission('default', 'web-in', 'live');
    const live = (await history(`/meshes/default/${TP}/web-in`)).items.at(-1)!;
    await permission('default', 'other', 'live'); // filtered out by --name
    await watch.until((out) => out === expected + lineOf(live));
    watch.proc.kill('SIGINT');
    const end = await watch.exited;
    expect(end.code).toBe(0);
    expect(end.stderr).toBe('');
    expect(end.stdout).toBe(expected + lineOf(live));
  });

  it('watch -o json prints one JSON object per line, the items of /_events', async () => {
    const h = await head();
    const watch = watchOf('watch', '-o', 'json', '--from-revision', String(h));
    const item = (await api('GET', `/_events?fromRevision=${h}`)).body as Page;
    await watch.until((out) => out.split('\n').length > item.items.length);
    watch.proc.kill('SIGINT');
    const lines = (await watch.exited).stdout.trim().split('\n');
    expect(lines.map((l) => JSON.parse(l) as unknown)).toEqual(item.items);
  });

  it('watch with a revision above the next one prints the server’s message and exits non-zero', async () => {
    const h = await head();
    const out = await run('watch', '--from-revision', String(h + 10));
    expect(out.code).not.toBe(0);
    expect(out.stderr).toContain('fromRevision: must not be above');
  });

  it('watch ends with the server’s message when its token is revoked while it streams', async () => {
    const issued = await fetch(`${address}/tokens/user`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ name: 'wendy', groups: ['mesh-system:reader'], validFor: '1h' }),
    });
    const token = await issued.text();
    expect(issued.status, token).toBe(200);
    const from = String((await head()) + 1);
    const watch = watchOf('--api-token', token, 'watch', '--kind', TP, '--from-revision', from);
    await permission('default', 'before-revocation', 'x');
    await watch.until((out) => out.includes('before-revocation'));
    const jti = decodeJwt(token).payload.jti as string;
    await api('PUT', '/global-secrets/user-token-revocations', {
      type: 'Secret',
      name: 'user-token-revocations',
      data: b64(jti),
    });
    const end = await watch.exited;
    expect(end.code).not.toBe(0);
    expect(end.stderr).toContain('Token revoked');
    expect(end.stderr).toMatch(/Error: Unauthorized: .*revoked.*\(HTTP 401\)/);
  });

  it('watch resumes after the control plane restarts, with every entry once', async () => {
    const port = String(cp.ports.api);
    const from = String((await head()) + 1);
    const args = ['watch', '--kind', TP, '--mesh', 'default'];
    const fromRevision = watchOf(...args, '--from-revision', from);
    // Without --from-revision a watch starts with what commits once it is connected: probe until it shows.
    const fromNow = watchOf(...args);
    let probes = 0;
    await eventually(async () => {
      await permission('default', `probe-${++probes}`, 'p');
      return fromNow.stdout().includes(`probe-`);
    }, 10_000);
    await permission('default', 'restart-1', 'a');
    await fromRevision.until((out) => out.includes('restart-1'));
    await fromNow.until((out) => out.includes('restart-1'));
    await cp.close();
    await start(port);
    await permission('default', 'restart-2', 'b');
    for (const watch of [fromRevision, fromNow]) {
      await watch.until((out) => out.includes('restart-2'));
      watch.proc.kill('SIGINT');
      const end = await watch.exited;
      expect(end.code).toBe(0);
      const revisions = end.stdout
        .trim()
        .split('\n')
        .map((l) => Number(l.split(' ')[0]));
      const events = (
        await api('GET', `/_events?kind=TrafficPermission&mesh=default&fromRevision=${revisions[0]}`)
      ).body as Page;
      expect(revisions).toEqual(events.items.map((i) => i.revision));
      expect(end.stderr).toContain('reconnect');
    }
  });
});
