import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import { join } from 'node:path';
import * as grpc from '@grpc/grpc-js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startListeningPlane } from '../helpers/control-plane.js';
import { REPO_ROOT } from '../helpers/process.js';
import { LISTENER } from '../../src/xds/type-urls.js';
import { echo } from '../helpers/xds.js';
import { eventually } from '../helpers/eventually.js';

/**
 * TrafficPermission and MeshTrafficPermission at a proxyless gRPC *server*: a real
 * control plane in this process, an `XdsServer` of @grpc/grpc-js-xds in a child process (fixture
 * xds-greeter-server.mjs) that gets its Listener with the RBAC filter over ADS, and a plain
 * @grpc/grpc-js client dialling it directly.
 *
 * Everything is on IPv6 loopback: grpc-js-xds 1.14.1's XdsServer listens dual-stack, so an IPv4
 * caller shows as `::ffff:127.0.0.1`, which its RBAC never matches with an IPv4 range (and cannot
 * parse against an IPv6 one). `::1` is a caller address it matches.
 */
const SVC = 'mesh.io/service';
const LOOPBACK = '::1';

const freePort = (): Promise<number> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(0, LOOPBACK, () => {
      const { port } = s.address() as { port: number };
      s.close(() => resolve(port));
    });
  });

describe('RBAC at an XdsServer from TrafficPermission and MeshTrafficPermission', () => {
  let cp: ControlPlane;
  const children: ChildProcess[] = [];
  let client: grpc.Client;
  let stderr = '';

  const put = async (url: string, payload: Record<string, unknown>) => {
    const res = await cp.app.inject({ method: 'PUT', url, payload });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  const dataplane = (name: string, address: string, port: number, service: string) =>
    put(`/meshes/default/dataplanes/${name}`, {
      type: 'Dataplane',
      mesh: 'default',
      name,
      networking: { address, inbound: [{ port, tags: { [SVC]: service } }] },
    });
  const permit = (source: string) =>
    put('/meshes/default/traffic-permissions/to-greeter', {
      type: 'TrafficPermission',
      mesh: 'default',
      name: 'to-greeter',
      sources: [{ match: { [SVC]: source } }],
      destinations: [{ match: { [SVC]: 'greeter' } }],
    });
  /** The status of one call: OK or the error's code. */
  const outcome = (): Promise<grpc.status> =>
    echo(client).then(
      (tag) => {
        expect(tag).toBe('greeter');
        return grpc.status.OK;
      },
      (e: grpc.ServiceError) => e.code,
    );
  /** Calls until one ends with `want`, for at most `ms`; the last status seen. */
  const until = async (want: grpc.status, ms: number): Promise<grpc.status> => {
    const deadline = Date.now() + ms;
    let last = await outcome();
    while (last !== want && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      last = await outcome();
    }
    return last;
  };

  /** Starts the fixture as Dataplane `name` listening on `[::1]:port`; `serving` resolves once it serves. */
  const startGreeter = async (name: string, port: number, env: Record<string, string>) => {
    const token = await cp.app.inject({
      method: 'POST',
      url: '/tokens/dataplane',
      payload: { mesh: 'default', name, validFor: '1h' },
    });
    expect(token.statusCode, token.body).toBe(200);
    const res = await cp.app.inject({ method: 'GET', url: `/meshes/default/dataplanes/${name}/bootstrap` });
    expect(res.statusCode, res.body).toBe(200);
    const bootstrap = res.json();
    bootstrap.xds_servers[0].server_uri = `127.0.0.1:${cp.ports.xds}`;
    bootstrap.node.metadata['dataplane.token'] = token.body;
    const child = spawn(process.execPath, [join(REPO_ROOT, 'test/fixtures/xds-greeter-server.mjs')], {
      cwd: REPO_ROOT,
      env: {
        ...process.env,
        GRPC_XDS_BOOTSTRAP_CONFIG: JSON.stringify(bootstrap),
        LISTEN: `[${LOOPBACK}]:${port}`,
        ...env,
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.push(child);
    let out = '';
    child.stdout?.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr?.on('data', (d: Buffer) => (stderr += d.toString()));
    const serving = new Promise<void>((resolve, reject) => {
      child.stdout?.on('data', () => {
        if (out.includes('"serving"')) resolve();
      });
      child.once('exit', (code) => reject(new Error(`the XdsServer exited (${code}): ${stderr}`)));
    });
    serving.catch(() => undefined);
    return { child, serving, output: () => out };
  };

  beforeAll(async () => {
    cp = await startListeningPlane({ MESH_DEFAULTS_SKIP_DEFAULT_POLICIES: 'true' });
    const port = await freePort();
    await dataplane('greeter-1', LOOPBACK, port, 'greeter');
    await dataplane('caller-1', LOOPBACK, 1, 'caller');
    await dataplane('other-1', '10.0.0.9', 1, 'other');
    await permit('caller');
    const { serving } = await startGreeter('greeter-1', port, { GRPC_XDS_EXPERIMENTAL_RBAC: 'true' });
    let timer: NodeJS.Timeout | undefined;
    await Promise.race([
      serving,
      new Promise((_, reject) => {
        timer = setTimeout(() => reject(new Error(`the XdsServer never served: ${stderr}`)), 10_000);
      }),
    ]).finally(() => clearTimeout(timer));
    client = new grpc.Client(`[${LOOPBACK}]:${port}`, grpc.credentials.createInsecure());
  }, 20_000);
  afterAll(async () => {
    client?.close();
    for (const child of children) {
      if (child.exitCode !== null || child.signalCode !== null) continue;
      const exited = new Promise((r) => child.once('exit', r));
      child.kill('SIGTERM');
      await exited;
    }
    await cp?.close();
  });

  it('a TrafficPermission whose source is a Dataplane at the caller address lets the call through', async () => {
    expect(await outcome()).toBe(grpc.status.OK);
  });

  it('moved to a source at another address: PERMISSION_DENIED within 2 s, nothing restarted', async () => {
    await permit('other');
    expect(await until(grpc.status.PERMISSION_DENIED, 2000)).toBe(grpc.status.PERMISSION_DENIED);
    await permit('caller');
    expect(await until(grpc.status.OK, 2000)).toBe(grpc.status.OK);
  });

  it('a MeshTrafficPermission DENY from the Mesh: PERMISSION_DENIED within 2 s; deleted, the TrafficPermission applies again', async () => {
    expect(await outcome()).toBe(grpc.status.OK);
    await put('/meshes/default/meshtrafficpermissions/deny-all', {
      type: 'MeshTrafficPermission',
      mesh: 'default',
      name: 'deny-all',
      spec: {
        targetRef: { kind: 'Mesh' },
        from: [{ targetRef: { kind: 'Mesh' }, default: { action: 'DENY' } }],
      },
    });
    expect(await until(grpc.status.PERMISSION_DENIED, 2000)).toBe(grpc.status.PERMISSION_DENIED);
    const res = await cp.app.inject({
      method: 'DELETE',
      url: '/meshes/default/meshtrafficpermissions/deny-all',
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await until(grpc.status.OK, 2000)).toBe(grpc.status.OK);
  });

  it('without GRPC_XDS_EXPERIMENTAL_RBAC the server NACKs its Listener (the RBAC filter is not optional) and never serves', async () => {
    const port = await freePort();
    await dataplane('greeter-2', LOOPBACK, port, 'greeter');
    const { output } = await startGreeter('greeter-2', port, { GRPC_XDS_EXPERIMENTAL_RBAC: 'false' });
    const nackOf = () =>
      cp.xds?.ads
        .streams()
        .find((s) => s.node.id === 'default.greeter-2' && s.disconnectTime === undefined)
        ?.types.get(LISTENER)?.lastNack;
    await eventually(nackOf, 10_000, "greeter-2's NACK of its Listener");
    expect(nackOf()?.message).toContain('envoy.filters.http.rbac filter validation failed');
    expect(output()).toBe('');
  });
});
