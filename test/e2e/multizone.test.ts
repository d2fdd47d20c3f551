import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { tempDir } from '../helpers/control-plane.js';
import { eventually, tp } from '../helpers/multizone.js';
import type { CpProcess } from '../helpers/process.js';
import { startNpm } from '../helpers/process.js';

async function call(port: number, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`http://127.0.0.1:${port}${path}`, {
    method,
    headers: body === undefined ? {} : { 'content-type': 'application/json' },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
}
async function json<T = Record<string, unknown>>(port: number, path: string): Promise<T> {
  return (await (await call(port, 'GET', path)).json()) as T;
}
const exists = async (port: number, path: string) => (await call(port, 'GET', path)).status === 200;

type Sub = {
  disconnectTime?: string;
  status: { total: Record<string, string> };
  sync: { globalToZone: { start: string; snapshotResources: number } };
};
const lastSub = async (port: number, zone: string): Promise<Sub | undefined> =>
  ((await json(port, `/zones+insights/${zone}`)).zoneInsight as { subscriptions?: Sub[] }).subscriptions?.at(
    -1,
  );
const statusOf = async (port: number, zone: string) =>
  (await json<Array<{ name: string; url: string; active: boolean }>>(port, '/status/zones')).find(
    (z) => z.name === zone,
  );

describe('one Global and two zones as processes (npm start, temp data dirs, free ports)', () => {
  const dirs = {
    global: tempDir('e2e-global-'),
    z1: tempDir('e2e-z1-'),
    z2: tempDir('e2e-z2-'),
    z3: tempDir('e2e-z3-'),
  };
  const procs: CpProcess[] = [];
  afterAll(async () => {
    for (const p of procs) if (p.proc.exitCode === null) p.proc.kill('SIGKILL');
    await Promise.all(procs.map((p) => p.exited));
    for (const d of Object.values(dirs)) d.cleanup();
  });

  const start = (env: Record<string, string>): CpProcess => {
    const p = startNpm(env);
    procs.push(p);
    return p;
  };
  const zoneEnv = (name: string, dir: string, kdsPort: number, token: string) => ({
    MESH_MODE: 'zone',
    MESH_STORE_LEVEL_PATH: dir,
    MESH_MULTIZONE_ZONE_NAME: name,
    MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: `grpcs://127.0.0.1:${kdsPort}`,
    MESH_MULTIZONE_ZONE_KDS_TOKEN: token,
    MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE: join(dirs.global.path, 'tls', 'cert.pem'),
  });

  it('syncs both ways, sees a killed zone inactive within 15 s, resumes after restart, refuses a bad token', async () => {
    const global = start({
      MESH_MODE: 'global',
      MESH_STORE_LEVEL_PATH: dirs.global.path,
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
    });
    const g = await global.ready;
    expect(g.kdsPort).toBeGreaterThan(0);
    const token = async (zone: string) => {
      const res = await call(g.apiPort, 'POST', '/tokens/zone', { zone, validFor: '1h' });
      expect(res.status).toBe(200);
      return res.text();
    };
    const z1env = zoneEnv('zone-1', dirs.z1.path, g.kdsPort, await token('zone-1'));
    let zone1 = start(z1env);
    const zone2 = start(zoneEnv('zone-2', dirs.z2.path, g.kdsPort, await token('zone-2')));
    let z1 = await zone1.ready;
    const z2 = await zone2.ready;
    await eventually(
      async () =>
        (await statusOf(g.apiPort, 'zone-1'))?.active && (await statusOf(g.apiPort, 'zone-2'))?.active,
      10_000,
      'both zones active',
    );
    expect((await json(z1.apiPort, '/')).zone).toMatchObject({ name: 'zone-1', connected: true });
    // Global's address is an IP: no TLS server name is set, so Node prints no DEP0123 warning.
    expect(zone2.stderr()).not.toContain('DEP0123');

    // Down: a policy on Global reaches both zones.
    expect(
      (await call(g.apiPort, 'PUT', '/meshes/default/traffic-permissions/tp-1', tp('tp-1'))).status,
    ).toBe(201);
    await eventually(
      () => exists(z1.apiPort, '/meshes/default/traffic-permissions/tp-1'),
      5000,
      'tp-1 on zone-1',
    );
    await eventually(
      () => exists(z2.apiPort, '/meshes/default/traffic-permissions/tp-1'),
      5000,
      'tp-1 on zone-2',
    );

    // Up: a data plane and an ingress of zone-1 reach Global; the ingress, with its services, reaches zone-2.
    const dp = {
      type: 'Dataplane',
      mesh: 'default',
      name: 'web-1',
      networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }] },
    };
    expect((await call(z1.apiPort, 'PUT', '/meshes/default/dataplanes/web-1', dp)).status).toBe(201);
    const ingress = {
      type: 'ZoneIngress',
      name: 'ingress',
      networking: { address: '10.0.0.9', port: 10001 },
    };
    expect((await call(z1.apiPort, 'PUT', '/zone-ingresses/ingress', ingress)).status).toBe(201);
    await eventually(
      () => exists(g.apiPort, '/meshes/default/dataplanes/zone-1.web-1'),
      5000,
      'zone-1.web-1',
    );
    // The proxy's config timeline is its zone's, on the zone and through Global alike.
    const timeline = await json<{ total: number; items: unknown[] }>(
      z1.apiPort,
      '/meshes/default/dataplanes/web-1/xds/_history',
    );
    expect(timeline.total).toBeGreaterThan(0);
    expect(await json(g.apiPort, '/meshes/default/dataplanes/zone-1.web-1/xds/_history')).toEqual(timeline);
    const remote = await eventually(
      async () => {
        const r = await json<{ availableServices?: Array<{ instances: number }> }>(
          z2.apiPort,
          '/zone-ingresses/zone-1.ingress',
        );
        return r.availableServices?.[0]?.instances === 1 ? r : undefined;
      },
      5000,
      "zone-1's ingress with its services on zone-2",
    );
    expect(remote.availableServices).toEqual([
      { tags: { 'mesh.io/service': 'web', 'mesh.io/zone': 'zone-1' }, instances: 1, mesh: 'default' },
    ]);

    // SIGKILL zone-1: inactive within 15 s, its subscription gets a disconnect time.
    const killedAt = Date.now();
    process.kill(z1.pid, 'SIGKILL');
    await zone1.exited;
    await eventually(
      async () => (await statusOf(g.apiPort, 'zone-1'))?.active === false,
      15_000,
      'zone-1 inactive',
    );
    const detectedMs = Date.now() - killedAt;
    expect(detectedMs).toBeLessThan(15_000);
    expect((await lastSub(g.apiPort, 'zone-1'))?.disconnectTime).toEqual(expect.any(String));
    expect((await statusOf(g.apiPort, 'zone-1'))?.url).toMatch(/^grpcs:\/\/127\.0\.0\.1:\d+$/);
    expect((await statusOf(g.apiPort, 'zone-2'))?.active).toBe(true);
    // A connected zone cannot be deleted (decisions §3).
    expect((await call(g.apiPort, 'DELETE', '/zones/zone-2')).status).toBe(400);

    // A hung zone (SIGSTOP: its socket stays open) is seen by the heartbeat timeout, within 15 s;
    // once it runs again it reconnects and is active again. Watched from now on, while zone-1
    // resumes and zone-3 is refused below: the timeout runs meanwhile.
    const stoppedAt = Date.now();
    process.kill(z2.pid, 'SIGSTOP');
    const hung = eventually(
      async () => (await statusOf(g.apiPort, 'zone-2'))?.active === false,
      15_000,
      'zone-2 inactive',
    ).then(() => Date.now() - stoppedAt);
    // Handled here too, so that a failure of the steps between does not leave it unhandled.
    hung.catch(() => undefined);

    // Changes on Global while zone-1 is down: 3 creates and a delete.
    for (const n of ['a', 'b', 'c']) {
      expect(
        (await call(g.apiPort, 'PUT', `/meshes/default/traffic-permissions/down-${n}`, tp(`down-${n}`)))
          .status,
      ).toBe(201);
    }
    expect((await call(g.apiPort, 'DELETE', '/meshes/default/traffic-permissions/tp-1')).status).toBe(200);

    zone1 = start(z1env);
    z1 = await zone1.ready;
    for (const n of ['a', 'b', 'c']) {
      await eventually(
        () => exists(z1.apiPort, `/meshes/default/traffic-permissions/down-${n}`),
        10_000,
        `down-${n}`,
      );
    }
    await eventually(
      async () => !(await exists(z1.apiPort, '/meshes/default/traffic-permissions/tp-1')),
      5000,
      'tp-1 deleted',
    );
    // By resume: the new subscription sent exactly the 4 missed entries, no snapshot.
    const sub = await eventually(
      async () => {
        const s = await lastSub(g.apiPort, 'zone-1');
        return s && !s.disconnectTime && s.status.total.responsesAcknowledged === '4' ? s : undefined;
      },
      5000,
      'the resumed subscription',
    );
    expect(sub.sync.globalToZone).toMatchObject({ start: 'resume', snapshotResources: 0 });
    expect(sub.status.total.responsesSent).toBe('4');
    expect((await statusOf(g.apiPort, 'zone-1'))?.active).toBe(true);

    // A zone with a bad token is refused and never shown active.
    const zone3 = start(zoneEnv('zone-3', dirs.z3.path, g.kdsPort, 'bad-token'));
    const z3 = await zone3.ready;
    const link = await eventually(
      async () => {
        const l = (await json(z3.apiPort, '/')).zone as { connected: boolean; lastError?: string };
        return l.lastError ? l : undefined;
      },
      10_000,
      'zone-3 refused',
    );
    expect(link.connected).toBe(false);
    expect(link.lastError).toContain('UNAUTHENTICATED');
    for (let i = 0; i < 5; i++) {
      expect((await statusOf(g.apiPort, 'zone-3'))?.active ?? false).toBe(false);
      await new Promise((r) => setTimeout(r, 200));
    }

    const hungMs = await hung;
    expect(hungMs).toBeLessThan(15_000);
    process.kill(z2.pid, 'SIGCONT');
    await eventually(
      async () => (await statusOf(g.apiPort, 'zone-2'))?.active === true,
      15_000,
      'zone-2 back',
    );

    // Everything stops cleanly.
    for (const [p, r] of [
      [zone3, z3],
      [zone1, z1],
      [zone2, z2],
      [global, g],
    ] as const) {
      process.kill(r.pid, 'SIGTERM');
      expect((await p.exited).code).toBe(0);
    }
    process.stdout.write(
      `zone inactive on Global: ${detectedMs} ms after SIGKILL, ${hungMs} ms after SIGSTOP\n`,
    );
  }, 90_000);
});
