import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/control-plane.js';
import type { GreeterProcess } from '../helpers/greeter.js';
import { startGreeter } from '../helpers/greeter.js';
import { eventually } from '../helpers/multizone.js';
import type { CpProcess } from '../helpers/process.js';
import { startNpm } from '../helpers/process.js';

/**
 * The xDS server checked end to end with real processes: a Global and a zone control plane
 * (`npm start`), backends and a client from examples/greeter (plain @grpc/grpc-js servers, and
 * @grpc/grpc-js-xds 1.14.1 dialling `xds:///…` with the zone's bootstrap). Dataplanes are written
 * on the zone, policies on Global (synced down). No default policies: each case sees only its own.
 */
const SVC = 'mesh.io/service';
const everyone = [{ match: { [SVC]: '*' } }];

type Summary = {
  answers: Record<string, number>;
  codes: Record<string, number>;
  details: Record<string, string>;
};
type Window = Summary & { from: number; to: number };
type Sub = { id: string; connectTime?: string; disconnectTime?: string };

async function call(port: number, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}
async function ok(res: Promise<Response>): Promise<string> {
  const r = await res;
  const text = await r.text();
  expect(r.status, text).toBeLessThan(300);
  return text;
}
const subscriptions = async (port: number, name: string): Promise<Sub[]> => {
  const res = await call(port, 'GET', `/meshes/default/dataplanes+insights/${name}`);
  if (res.status !== 200) return [];
  const body = (await res.json()) as { dataplaneInsight?: { subscriptions?: Sub[] } };
  return body.dataplaneInsight?.subscriptions ?? [];
};

