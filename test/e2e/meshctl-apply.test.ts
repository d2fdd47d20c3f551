import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { meshctl } from '../helpers/meshctl.js';
import { tp } from '../helpers/multizone.js';

const MESH_AND_PROXY = `type: Mesh
name: shop
---
# a comment-only document in between is skipped
---
type: Dataplane
mesh: shop
name: web-{{ n }}
networking:
  address: {{ address }}
  inbound:
    - port: 8080
      servicePort: 80
      tags:
        mesh.io/service: web
`;

const permission = (name: string) => tp(name, 'shop', 'web');

// The built CLI as a process against a control plane on a free port (npm test builds dist first).
describe('meshctl apply and delete', () => {
  let cp: ControlPlane;
  let base: string;
  const dir = tempDir('meshctl-apply-');
  const config = join(dir.path, 'config.yaml');
  const run = (args: string[], stdin?: string) => meshctl(args, { config, stdin });
  const file = (name: string, text: string): string => {
    const p = join(dir.path, name);
    mkdirSync(join(p, '..'), { recursive: true });
    writeFileSync(p, text);
    return p;
  };
  const status = async (path: string): Promise<number> => (await fetch(`${base}${path}`)).status;

  beforeAll(async () => {
    cp = await startListeningPlane();
    base = `http://127.0.0.1:${cp.ports.api}`;
    expect((await run(['config', 'control-planes', 'add', '--name', 't', '--address', base])).code).toBe(0);
  });
  afterAll(async () => {
    await cp.close();
    dir.cleanup();
  });

  it('applies a multi-document YAML file with -v values, one line per resource', async () => {
    const f = file('shop.yaml', MESH_AND_PROXY);
    const r = await run(['apply', '-f', f, '-v', 'n=1', '-v', 'address=10.0.0.7']);
    expect(r.stderr).toBe('');
    expect(r.code).toBe(0);
    expect(r.stdout).toBe('Mesh shop created\nDataplane shop/web-1 created\n');
    const dp = (await (await fetch(`${base}/meshes/shop/dataplanes/web-1`)).json()) as {
      networking: { address: string };
    };
    expect(dp.networking.address).toBe('10.0.0.7');
    // Again: nothing changes, nothing is written.
    const head = cp.log.head();
    const again = await run(['apply', '-f', f, '-v', 'n=1', '-v', 'address=10.0.0.7']);
    expect(again.stdout).toBe('Mesh shop unchanged\nDataplane shop/web-1 unchanged\n');
    expect(cp.log.head()).toBe(head);
    const changed = await run(['apply', '-f', f, '-v', 'n=1', '-v', 'address=10.0.0.8']);
    expect(changed.stdout).toBe('Mesh shop unchanged\nDataplane shop/web-1 updated\n');
    expect(cp.log.head()).toBe(head + 1);
  });

  it('refuses a placeholder without a value before writing anything', async () => {
    const f = file('vars.yaml', MESH_AND_PROXY.replace('shop', 'vars'));
    const r = await run(['apply', '-f', f, '-v', 'n=1']);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(`Error: ${f}: no value for {{ address }} (give -v address=…)\n`);
    expect(await status('/meshes/vars')).toBe(404);
  });

  it('applies a directory (YAML and JSON files, in name order, subdirectories too) and stdin', async () => {
    file('dir/a.json', JSON.stringify(permission('from-json')));
    file(
      'dir/b/c.yml',
      `type: TrafficPermission\nmesh: shop\nname: from-yml\nsources: [{match: {mesh.io/service: '*'}}]\ndestinations: [{match: {mesh.io/service: web}}]\n`,
    );
    file('dir/notes.txt', 'not a resource');
    const r = await run(['apply', '-f', join(dir.path, 'dir')]);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      'TrafficPermission shop/from-json created\nTrafficPermission shop/from-yml created\n',
    );
    const stdin = await run(['apply', '-f', '-'], JSON.stringify(permission('from-stdin')));
    expect(stdin.stdout).toBe('TrafficPermission shop/from-stdin created\n');
    expect(await status('/meshes/shop/traffic-permissions/from-stdin')).toBe(200);
  });

  it('--dry-run says what would happen and writes nothing', async () => {
    const head = cp.log.head();
    const f = file(
      'dry.yaml',
      [
        permission('dry-new'),
        { ...permission('from-json'), destinations: [{ match: { 'mesh.io/service': 'db' } }] },
        permission('from-yml'),
      ]
        .map((p) => JSON.stringify(p))
        .join('\n---\n'),
    );
    const r = await run(['apply', '-f', f, '--dry-run']);
    expect(r.stderr).toBe('');
    expect(r.stdout).toBe(
      'TrafficPermission shop/dry-new created (dry run)\n' +
        'TrafficPermission shop/from-json updated (dry run)\n' +
        'TrafficPermission shop/from-yml unchanged (dry run)\n' +
        // What the set would do to the proxies of the mesh.
        '1 proxy would change:\n' +
        '  shop/web-1 (sidecar): inbound web: TrafficPermission dry-new added, TrafficPermission from-stdin removed\n',
    );
    expect(cp.log.head()).toBe(head);
    expect(await status('/meshes/shop/traffic-permissions/dry-new')).toBe(404);
  });

  it('--dry-run names each proxy whose policies and xDS config would change; --diff shows the config diff', async () => {
    const proxy = (name: string, service: string, outbound?: string) => ({
      type: 'Dataplane',
      mesh: 'shop',
      name,
      networking: {
        address: '10.0.1.1',
        inbound: [{ port: 8080, tags: { 'mesh.io/service': service, 'mesh.io/protocol': 'http' } }],
        ...(outbound ? { outbound: [{ port: 10001, tags: { 'mesh.io/service': outbound } }] } : {}),
      },
    });
    const setup = file(
      'backend.yaml',
      [proxy('backend-1', 'backend'), proxy('front-1', 'front', 'backend')]
        .map((d) => JSON.stringify(d))
        .join('\n---\n'),
    );
    expect((await run(['apply', '-f', setup])).code).toBe(0);
    const timeout = {
      type: 'Timeout',
      mesh: 'shop',
      name: 'to-backend',
      sources: [{ match: { 'mesh.io/service': 'front' } }],
      destinations: [{ match: { 'mesh.io/service': 'backend' } }],
      conf: { connectTimeout: '2s', http: { requestTimeout: '4s' } },
    };
    const f = file('timeout.yaml', JSON.stringify(timeout));
    const head = cp.log.head();
    const dry = await run(['apply', '-f', f, '--dry-run']);
    expect(dry.stderr).toBe('');
    expect(dry.stdout).toBe(
      'Timeout shop/to-backend created (dry run)\n' +
        '1 proxy would change:\n' +
        '  shop/front-1 (sidecar): outbound backend: Timeout to-backend added, Timeout timeout-all-shop removed; xDS Listener backend changed\n',
    );
    const diffed = await run(['apply', '-f', f, '--dry-run', '--diff']);
    expect(diffed.stderr).toBe('');
    expect(diffed.stdout).toContain('--- Listener/backend\tbefore\n+++ Listener/backend\tafter\n');
    expect(diffed.stdout).toMatch(/^\+\s+"seconds": 4,$/m);
    expect(cp.log.head()).toBe(head);
    const misuse = await run(['apply', '-f', f, '--diff']);
    expect(misuse.code).toBe(1);
    expect(misuse.stderr).toContain('--diff shows what a dry run would change: add --dry-run');
    expect(cp.log.head()).toBe(head);
  });

  it('round-trips: get -o yaml | apply -f - changes nothing (one resource and a whole list)', async () => {
    const head = cp.log.head();
    for (const args of [
      ['get', 'mesh', 'shop', '-o', 'yaml'],
      ['get', 'dataplane', 'web-1', '--mesh', 'shop', '-o', 'yaml'],
      ['get', 'traffic-permissions', '--mesh', 'shop', '-o', 'yaml'],
      ['get', 'mesh', 'default', '-o', 'json'],
    ]) {
      const got = await run(args);
      expect(got.code).toBe(0);
      const applied = await run(['apply', '-f', '-'], got.stdout);
      expect(applied.stderr).toBe('');
      expect(applied.stdout).toMatch(/ unchanged\n$/);
      expect(applied.stdout).not.toMatch(/created|updated/);
    }
    expect(cp.log.head()).toBe(head);
  });

  it('names the file and document of an invalid resource and prints the server’s title, details and causes', async () => {
    const f = file(
      'bad.yaml',
      `${JSON.stringify(permission('ok-before'))}\n---\ntype: Dataplane\nmesh: shop\nname: bad\nnetworking:\n  address: 0.0.0.0\n  inbound:\n    - port: 70000\n      tags: {mesh.io/service: web}\n`,
    );
    const head = cp.log.head();
    const r = await run(['apply', '-f', f]);
    expect(r.code).toBe(1);
    // One change set: the valid document before the bad one is not written either.
    expect(r.stdout).toBe('');
    expect(r.stderr).toBe(
      `Error: ${f}, document 2 (Dataplane shop/bad): Resource is not valid: the resource has invalid fields; nothing of the change set was written (HTTP 400)\n` +
        '  networking.address: must not be 0.0.0.0 or ::\n' +
        '  networking.inbound[0].port: must be in the range 1-65535\n',
    );
    expect(cp.log.head()).toBe(head);
    expect(await status('/meshes/shop/traffic-permissions/ok-before')).toBe(404);
  });

  it('a new mesh and what goes in it: --dry-run tells all of it, a refusal at document 3 writes nothing', async () => {
    const docs = [
      { type: 'Mesh', name: 'newshop' },
      permission('p1'),
      permission('p2'),
      permission('p3'),
    ].map((d) => (d.type === 'Mesh' ? d : { ...d, mesh: 'newshop' }));
    const f = file('newshop.yaml', docs.map((d) => JSON.stringify(d)).join('\n---\n'));
    const head = cp.log.head();
    const dry = await run(['apply', '-f', f, '--dry-run']);
    expect(dry.stderr).toBe('');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toBe(
      'Mesh newshop created (dry run)\n' +
        'TrafficPermission newshop/p1 created (dry run)\n' +
        'TrafficPermission newshop/p2 created (dry run)\n' +
        'TrafficPermission newshop/p3 created (dry run)\n' +
        'no proxy would change\n',
    );
    expect(cp.log.head()).toBe(head);
    // Document 3 is refused: documents 1 and 2 are not written.
    const broken = file(
      'newshop-bad.yaml',
      docs.map((d, i) => JSON.stringify(i === 2 ? { ...d, sources: 'nope' } : d)).join('\n---\n'),
    );
    const bad = await run(['apply', '-f', broken]);
    expect(bad.code).toBe(1);
    expect(bad.stdout).toBe('');
    expect(bad.stderr).toContain(
      `${broken}, document 3 (TrafficPermission newshop/p2): Resource is not valid`,
    );
    expect(cp.log.head()).toBe(head);
    expect(await status('/meshes/newshop')).toBe(404);
    const real = await run(['apply', '-f', f]);
    // The same lines without the dry run's note, and without its impact summary.
    expect(real.stdout).toBe(dry.stdout.replaceAll(' (dry run)', '').replace('no proxy would change\n', ''));
    // One set: every entry from the first to the last carries its id.
    const events = (await (await fetch(`${base}/_events?fromRevision=${head + 1}&size=100`)).json()) as {
      total: number;
      items: Array<{ changeSet?: string }>;
    };
    expect(events.total).toBe(cp.log.head() - head);
    expect(new Set(events.items.map((e) => e.changeSet)).size).toBe(1);
    expect(events.items[0].changeSet).toBeDefined();
    // `meshctl audit --change-set` lists them.
    const audit = await run(['audit', '--change-set', events.items[0].changeSet as string, '-o', 'json']);
    expect(audit.stderr).toBe('');
    const listed = JSON.parse(audit.stdout) as {
      total: number;
      items: Array<{ kind: string; name: string }>;
    };
    expect(listed.total).toBe(events.total);
    expect(listed.items.filter((e) => e.kind === 'TrafficPermission').map((e) => e.name)).toEqual(
      expect.arrayContaining(['p1', 'p2', 'p3']),
    );
  });

  it('refuses documents it cannot place, before any write', async () => {
    const cases: Array<[string, string]> = [
      ['type: Mesh\nname: [unclosed\n', 'document 1: not valid YAML or JSON'],
      ['type: Foo\nname: x\n', 'document 1: type "Foo" is not a kind that can be written'],
      ['type: Mesh\nname: ok\n---\nname: no-type\n', 'document 2: type is missing'],
      ['type: TrafficPermission\nname: x\n', 'document 1: a TrafficPermission needs a mesh'],
      [
        'type: DataplaneOverview\nmesh: shop\nname: x\n',
        'document 1: type "DataplaneOverview" is not a kind that can be written',
      ],
    ];
    for (const [text, message] of cases) {
      const r = await run(['apply', '-f', '-'], text);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`stdin, ${message}`);
      expect(r.stdout).toBe('');
    }
    expect(await status('/meshes/ok')).toBe(404);
    // Nested past the bound the server holds bodies to: refused with where, not a stack overflow.
    const deep = await run(['apply', '-f', '-'], `type: Mesh\nname: deep\nx: ${'['.repeat(100_000)}\n`);
    expect(deep.code).toBe(1);
    expect(deep.stderr).toMatch(
      /^Error: stdin: not valid YAML or JSON at line 3, column \d+: .*more than 64 levels/,
    );
    const none = await run(['apply', '-f', join(dir.path, 'missing.yaml')]);
    expect(none.code).toBe(1);
    expect(none.stderr).toContain('ENOENT');
  });

  it('deletes one resource (and --dry-run deletes nothing); a missing one is the server’s 404', async () => {
    const dry = await run(['delete', 'traffic-permission', 'from-stdin', '--mesh', 'shop', '--dry-run']);
    expect(dry.stdout).toBe('would delete TrafficPermission "from-stdin" from mesh "shop"\n');
    expect(await status('/meshes/shop/traffic-permissions/from-stdin')).toBe(200);
    const del = await run(['delete', 'trafficpermissions', 'from-stdin', '--mesh', 'shop']);
    expect(del.code).toBe(0);
    expect(del.stdout).toBe('deleted TrafficPermission "from-stdin" from mesh "shop"\n');
    expect(await status('/meshes/shop/traffic-permissions/from-stdin')).toBe(404);
    const again = await run(['delete', 'traffic-permission', 'from-stdin', '--mesh', 'shop']);
    expect(again.code).toBe(1);
    expect(again.stderr).toMatch(/^Error: .*from-stdin.* \(HTTP 404\)\n$/);
    const derived = await run(['delete', 'service-insights', 'web', '--mesh', 'shop']);
    expect(derived.code).toBe(1);
    expect(derived.stderr).toContain('computed by the control plane');
  });
});
