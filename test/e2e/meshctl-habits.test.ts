import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parse, parseAllDocuments } from 'yaml';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startHttpsPlane, startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { callApi, meshctl, tableRows } from '../helpers/meshctl.js';
import { tp } from '../helpers/multizone.js';

/**
 * The daily habits of kumactl that meshctl lacked: tag filters and all meshes on `get`, `delete -f`,
 * the inspect views of zone proxies and of a policy, a proxy's stats and clusters, `version`,
 * `config view`, the newest audit entries, empty lists, hints on connection errors, Kubernetes
 * manifests. The built CLI as a process against a control plane on free ports; expected values come
 * from the API itself.
 */
const SVC = 'mesh.io/service';

const dataplane = (mesh: string, name: string, tags: Record<string, string>, outbound?: string) => ({
  type: 'Dataplane',
  mesh,
  name,
  networking: {
    address: '10.0.0.1',
    inbound: [{ port: 8080, servicePort: 80, tags }],
    ...(outbound ? { outbound: [{ port: 9000, tags: { [SVC]: outbound } }] } : {}),
  },
});

const permission = (mesh: string, name: string, destination: string) => tp(name, mesh, destination);

describe('meshctl daily habits', () => {
  let cp: ControlPlane;
  let base: string;
  const dir = tempDir('meshctl-habits-');
  const config = join(dir.path, 'config.yaml');
  const run = (args: string[], stdin?: string) => meshctl(args, { config, stdin });
  const api = (method: string, path: string, body?: unknown) => callApi(base, method, path, body);
  const put = async (path: string, body: unknown) => {
    const res = await api('PUT', path, body);
    expect(res.status, `PUT ${path}: ${JSON.stringify(res.body)}`).toBeLessThan(300);
  };

  beforeAll(async () => {
    cp = await startListeningPlane();
    base = `http://127.0.0.1:${cp.ports.api}`;
    await put('/meshes/demo', { type: 'Mesh', name: 'demo' });
    await put('/meshes/empty', { type: 'Mesh', name: 'empty' });
    await put('/meshes/demo/dataplanes/web-1', dataplane('demo', 'web-1', { [SVC]: 'web', version: 'v1' }));
    await put('/meshes/demo/dataplanes/web-2', dataplane('demo', 'web-2', { [SVC]: 'web', version: 'v2' }));
    await put('/meshes/demo/dataplanes/client-1', dataplane('demo', 'client-1', { [SVC]: 'client' }, 'web'));
    await put('/meshes/default/dataplanes/db-1', dataplane('default', 'db-1', { [SVC]: 'db' }));
    await put('/meshes/demo/traffic-permissions/to-web', permission('demo', 'to-web', 'web'));
    await put('/zone-ingresses/ingress-1', {
      type: 'ZoneIngress',
      name: 'ingress-1',
      zone: 'zone-1',
      networking: { address: '10.0.1.1', port: 10001, advertisedAddress: '192.0.2.1', advertisedPort: 10001 },
    });
    const add = await run(['config', 'control-planes', 'add', '--name', 'test', '--address', base]);
    expect(add.code).toBe(0);
  });
  afterAll(async () => {
    await cp.close();
    dir.cleanup();
  });

  describe('get', () => {
    it('filters data planes by tag (repeatable, all on one inbound), as the API does with tag=key:value', async () => {
      const r = await run([
        'get',
        'dataplanes',
        '--mesh',
        'demo',
        '--tag',
        `${SVC}=web`,
        '--tag',
        'version=v2',
      ]);
      expect(r.stderr).toBe('');
      expect(tableRows(r.stdout).map((row) => row[1])).toEqual(['NAME', 'web-2']);
      const web = await run(['get', 'dataplanes', '--mesh', 'demo', '--tag', `${SVC}=web`]);
      expect(tableRows(web.stdout).map((row) => row[1])).toEqual(['NAME', 'web-1', 'web-2']);
      const bad = await run(['get', 'dataplanes', '--tag', 'version']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('--tag takes key=value, not "version"');
      const meshes = await run(['get', 'meshes', '--tag', 'a=b']);
      expect(meshes.code).toBe(1);
      expect(meshes.stderr).toContain('--tag filters dataplanes and external-services');
    });

    it('lists a mesh-scoped kind in every mesh with -A / --all-meshes, with a MESH column', async () => {
      const all = await run(['get', 'dataplanes', '-A']);
      expect(all.stderr).toBe('');
      expect(tableRows(all.stdout).map((row) => row.slice(0, 2))).toEqual([
        ['MESH', 'NAME'],
        ['default', 'db-1'],
        ['demo', 'client-1'],
        ['demo', 'web-1'],
        ['demo', 'web-2'],
      ]);
      const tps = await run(['get', 'traffic-permissions', '--all-meshes', '-o', 'json']);
      const listed = (await api('GET', '/traffic-permissions')).body;
      expect(JSON.parse(tps.stdout)).toEqual(listed);
      const paged = await run(['get', 'dataplanes', '-A', '--tag', `${SVC}=web`, '--size', '1']);
      expect(paged.stdout).toContain(
        `Rest of the list: meshctl get dataplanes -A --tag ${SVC}=web --size 1 --offset 1`,
      );
      const global = await run(['get', 'zones', '-A']);
      expect(global.code).toBe(1);
      expect(global.stderr).toContain('zones are not in a mesh');
    });

    it('says that a list is empty instead of printing a bare header', async () => {
      const none = await run(['get', 'dataplanes', '--mesh', 'empty']);
      expect(none.code).toBe(0);
      expect(none.stdout).toBe('');
      expect(none.stderr).toBe('no dataplanes in mesh "empty"\n');
      const filtered = await run(['get', 'dataplanes', '--mesh', 'demo', '--tag', 'version=v9']);
      expect(filtered.stderr).toBe('no dataplanes in mesh "demo" with tag version=v9\n');
      const zones = await run(['get', 'zones']);
      expect(zones.stderr).toBe('no zones\n');
      const past = await run(['get', 'meshes', '--offset', '50']);
      expect(past.stderr).toBe('no meshes at offset 50 (there are 3)\n');
      // YAML and JSON print the API's answer, empty or not.
      const json = await run(['get', 'zones', '-o', 'json']);
      expect(JSON.parse(json.stdout)).toEqual({ total: 0, items: [], next: null });
      const egresses = await run(['inspect', 'zoneegresses']);
      expect(egresses.stderr).toBe('no zone egresses\n');
      const gateways = await run(['inspect', 'dataplanes', '--mesh', 'demo', '--gateway']);
      expect(gateways.stderr).toBe('no data plane proxies in mesh "demo" that are gateways\n');
    });
  });

  describe('delete -f', () => {
    it('deletes the resources of a file (in reverse order) and of stdin; --dry-run deletes nothing', async () => {
      await put('/meshes/shop', { type: 'Mesh', name: 'shop' });
      await put('/meshes/shop/traffic-permissions/a', permission('shop', 'a', 'web'));
      await put('/meshes/shop/traffic-permissions/b', permission('shop', 'b', 'web'));
      const file = join(dir.path, 'shop.yaml');
      writeFileSync(
        file,
        `type: Mesh\nname: shop\n---\n${JSON.stringify(permission('shop', 'a', 'web'))}\n---\n${JSON.stringify(permission('shop', 'b', 'web'))}\n`,
      );
      const dry = await run(['delete', '-f', file, '--dry-run']);
      expect(dry.stderr).toBe('');
      expect(dry.stdout).toBe(
        'TrafficPermission shop/b deleted (dry run)\nTrafficPermission shop/a deleted (dry run)\nMesh shop deleted (dry run)\n',
      );
      expect((await api('GET', '/meshes/shop/traffic-permissions/a')).status).toBe(200);
      const one = await run(['delete', '-f', '-'], `${JSON.stringify(permission('shop', 'b', 'web'))}\n`);
      expect(one.stdout).toBe('TrafficPermission shop/b deleted\n');
      expect((await api('GET', '/meshes/shop/traffic-permissions/b')).status).toBe(404);
      // b is gone already: said, the rest deleted, exit 1.
      const rest = await run(['delete', '-f', file]);
      expect(rest.stdout).toBe(
        'TrafficPermission shop/b not found\nTrafficPermission shop/a deleted\nMesh shop deleted\n',
      );
      expect(rest.stderr).toContain('1 of 3 resources not found');
      expect(rest.code).toBe(1);
      expect((await api('GET', '/meshes/shop')).status).toBe(404);
      const ignore = await run(['delete', '-f', file, '--ignore-not-found']);
      expect(ignore.code).toBe(0);
      const both = await run(['delete', 'mesh', 'x', '-f', file]);
      expect(both.code).toBe(1);
      expect(both.stderr).toContain('either <kind> <name> or -f');
    });
  });

  describe('apply of a Kubernetes manifest', () => {
    it('says that mesh-cp takes the universal format and shows the document in it, writing nothing', async () => {
      // A mesh of its own: the permission applied at the end must not change what to-web affects.
      await put('/meshes/k8s', { type: 'Mesh', name: 'k8s' });
      const manifest = `apiVersion: kuma.io/v1alpha1
kind: TrafficPermission
mesh: k8s
metadata:
  name: from-k8s
  namespace: kuma-system
spec:
  sources:
    - match:
        mesh.io/service: '*'
  destinations:
    - match:
        mesh.io/service: web
---
apiVersion: kuma.io/v1alpha1
kind: MeshTrafficPermission
metadata:
  name: mtp
  namespace: kuma-system
  labels:
    kuma.io/mesh: k8s
spec:
  targetRef:
    kind: Mesh
  from:
    - targetRef:
        kind: Mesh
      default:
        action: ALLOW
`;
      const r = await run(['apply', '-f', '-'], manifest);
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(
        'stdin, document 1: a Kubernetes manifest (apiVersion, kind, metadata, spec)',
      );
      expect(r.stderr).toContain('mesh-cp takes the universal format');
      // The universal documents it prints apply as they are.
      const shown = r.stderr.slice(r.stderr.indexOf('\n---\n') + 5);
      const docs = parseAllDocuments(shown).map((d) => d.toJS() as Record<string, unknown>);
      expect(docs[0]).toEqual(permission('k8s', 'from-k8s', 'web'));
      expect(docs[1]).toMatchObject({ type: 'MeshTrafficPermission', mesh: 'k8s', name: 'mtp', spec: {} });
      expect((await api('GET', '/meshes/k8s/traffic-permissions/from-k8s')).status).toBe(404);
      const applied = await run(['apply', '-f', '-'], shown);
      expect(applied.stderr).toBe('');
      expect(applied.stdout).toBe(
        'TrafficPermission k8s/from-k8s created\nMeshTrafficPermission k8s/mtp created\n',
      );
    });
  });

  describe('inspect', () => {
    it('lists zone ingresses and egresses from their overviews', async () => {
      const r = await run(['inspect', 'zoneingresses']);
      expect(r.stderr).toBe('');
      const rows = tableRows(r.stdout);
      expect(rows[0]).toEqual([
        'NAME',
        'ZONE',
        'ADDRESS',
        'STATUS',
        'LAST CONNECTED AGO',
        'LAST UPDATED AGO',
        'TOTAL UPDATES',
        'TOTAL ERRORS',
      ]);
      expect(rows[1]).toEqual([
        'ingress-1',
        'zone-1',
        '192.0.2.1:10001',
        'Offline',
        'never',
        'never',
        '0',
        '0',
      ]);
      const json = await run(['inspect', 'zone-ingresses', '-o', 'json']);
      expect(JSON.parse(json.stdout)).toEqual((await api('GET', '/zoneingresses+insights')).body);
    });

    it('lists data planes and services of every mesh with -A', async () => {
      const r = await run(['inspect', 'dataplanes', '-A']);
      expect(tableRows(r.stdout).map((row) => row.slice(0, 2))).toEqual([
        ['MESH', 'NAME'],
        ['default', 'db-1'],
        ['demo', 'client-1'],
        ['demo', 'web-1'],
        ['demo', 'web-2'],
      ]);
      const services = await run(['inspect', 'services', '--all-meshes']);
      expect(tableRows(services.stdout).map((row) => row.slice(0, 2))).toEqual([
        ['MESH', 'SERVICE'],
        ['default', 'db'],
        ['demo', 'client'],
        ['demo', 'web'],
      ]);
    });

    it('lists the proxies a policy affects, with their attachments', async () => {
      const answer = (await api('GET', '/meshes/demo/traffic-permissions/to-web/dataplanes')).body as {
        items: Array<{ dataplane: { name: string } }>;
      };
      expect(answer.items.map((i) => i.dataplane.name)).toEqual(['web-1', 'web-2']);
      const r = await run(['inspect', 'traffic-permission', 'to-web', '--mesh', 'demo']);
      expect(r.stderr).toBe('');
      const rows = tableRows(r.stdout);
      expect(rows[0]).toEqual(['MESH', 'DATAPLANE', 'KIND', 'ATTACHMENTS']);
      expect(rows.slice(1)).toEqual([
        ['demo', 'web-1', 'SidecarDataplane', expect.stringMatching(/^inbound 10\.0\.0\.1:8080:80 \(web\)$/)],
        ['demo', 'web-2', 'SidecarDataplane', expect.stringMatching(/^inbound 10\.0\.0\.1:8080:80 \(web\)$/)],
      ]);
      const json = await run(['inspect', 'trafficpermissions', 'to-web', '--mesh', 'demo', '-o', 'json']);
      expect(JSON.parse(json.stdout)).toEqual(answer);
      const none = await run(['inspect', 'traffic-permission', 'nope', '--mesh', 'demo']);
      expect(none.code).toBe(0);
      expect(none.stderr).toBe('no data plane proxies affected by TrafficPermission "nope" in mesh "demo"\n');
      const secret = await run(['inspect', 'secret', 'x']);
      expect(secret.code).toBe(1);
      expect(secret.stderr).toContain('inspect takes dataplanes, services, zones, meshes, zoneingresses');
    });

    it('prints a proxy’s stats and clusters as the server answers them', async () => {
      const stats = await run(['inspect', 'dataplane', 'web-1', '--mesh', 'demo', '--type', 'stats']);
      expect(stats.stderr).toBe('');
      expect(stats.stdout).toBe(await (await fetch(`${base}/meshes/demo/dataplanes/web-1/stats`)).text());
      expect(stats.stdout).toContain('control_plane.connected_state: 0\n');
      const clusters = await run([
        'inspect',
        'dataplane',
        'client-1',
        '--mesh',
        'demo',
        '--type',
        'clusters',
      ]);
      expect(clusters.stderr).toBe('');
      expect(clusters.stdout).toBe(
        await (await fetch(`${base}/meshes/demo/dataplanes/client-1/clusters`)).text(),
      );
      expect(clusters.stdout).toMatch(/::observability_name::/);
      const none = await run(['inspect', 'dataplane', 'web-1', '--mesh', 'demo', '--type', 'clusters']);
      expect(none.code).toBe(0);
      expect(none.stderr).toBe('dataplane "web-1" in mesh "demo" has no clusters\n');
      const ingress = await run(['inspect', 'zoneingress', 'ingress-1', '--type', 'config-dump']);
      expect(JSON.parse(ingress.stdout)).toHaveProperty('configs');
      const bad = await run(['inspect', 'dataplane', 'web-1', '--mesh', 'demo', '--type', 'metrics']);
      expect(bad.code).toBe(1);
      expect(bad.stderr).toContain('--type must be policies, rules, config-dump, stats or clusters');
    });
  });

  describe('version and config view', () => {
    it('prints the client’s version and the server’s (from GET /)', async () => {
      const index = (await api('GET', '/')).body as { tagline: string; version: string; mode: string };
      const r = await run(['version']);
      expect(r.stderr).toBe('');
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Client: meshctl \S+\n/);
      expect(r.stdout).toContain(`Server: ${index.tagline} ${index.version} (${base}, ${index.mode})\n`);
    });

    it('says when the server cannot be reached, and still prints the client’s version', async () => {
      const r = await meshctl(['--api-address', 'http://127.0.0.1:1', 'version'], { config });
      expect(r.code).toBe(0);
      expect(r.stdout).toMatch(/^Client: meshctl \S+\n$/);
      expect(r.stderr).toContain('Server: unreachable: cannot reach the control plane at http://127.0.0.1:1');
    });

    it('shows the config file with tokens masked', async () => {
      const cfgFile = join(dir.path, 'view.yaml');
      const token = 'eyJhbGciOiJSUzI1NiJ9.secret-part.signature';
      const add = await meshctl(
        // --no-check: the token is not one the server issued.
        [
          'config',
          'control-planes',
          'add',
          '--name',
          'tok',
          '--address',
          base,
          '--auth-token',
          token,
          '--no-check',
        ],
        { config: cfgFile },
      );
      expect(add.code).toBe(0);
      const r = await meshctl(['config', 'view'], { config: cfgFile });
      expect(r.code).toBe(0);
      expect(r.stdout).not.toContain('secret-part');
      expect(r.stdout).toContain(`# ${cfgFile}`);
      const shown = parse(r.stdout) as {
        currentContext: string;
        controlPlanes: Array<{
          name: string;
          coordinates: { apiServer: { url: string; authToken?: string } };
        }>;
      };
      expect(shown.currentContext).toBe('tok');
      const tok = shown.controlPlanes.find((c) => c.name === 'tok');
      expect(tok?.coordinates.apiServer.url).toBe(base);
      expect(tok?.coordinates.apiServer.authToken).toMatch(/^eyJhbG…\(masked, \d+ characters\)$/);
      const json = await meshctl(['config', 'view', '-o', 'json'], { config: cfgFile });
      expect(json.stdout).not.toContain('secret-part');
      expect(JSON.parse(json.stdout).currentContext).toBe('tok');
    });
  });

  describe('audit', () => {
    it('--tail N prints the newest N entries; --newest-first puts the newest on top', async () => {
      const page = (await api('GET', '/_events?size=1000')).body as {
        total: number;
        items: Array<{ revision: number }>;
      };
      const newest = page.items.slice(-3).map((i) => String(i.revision));
      const tail = await run(['audit', '--tail', '3']);
      expect(tail.stderr).toBe('');
      expect(tableRows(tail.stdout).map((row) => row[0])).toEqual(['REVISION', ...newest]);
      const reversed = await run(['audit', '--tail', '3', '--newest-first']);
      expect(tableRows(reversed.stdout).map((row) => row[0])).toEqual(['REVISION', ...newest.reverse()]);
      const revisions = (out: string) =>
        tableRows(out)
          .filter((row) => !row[0].startsWith('Rest of the log'))
          .map((row) => row[0]);
      const first = await run(['audit', '--newest-first', '--size', '2']);
      const top = page.items
        .slice(-2)
        .reverse()
        .map((i) => String(i.revision));
      expect(revisions(first.stdout)).toEqual(['REVISION', ...top]);
      expect(first.stdout).toContain('Rest of the log: meshctl audit --newest-first --size 2 --offset 2');
      const second = await run(['audit', '--newest-first', '--size', '2', '--offset', '2']);
      const next = page.items
        .slice(-4, -2)
        .reverse()
        .map((i) => String(i.revision));
      expect(revisions(second.stdout)).toEqual(['REVISION', ...next]);
      const filtered = await run([
        'audit',
        '--kind',
        'dataplanes',
        '--mesh',
        'demo',
        '--tail',
        '1',
        '-o',
        'json',
      ]);
      const dps = (await api('GET', '/_events?kind=Dataplane&mesh=demo&size=1000')).body as {
        total: number;
        items: unknown[];
      };
      expect(JSON.parse(filtered.stdout)).toEqual({ total: dps.total, items: dps.items.slice(-1) });
      const none = await run(['audit', '--actor', 'nobody']);
      expect(none.stderr).toBe('no audit entries by actor nobody\n');
    });
  });

  describe('hints', () => {
    it('on a refused connection: is mesh-cp running, and at which address', async () => {
      const port = await new Promise<number>((resolve) => {
        const s = createServer().listen(0, '127.0.0.1', () => {
          const p = (s.address() as { port: number }).port;
          s.close(() => resolve(p));
        });
      });
      const r = await meshctl(['--api-address', `http://127.0.0.1:${port}`, 'get', 'meshes'], { config });
      expect(r.code).toBe(1);
      expect(r.stderr).toContain(`Error: cannot reach the control plane at http://127.0.0.1:${port}`);
      expect(r.stderr).toContain(`Hint: nothing listens at http://127.0.0.1:${port}. Is mesh-cp running?`);
    });
  });
});