describe('proxyless gRPC with processes: Global, a zone, greeter backends and an xDS client', () => {
  const dirs = {
    global: tempDir('e2e-xds-global-'),
    zone: tempDir('e2e-xds-zone-'),
    files: tempDir('e2e-xds-'),
  };
  const cps: CpProcess[] = [];
  const children: GreeterProcess[] = [];
  let g: Awaited<CpProcess['ready']>;
  let z: Awaited<CpProcess['ready']>;
  let zone: CpProcess;
  let bootstrap: string;
  let otherTokenBootstrap: string;

  const split = (v1: number, v2: number) => ({
    type: 'TrafficRoute',
    mesh: 'default',
    name: 'greeter-split',
    sources: [{ match: { [SVC]: 'client' } }],
    destinations: [{ match: { [SVC]: 'greeter' } }],
    conf: {
      split: [
        { weight: v1, destination: { [SVC]: 'greeter', version: 'v1' } },
        { weight: v2, destination: { [SVC]: 'greeter', version: 'v2' } },
      ],
    },
  });
  // A FaultInjection's destinations also name the protocol (Kuma's rule): the client's calls are gRPC.
  const policy = (type: string, service: string, conf: unknown) => ({
    type,
    mesh: 'default',
    name: service,
    sources: everyone,
    destinations: [
      {
        match:
          type === 'FaultInjection' ? { [SVC]: service, 'mesh.io/protocol': 'grpc' } : { [SVC]: service },
      },
    ],
    conf,
  });
  const policies: Array<[string, object]> = [
    ['traffic-routes/greeter-split', split(80, 20)],
    ['timeouts/slow', policy('Timeout', 'slow', { grpc: { maxStreamDuration: '300ms' } })],
    ['retries/flaky', policy('Retry', 'flaky', { grpc: { numRetries: 2, retryOn: ['unavailable'] } })],
    [
      'fault-injections/faulty',
      policy('FaultInjection', 'faulty', { abort: { percentage: 50, httpStatus: 503 } }),
    ],
  ];
  /** Backends: Dataplane name, its tags, server.mjs flags. */
  const backends: Array<[string, Record<string, string>, string[]]> = [
    ['greeter-v1', { [SVC]: 'greeter', version: 'v1' }, ['--version', 'v1']],
    ['greeter-v2', { [SVC]: 'greeter', version: 'v2' }, ['--version', 'v2']],
    ['slow-1', { [SVC]: 'slow' }, ['--version', 'slow', '--delay-ms', '1000']],
    ['flaky-1', { [SVC]: 'flaky' }, ['--version', 'flaky', '--fail-first', '1', '--log-calls', 'true']],
    ['faulty-1', { [SVC]: 'faulty', 'mesh.io/protocol': 'grpc' }, ['--version', 'faulty']],
  ];
  const servers = new Map<string, GreeterProcess>();

  const greeter = (script: 'server.mjs' | 'client.mjs', args: string[], env: Record<string, string> = {}) => {
    const p = startGreeter(script, args, env);
    children.push(p);
    return p;
  };
  /** Runs client.mjs to the end; resolves with its summary line, exit code and stderr. */
  const runClient = async (
    args: string[],
    env: Record<string, string> = { GRPC_XDS_BOOTSTRAP: bootstrap },
  ) => {
    const c = greeter('client.mjs', args, env);
    const { code } = await c.exited;
    return { summary: c.lines.at(-1) as Summary | undefined, code, stderr: c.stderr() };
  };

  beforeAll(async () => {
    const noDefaults = { MESH_DEFAULTS_SKIP_DEFAULT_POLICIES: 'true' };
    const global = startNpm({
      ...noDefaults,
      MESH_MODE: 'global',
      MESH_STORE_LEVEL_PATH: dirs.global.path,
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
    });
    cps.push(global);
    for (const [name, , flags] of backends)
      servers.set(name, greeter('server.mjs', ['--port', '0', ...flags]));
    g = await global.ready;
    const zoneToken = await ok(call(g.apiPort, 'POST', '/tokens/zone', { zone: 'zone-1', validFor: '1h' }));
    zone = startNpm({
      ...noDefaults,
      MESH_MODE: 'zone',
      MESH_STORE_LEVEL_PATH: dirs.zone.path,
      MESH_GENERAL_ADVERTISED_HOSTNAME: '127.0.0.1',
      MESH_MULTIZONE_ZONE_NAME: 'zone-1',
      MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: `grpcs://127.0.0.1:${g.kdsPort}`,
      MESH_MULTIZONE_ZONE_KDS_TOKEN: zoneToken,
      MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE: join(dirs.global.path, 'tls', 'cert.pem'),
    });
    cps.push(zone);
    for (const [path, body] of policies) await ok(call(g.apiPort, 'PUT', `/meshes/default/${path}`, body));
    z = await zone.ready;
    expect(z.xdsPort).toBeGreaterThan(0);
    await eventually(
      async () => (await call(z.apiPort, 'GET', '/meshes/default')).status === 200,
      10_000,
      'the mesh on the zone',
    );

    const dataplane = (name: string, port: number, tags: Record<string, string>) => ({
      type: 'Dataplane',
      mesh: 'default',
      name,
      networking: { address: '127.0.0.1', inbound: [{ port, tags }] },
    });
    for (const [name, tags] of backends) {
      const { listening } = (await servers.get(name)!.line((l) => 'listening' in l)) as { listening: number };
      await ok(
        call(z.apiPort, 'PUT', `/meshes/default/dataplanes/${name}`, dataplane(name, listening, tags)),
      );
    }
    await ok(
      call(
        z.apiPort,
        'PUT',
        '/meshes/default/dataplanes/client-1',
        dataplane('client-1', 1, { [SVC]: 'client' }),
      ),
    );
    for (const [path] of policies) {
      await eventually(
        async () => (await call(z.apiPort, 'GET', `/meshes/default/${path}`)).status === 200,
        10_000,
        `${path} on the zone`,
      );
    }

    const file = JSON.parse(
      await ok(call(z.apiPort, 'GET', '/meshes/default/dataplanes/client-1/bootstrap')),
    );
    expect(file.xds_servers[0].server_uri).toBe(`127.0.0.1:${z.xdsPort}`);
    const token = (name: string) =>
      ok(call(z.apiPort, 'POST', '/tokens/dataplane', { mesh: 'default', name, validFor: '1h' }));
    const withToken = (t: string) => ({
      ...file,
      node: { ...file.node, metadata: { ...file.node.metadata, 'dataplane.token': t } },
    });
    bootstrap = join(dirs.files.path, 'client-1.json');
    writeFileSync(bootstrap, JSON.stringify(withToken(await token('client-1'))));
    otherTokenBootstrap = join(dirs.files.path, 'client-1-other-token.json');
    writeFileSync(otherTokenBootstrap, JSON.stringify(withToken(await token('greeter-v1'))));
  }, 30_000);

  afterAll(async () => {
    for (const c of children) if (c.proc.exitCode === null) c.proc.kill('SIGKILL');
    for (const p of cps) if (p.proc.exitCode === null) p.proc.kill('SIGTERM');
    await Promise.all([...children.map((c) => c.exited), ...cps.map((p) => p.exited)]);
    for (const d of Object.values(dirs)) d.cleanup();
  });

  it('a TrafficRoute 80/20 (written on Global) gives 80 ± 5 % over 1,000 calls', async () => {
    const { summary, code } = await runClient(['--calls', '1000']);
    expect(code).toBe(0);
    expect(summary?.codes).toEqual({ OK: 1000 });
    expect(summary?.answers.v1).toBeGreaterThanOrEqual(750);
    expect(summary?.answers.v1).toBeLessThanOrEqual(850);
    expect(summary!.answers.v1 + summary!.answers.v2).toBe(1000);
  });

  it('the running client is online on the zone, on Global within 1 s; 0/100 moves all its traffic within 2 s; offline with a disconnectTime after it exits', async () => {
    const before = new Set((await subscriptions(z.apiPort, 'client-1')).map((s) => s.id));
    // ~200 calls a second (a pause of 5 ms between calls), about 20 a window: back to back, the
    // client and its backends took three times the CPU to show the same shift.
    const client = greeter('client.mjs', ['--loop', 'true', '--interval-ms', '100', '--pause-ms', '5'], {
      GRPC_XDS_BOOTSTRAP: bootstrap,
    });
    const sub = await eventually(
      async () =>
        (await subscriptions(z.apiPort, 'client-1')).find((s) => !before.has(s.id) && !s.disconnectTime),
      10_000,
      'the client online on the zone',
    );
    const onZone = Date.now();
    await eventually(
      async () =>
        (await subscriptions(g.apiPort, 'zone-1.client-1')).find((s) => s.id === sub.id && !s.disconnectTime),
      1000,
      'the client online on Global within 1 s of the zone',
    );
    expect(Date.now() - onZone).toBeLessThan(1000);

    // Traffic flows 80/20 through this client before the change.
    await client.line((l) => ((l as Window).answers.v1 ?? 0) > 0 && ((l as Window).answers.v2 ?? 0) > 0);
    await ok(call(g.apiPort, 'PUT', '/meshes/default/traffic-routes/greeter-split', split(0, 100)));
    const changed = Date.now();
    await client.line((l) => (l as Window).from >= changed + 2500);
    const after = (client.lines as Window[]).filter((w) => w.from >= changed + 2000);
    expect(after.length).toBeGreaterThan(0);
    for (const w of after) {
      expect(w.answers.v1 ?? 0).toBe(0);
      expect(w.answers.v2).toBeGreaterThan(0);
      expect(Object.keys(w.codes)).toEqual(['OK']);
    }
    expect(client.proc.exitCode).toBeNull();

    client.proc.kill('SIGTERM');
    expect((await client.exited).code).toBe(0);
    const gone = await eventually(
      async () =>
        (await subscriptions(z.apiPort, 'client-1')).find((s) => s.id === sub.id && s.disconnectTime),
      5000,
      'the client offline on the zone',
    );
    expect(Date.parse(gone.disconnectTime!)).toBeGreaterThan(Date.parse(gone.connectTime!));
    await eventually(
      async () =>
        (await subscriptions(g.apiPort, 'zone-1.client-1')).find((s) => s.id === sub.id && s.disconnectTime),
      5000,
      'the client offline on Global',
    );
  });

  it('a Timeout of 300 ms fails a 1 s call with DEADLINE_EXCEEDED (the call itself allows 5 s)', async () => {
    const { summary } = await runClient(['--target', 'xds:///slow', '--calls', '1', '--deadline-ms', '5000']);
    expect(summary?.codes).toEqual({ DEADLINE_EXCEEDED: 1 });
  });

  it('a Retry makes calls pass through one injected UNAVAILABLE', async () => {
    const { summary } = await runClient(['--target', 'xds:///flaky', '--calls', '3']);
    expect(summary?.codes).toEqual({ OK: 3 });
    expect(servers.get('flaky-1')!.lines.filter((l) => 'call' in l)).toEqual([
      { call: 1, status: 'UNAVAILABLE' },
      { call: 2, status: 'OK' },
      { call: 3, status: 'OK' },
      { call: 4, status: 'OK' },
    ]);
  });

  it('a FaultInjection abort of 50 % fails about half of 200 calls', async () => {
    const { summary } = await runClient(['--target', 'xds:///faulty', '--calls', '200']);
    const failed = 200 - (summary?.codes.OK ?? 0);
    expect(failed).toBeGreaterThan(60);
    expect(failed).toBeLessThan(140);
    expect(Object.keys(summary!.codes).sort()).toEqual(['OK', 'UNAVAILABLE']);
  });

  it("a token that does not cover the proxy is refused with a reason: in the client's trace and the zone's log", async () => {
    const { summary, code, stderr } = await runClient(['--calls', '1', '--deadline-ms', '1500'], {
      GRPC_XDS_BOOTSTRAP: otherTokenBootstrap,
      GRPC_TRACE: 'xds_resolver',
      GRPC_VERBOSITY: 'DEBUG',
    });
    expect(code).toBe(1);
    expect(summary?.answers).toEqual({});
    const refused = await eventually(
      () => zone.lines.find((l) => l.msg === 'proxy refused' && l.node === 'default.client-1'),
      5000,
      "the zone's log line",
    );
    expect(refused.details).toMatch(/greeter-v1/);
    expect(stderr).toContain(`Resolution error due to xDS client transient error ${String(refused.details)}`);
  });
});
