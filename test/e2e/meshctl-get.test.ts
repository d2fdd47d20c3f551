import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { ALL_KINDS } from '../../src/resources/registry.js';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { meshctl, tableRows } from '../helpers/meshctl.js';

const dataplane = (name: string, service: string, extra: Record<string, string> = {}) => ({
  type: 'Dataplane',
  mesh: 'demo',
  name,
  networking: {
    address: '10.0.0.1',
    inbound: [{ port: 8080, servicePort: 80, tags: { 'mesh.io/service': service, ...extra } }],
  },
});

// The built CLI as a process against a control plane on a free port (npm test builds dist first).
describe('meshctl get and inspect', () => {
  let cp: ControlPlane;
  const dir = tempDir('meshctl-get-');
  const config = join(dir.path, 'config.yaml');
  const run = (...args: string[]) => meshctl(args, { config });

  beforeAll(async () => {
    cp = await startListeningPlane();
    const base = `http://127.0.0.1:${cp.ports.api}`;
    const put = async (path: string, body: unknown) => {
      const res = await fetch(`${base}${path}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      });
      expect(res.ok).toBe(true);
    };
    await put('/meshes/demo', { type: 'Mesh', name: 'demo' });
    for (let i = 1; i <= 5; i++)
      await put(`/meshes/demo/dataplanes/web-${i}`, dataplane(`web-${i}`, 'web', { version: `v${i}` }));
    await put('/meshes/demo/dataplanes/db-1', dataplane('db-1', 'db'));
    await put('/meshes/demo/traffic-permissions/allow', {
      type: 'TrafficPermission',
      mesh: 'demo',
      name: 'allow',
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': '*' } }],
    });
    await put('/zones/zone-1', { type: 'Zone', name: 'zone-1' });
    // web-1 is connected (runtime status, as the data plane server records it).
    cp.status.setDataplaneInsight('demo', 'web-1', {
      subscriptions: [{ id: 's1', controlPlaneInstanceId: 'cp', connectTime: new Date().toISOString() }],
      mTLS: {
        certificateExpirationTime: '2030-01-01T00:00:00Z',
        certificateRegenerations: 2,
        issuedBackend: 'ca-1',
      },
    });
    const add = await run('config', 'control-planes', 'add', '--name', 'test', '--address', base);
    expect(add.code).toBe(0);
  });
  afterAll(async () => {
    await cp.close();
    dir.cleanup();
  });

  it('lists meshes and data planes as tables (MESH NAME TAGS AGE)', async () => {
    const meshes = await run('get', 'meshes');
    expect(meshes.code).toBe(0);
    expect(tableRows(meshes.stdout).map((r) => r.slice(0, 1))).toEqual([['NAME'], ['default'], ['demo']]);
    expect(tableRows(meshes.stdout)[0]).toEqual(['NAME', 'AGE']);
    const dps = await run('get', 'dataplanes', '--mesh', 'demo');
    const rows = tableRows(dps.stdout);
    expect(rows[0]).toEqual(['MESH', 'NAME', 'TAGS', 'AGE']);
    expect(rows.slice(1).map((r) => r.slice(0, 3))).toEqual([
      ['demo', 'db-1', 'mesh.io/service=db'],
      ...[1, 2, 3, 4, 5].map((i) => ['demo', `web-${i}`, `mesh.io/service=web,version=v${i}`]),
    ]);
    expect(rows[1][3]).toMatch(/^\d+s$/);
  });

  it('takes every kind of the registry by its path, its kind name, singular or plural, and aliases', async () => {
    for (const word of [
      'traffic-permissions',
      'trafficpermissions',
      'traffic-permission',
      'TrafficPermission',
    ]) {
      const r = await run('get', word, '--mesh', 'demo');
      expect(r.stderr).toBe('');
      const rows = tableRows(r.stdout);
      expect(rows[0]).toEqual(['MESH', 'NAME', 'AGE']);
      // With the mesh's default policy (allow-all-demo) beside ours.
      expect(rows).toContainEqual(['demo', 'allow', expect.stringMatching(/^\d+s$/)]);
    }
    // Every listable kind answers (mesh-scoped ones in mesh demo, global ones at the top).
    for (const d of ALL_KINDS) {
      const r = await run('get', d.path, '--mesh', 'demo', '-o', 'json');
      expect([d.path, r.stderr, r.code]).toEqual([d.path, '', 0]);
      const body = JSON.parse(r.stdout) as Record<string, unknown>;
      expect(body.type === d.wireType || Array.isArray(body.items)).toBe(true);
    }
    const zones = await run('get', 'zones');
    expect(tableRows(zones.stdout)).toEqual([
      ['NAME', 'AGE'],
      ['zone-1', expect.stringMatching(/^\d+s$/)],
    ]);
  });

  it('shows one resource by name, as a table, YAML or JSON', async () => {
    const table = await run('get', 'dataplane', 'db-1', '--mesh', 'demo');
    expect(tableRows(table.stdout).map((r) => r.slice(0, 3))).toEqual([
      ['MESH', 'NAME', 'TAGS'],
      ['demo', 'db-1', 'mesh.io/service=db'],
    ]);
    const yaml = await run('get', 'dataplane', 'db-1', '--mesh', 'demo', '-o', 'yaml');
    expect(parse(yaml.stdout)).toMatchObject({
      ...dataplane('db-1', 'db'),
      creationTime: expect.any(String),
    });
    const json = await run('get', 'dataplane', 'db-1', '--mesh', 'demo', '-o', 'json');
    expect(JSON.parse(json.stdout)).toEqual(parse(yaml.stdout));
  });

  it('pages with --size and tells how to get the rest, which --offset then lists', async () => {
    const first = await run('get', 'dataplanes', '--mesh', 'demo', '--size', '4');
    expect(tableRows(first.stdout).map((r) => r[1])).toEqual(['NAME', 'db-1', 'web-1', 'web-2', 'web-3']);
    expect(first.stdout).toContain(
      'Rest of the list: meshctl get dataplanes --mesh demo --size 4 --offset 4\n',
    );
    const rest = await run('get', 'dataplanes', '--mesh', 'demo', '--size', '4', '--offset', '4');
    expect(tableRows(rest.stdout).map((r) => r[1])).toEqual(['NAME', 'web-4', 'web-5']);
    expect(rest.stdout).not.toContain('Rest of the list');
    const json = JSON.parse(
      (await run('get', 'dataplanes', '--mesh', 'demo', '--size', '4', '-o', 'json')).stdout,
    );
    expect(json.total).toBe(6);
    expect(json.items).toHaveLength(4);
    expect(json.next).toContain('offset=4');
  });

  it('says what is wrong: an unknown kind, a bad flag, a missing resource (the server’s words)', async () => {
    const kind = await run('get', 'foos');
    expect(kind.code).toBe(1);
    expect(kind.stderr).toContain('unknown kind "foos"; kinds: meshes, dataplanes,');
    const size = await run('get', 'meshes', '--size', '0');
    expect(size.code).not.toBe(0);
    expect(size.stderr).toContain('--size must be a positive integer');
    const output = await run('get', 'meshes', '-o', 'xml');
    expect(output.code).toBe(1);
    expect(output.stderr).toContain('output format must be table, yaml or json');
    const missing = await run('get', 'mesh', 'nope');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toMatch(/^Error: .+: .*nope.* \(HTTP 404\)\n$/);
  });

  it('inspects data planes: status, last connected and certificate columns, and the filters', async () => {
    const all = await run('inspect', 'dataplanes', '--mesh', 'demo');
    expect(all.code).toBe(0);
    const rows = tableRows(all.stdout);
    expect(rows[0]).toEqual([
      'MESH',
      'NAME',
      'TAGS',
      'STATUS',
      'LAST CONNECTED AGO',
      'LAST UPDATED AGO',
      'TOTAL UPDATES',
      'CERT REGENERATED AGO',
      'CERT EXPIRATION',
      'CERT REGENERATIONS',
      'CERT BACKEND',
    ]);
    const web1 = rows.find((r) => r[1] === 'web-1') as string[];
    expect(web1.slice(0, 5)).toEqual([
      'demo',
      'web-1',
      'mesh.io/service=web,version=v1',
      'Online',
      expect.stringMatching(/^\d+s$/),
    ]);
    expect(web1.slice(8)).toEqual(['2030-01-01T00:00:00Z', '2', 'ca-1']);
    expect((rows.find((r) => r[1] === 'db-1') as string[])[3]).toBe('Offline');
    const online = await run('inspect', 'dataplanes', '--mesh', 'demo', '--status', 'online');
    expect(tableRows(online.stdout).map((r) => r[1])).toEqual(['NAME', 'web-1']);
    const tagged = await run(
      'inspect',
      'dataplanes',
      '--mesh',
      'demo',
      '--tag',
      'mesh.io/service=web',
      '--tag',
      'version=v2',
    );
    expect(tableRows(tagged.stdout).map((r) => r[1])).toEqual(['NAME', 'web-2']);
    const gateways = await run('inspect', 'dataplanes', '--mesh', 'demo', '--gateway');
    expect(gateways.stdout).toBe('');
    expect(gateways.stderr).toBe('no data plane proxies in mesh "demo" that are gateways\n');
    const paged = await run(
      'inspect',
      'dataplanes',
      '--mesh',
      'demo',
      '--tag',
      'mesh.io/service=web',
      '--size',
      '2',
    );
    expect(paged.stdout).toContain(
      'Rest of the list: meshctl inspect dataplanes --mesh demo --tag mesh.io/service=web --size 2 --offset 2',
    );
    const bad = await run('inspect', 'dataplanes', '--mesh', 'demo', '--status', 'sleepy');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toMatch(/^Error: .*\(HTTP 400\)\n {2}status: /);
  });

  it('inspects services, meshes and zones', async () => {
    const services = await run('inspect', 'services', '--mesh', 'demo');
    expect(tableRows(services.stdout)).toEqual([
      ['MESH', 'SERVICE', 'TYPE', 'STATUS', 'DATAPLANES'],
      ['demo', 'db', 'internal', 'offline', '0/1'],
      ['demo', 'web', 'internal', 'partially_degraded', '1/5'],
    ]);
    const meshes = await run('inspect', 'meshes');
    const demo = tableRows(meshes.stdout).find((r) => r[0] === 'demo') as string[];
    expect(tableRows(meshes.stdout)[0]).toEqual(['NAME', 'SERVICES', 'DATAPLANES', 'POLICIES', 'LAST SYNC']);
    expect(demo.slice(0, 4)).toEqual(['demo', '2', '1/6', expect.stringMatching(/^\d+$/)]);
    const zones = await run('inspect', 'zones');
    expect(tableRows(zones.stdout).map((r) => r.slice(0, 3))).toEqual([
      ['NAME', 'ENABLED', 'STATUS'],
      ['zone-1', 'true', 'Offline'],
    ]);
  });

  it('inspects one data plane: matched policies, rules, and its configuration dump', async () => {
    const policies = await run('inspect', 'dataplane', 'web-1', '--mesh', 'demo');
    expect(policies.code).toBe(0);
    expect(tableRows(policies.stdout)).toContainEqual([
      'inbound',
      expect.stringContaining(':8080'),
      'TrafficPermission',
      'allow',
    ]);
    const rules = await run(
      'inspect',
      'dataplane',
      'web-1',
      '--mesh',
      'demo',
      '--type',
      'rules',
      '-o',
      'json',
    );
    expect(JSON.parse(rules.stdout)).toHaveProperty('items');
    const dump = await run('inspect', 'dataplane', 'web-1', '--mesh', 'demo', '--type', 'config-dump');
    expect(JSON.parse(dump.stdout).configs.length).toBeGreaterThan(0);
    const bad = await run('inspect', 'dataplane', 'web-1', '--mesh', 'demo', '--type', 'envoy');
    expect(bad.code).toBe(1);
    expect(bad.stderr).toContain('--type must be policies, rules, config-dump, stats or clusters');
    const missing = await run('inspect', 'dataplane', 'nope', '--mesh', 'demo');
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain('(HTTP 404)');
  });
});