describe('meshctl hint on a self-signed certificate', () => {
  let cp: ControlPlane;
  const dir = tempDir('meshctl-tls-hint-');
  const config = join(dir.path, 'config.yaml');

  beforeAll(async () => {
    cp = await startHttpsPlane(join(dir.path, 'data'));
  });
  afterAll(async () => {
    await cp.close();
    dir.cleanup();
  });

  it('names the file of mesh-cp’s self-signed certificate and the command that trusts it', async () => {
    const https = `https://127.0.0.1:${cp.ports.https}`;
    expect(cp.tls?.certFile).toBe(join(dir.path, 'data', 'tls', 'cert.pem'));
    const r = await meshctl(['--api-address', https, 'get', 'meshes'], { config });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('self-signed certificate');
    expect(r.stderr).toContain('Hint: ');
    expect(r.stderr).toContain('<data dir>/tls/cert.pem');
    expect(r.stderr).toContain(
      `meshctl config control-planes add --name NAME --address ${https} --ca-cert <data dir>/tls/cert.pem`,
    );
    // The command of the hint works with the real file.
    const add = await meshctl(
      [
        'config',
        'control-planes',
        'add',
        '--name',
        'tls',
        '--address',
        https,
        '--ca-cert',
        cp.tls?.certFile as string,
      ],
      { config },
    );
    expect(add.stderr).toBe('');
    expect(add.code).toBe(0);
  });
});
