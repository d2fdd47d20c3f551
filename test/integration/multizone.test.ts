import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { createLevelLog } from '../../src/events/level-log.js';
import { tempDir } from '../helpers/control-plane.js';
import { capturingLogger, eventually, startGlobal, startZone, tp, zoneToken } from '../helpers/multizone.js';

const ACTOR = { name: 'test', groups: [], address: '127.0.0.1' };

const dp = (name: string, service: string, port = 8080) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: {
    address: '10.0.0.1',
    inbound: [{ port, tags: { 'mesh.io/service': service, version: 'v1' } }],
  },
});

async function put(cp: ControlPlane, url: string, payload: unknown): Promise<number> {
  const res = await cp.app.inject({ method: 'PUT', url, payload: payload as Record<string, unknown> });
  return res.statusCode;
}
async function getJson<T = Record<string, unknown>>(cp: ControlPlane, url: string): Promise<T> {
  return (await cp.app.inject({ method: 'GET', url })).json() as T;
}
type Sub = Record<string, unknown> & {
  disconnectTime?: string;
  status: { total: Record<string, string>; stat: Record<string, Record<string, string>> };
  sync: {
    globalToZone: { start: string; snapshotResources: number; ackedRevision: number };
    zoneToGlobal: {
      start: string;
      total: Record<string, string>;
      stat: Record<string, Record<string, string>>;
    };
  };
};
const subscriptions = async (global: ControlPlane, zone: string): Promise<Sub[]> =>
  ((await getJson(global, `/zones+insights/${zone}`)).zoneInsight as { subscriptions?: Sub[] })
    .subscriptions ?? [];
const statuses = (global: ControlPlane) =>
  getJson<Array<{ name: string; url: string; active: boolean }>>(global, '/status/zones');

describe('Global and a zone in one process (gRPC on port 0, TLS)', () => {
  const gdir = tempDir('mz-global-');
  const zdir = tempDir('mz-zone-');
  let global: ControlPlane;
  let zone: ControlPlane;
  let token: string;

  beforeAll(async () => {
    global = await startGlobal(gdir.path);
    token = await zoneToken(global, 'zone-1');
    zone = await startZone(global, gdir.path, 'zone-1', token, {
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: zdir.path,
    });
    await eventually(() => zone.multizone?.link?.().connected, 10_000, 'the zone to connect');
  });
  afterAll(async () => {
    await zone?.close();
    await global?.close();
    gdir.cleanup();
    zdir.cleanup();
  });

  it('says who is who: GET / and /config on the zone, /status/zones and the Zone on Global', async () => {
    const info = await getJson(zone, '/');
    expect(info.mode).toBe('zone');
    expect(info.zone).toMatchObject({
      name: 'zone-1',
      globalAddress: `grpcs://127.0.0.1:${global.ports.kds}`,
      connected: true,
      globalInstanceId: (await getJson(global, '/')).instanceId,
    });
    const config = await getJson<{ mode: string; multizone: { zone: Record<string, unknown> } }>(
      zone,
      '/config',
    );
    expect(config.mode).toBe('zone');
    expect(config.multizone.zone).toMatchObject({ name: 'zone-1', connected: true, kds: { token: '*****' } });
    const zones = await statuses(global);
    expect(zones).toEqual([
      { name: 'zone-1', url: expect.stringMatching(/^grpcs:\/\/127\.0\.0\.1:\d+$/), active: true },
    ]);
    expect((await getJson(global, '/zones/zone-1')).enabled).toBe(true);
    // Standalone and zone answer [] (decisions §6).
    expect(await statuses(zone)).toEqual([]);
  });

  it('keeps each kind on its side: 405 with a reason', async () => {
    const onZone = await zone.app.inject({
      method: 'PUT',
      url: '/meshes/default/traffic-permissions/x',
      payload: tp('x'),
    });
    expect(onZone.statusCode).toBe(405);
    expect(onZone.json().details).toContain('write it on Global');
    const onGlobal = await global.app.inject({
      method: 'PUT',
      url: '/meshes/default/dataplanes/x',
      payload: dp('x', 'web'),
    });
    expect(onGlobal.statusCode).toBe(405);
    expect(onGlobal.json().details).toContain('owned by zones');
  });

  it('sends what flows down: the default mesh, its policies and secrets, but not the token signing keys', async () => {
    await eventually(
      () => zone.views.get('TrafficPermission', 'default', 'allow-all-default'),
      5000,
      'defaults',
    );
    expect(zone.views.get('Mesh', undefined, 'default')?.origin).toBe('global');
    expect(zone.views.get('Secret', 'default', 'dataplane-token-signing-key-default-1')).toBeDefined();
    expect(zone.views.get('GlobalSecret', undefined, 'zone-ingress-token-signing-key-1')).toBeDefined();
    expect(zone.views.get('GlobalSecret', undefined, 'zone-token-signing-key-1')).toBeUndefined();
    expect(zone.views.get('GlobalSecret', undefined, 'user-token-signing-key-1')).toBeUndefined();
  });

  it('a policy written on Global is on the zone, with Global times; its delete too', async () => {
    expect(await put(global, '/meshes/default/traffic-permissions/tp-1', tp('tp-1'))).toBe(201);
    const onGlobal = await getJson(global, '/meshes/default/traffic-permissions/tp-1');
    const synced = await eventually(
      () => zone.views.get('TrafficPermission', 'default', 'tp-1'),
      5000,
      'tp-1 on the zone',
    );
    expect(synced.resource).toEqual(onGlobal);
    expect(synced.origin).toBe('global');
    expect(
      (await global.app.inject({ method: 'DELETE', url: '/meshes/default/traffic-permissions/tp-1' }))
        .statusCode,
    ).toBe(200);
    await eventually(
      () => !zone.views.get('TrafficPermission', 'default', 'tp-1'),
      5000,
      'tp-1 gone from the zone',
    );
  });

  it('the targetRef kinds flow down like every policy, and the zone refuses writing them', async () => {
    const mesh = { kind: 'Mesh' };
    const bodies: Array<[string, string, Record<string, unknown>]> = [
      [
        'meshtrafficpermissions',
        'MeshTrafficPermission',
        { targetRef: mesh, from: [{ targetRef: mesh, default: { action: 'ALLOW' } }] },
      ],
      [
        'meshaccesslogs',
        'MeshAccessLog',
        { targetRef: mesh, from: [{ targetRef: mesh, default: { backends: [] } }] },
      ],
      ['meshtraces', 'MeshTrace', { targetRef: mesh, default: { backends: [] } }],
    ];
    for (const [collection, type, spec] of bodies) {
      const body = { type, mesh: 'default', name: 'tr-1', spec };
      expect(await put(global, `/meshes/default/${collection}/tr-1`, body), collection).toBe(201);
      const synced = await eventually(
        () => zone.views.get(type, 'default', 'tr-1'),
        5000,
        `${type} on the zone`,
      );
      expect(synced.resource).toEqual(await getJson(global, `/meshes/default/${collection}/tr-1`));
      expect(synced.origin).toBe('global');
      const onZone = await zone.app.inject({
        method: 'PUT',
        url: `/meshes/default/${collection}/tr-2`,
        payload: body,
      });
      expect(onZone.statusCode, collection).toBe(405);
      expect(onZone.json().details).toContain('write it on Global');
    }
  });

  it('a change set written on Global reaches the zone as one batch: one group, the same id, consecutive revisions', async () => {
    const commits: Array<Array<{ revision: number; changeSet?: string }>> = [];
    const stop = zone.log.onCommit((entries) => commits.push(entries.map((e) => ({ ...e }))));
    // More entries than one sync batch holds (250): a new mesh, its defaults and 300 policies.
    const items = [
      { type: 'Mesh', name: 'set-mesh' },
      ...Array.from({ length: 300 }, (_, i) => tp(`p-${i}`, 'set-mesh')),
    ];
    const res = await global.app.inject({
      method: 'POST',
      url: '/_changes',
      payload: { items },
      headers: { 'content-type': 'application/json' },
    });
    expect(res.statusCode, res.body).toBe(200);
    const { changeSet } = res.json<{ changeSet: string }>();
    const onGlobal = (await getJson<{ total: number }>(global, `/_events?changeSet=${changeSet}&size=1`))
      .total;
    await eventually(
      () => zone.views.get('TrafficPermission', 'set-mesh', 'p-299'),
      10_000,
      'the set on the zone',
    );
    stop();
    const events = await getJson<{ total: number; items: Array<{ revision: number; origin?: string }> }>(
      zone,
      `/_events?changeSet=${changeSet}&size=1000`,
    );
    // Everything of the set that flows down (the mesh's signing key is a secret: it does too).
    expect(events.total).toBeGreaterThanOrEqual(301);
    expect(events.total).toBeLessThanOrEqual(onGlobal);
    const revisions = events.items.map((e) => e.revision);
    expect(revisions).toEqual(revisions.map((_, i) => revisions[0] + i));
    const holding = commits.filter((c) => c.some((e) => e.changeSet === changeSet));
    expect(holding).toHaveLength(1);
    expect(holding[0].filter((e) => e.changeSet === changeSet)).toHaveLength(events.total);
    // A set on the zone is held to the zone's mode, per item: a policy is Global's (405).
    const onZone = await zone.app.inject({
      method: 'POST',
      url: '/_changes',
      payload: { items: [dp('set-dp', 'web'), tp('zone-tp')] },
      headers: { 'content-type': 'application/json' },
    });
    expect(onZone.statusCode).toBe(405);
    expect(onZone.json().item).toMatchObject({ index: 1, kind: 'TrafficPermission' });
    // A set of the zone's own proxies reaches Global with its id, as <zone>.<name>.
    const up = await zone.app.inject({
      method: 'POST',
      url: '/_changes',
      payload: { items: [dp('set-dp-1', 'web'), dp('set-dp-2', 'web', 8081)] },
      headers: { 'content-type': 'application/json' },
    });
    expect(up.statusCode, up.body).toBe(200);
    const zoneSet = up.json<{ changeSet: string }>().changeSet;
    await eventually(
      () => global.views.get('Dataplane', 'default', 'zone-1.set-dp-2'),
      10_000,
      'the set on Global',
    );
    const onGlobalSet = await getJson<{ items: Array<{ name: string }> }>(
      global,
      `/_events?changeSet=${zoneSet}`,
    );
    expect(onGlobalSet.items.map((e) => e.name)).toEqual(['zone-1.set-dp-1', 'zone-1.set-dp-2']);
    for (const name of ['set-dp-1', 'set-dp-2']) {
      await zone.app.inject({ method: 'DELETE', url: `/meshes/default/dataplanes/${name}` });
    }
  });

  it('a data plane written on the zone is on Global as <zone>.<name>, origin the zone, same creation time; its delete too', async () => {
    expect(await put(zone, '/meshes/default/dataplanes/dp-1', dp('dp-1', 'web'))).toBe(201);
    const onZone = await getJson(zone, '/meshes/default/dataplanes/dp-1');
    const synced = await eventually(
      () => global.views.get('Dataplane', 'default', 'zone-1.dp-1'),
      5000,
      'zone-1.dp-1 on Global',
    );
    expect(synced.origin).toBe('zone-1');
    expect(synced.resource).toEqual({ ...onZone, name: 'zone-1.dp-1' });
    expect(
      (await zone.app.inject({ method: 'DELETE', url: '/meshes/default/dataplanes/dp-1' })).statusCode,
    ).toBe(200);
    await eventually(
      () => !global.views.get('Dataplane', 'default', 'zone-1.dp-1'),
      5000,
      'zone-1.dp-1 gone',
    );
    // Never sent back down: a zone's own resources do not return to it.
    expect(zone.views.get('Dataplane', 'default', 'zone-1.dp-1')).toBeUndefined();
  });

  it('serves a zone proxy of 95 characters on Global, where it is named with 102', async () => {
    const name = 'p'.repeat(95);
    expect(await put(zone, `/meshes/default/dataplanes/${name}`, dp(name, 'web'))).toBe(201);
    const onGlobal = `zone-1.${name}`;
    await eventually(() => global.views.get('Dataplane', 'default', onGlobal), 5000, 'the proxy on Global');
    for (const url of [
      `/meshes/default/dataplanes/${onGlobal}`,
      `/meshes/default/dataplanes+insights/${onGlobal}`,
      `/meshes/default/dataplanes/${onGlobal}/_history`,
    ]) {
      const res = await global.app.inject({ method: 'GET', url });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(200);
    }
    expect((await getJson(global, `/meshes/default/dataplanes/${onGlobal}`)).name).toBe(onGlobal);
    expect(
      (await zone.app.inject({ method: 'DELETE', url: `/meshes/default/dataplanes/${name}` })).statusCode,
    ).toBe(200);
    await eventually(() => !global.views.get('Dataplane', 'default', onGlobal), 5000, 'the proxy gone');
  });

  it('sends a mesh of 240 characters down with its defaults, whose names are longer than 253', async () => {
    const mesh = 'm'.repeat(240);
    expect(await put(global, `/meshes/${mesh}`, { type: 'Mesh', name: mesh })).toBe(201);
    const key = `dataplane-token-signing-key-${mesh}-1`;
    await eventually(() => zone.views.get('Secret', mesh, key), 5000, 'the signing key on the zone');
    expect(zone.views.get('CircuitBreaker', mesh, `circuit-breaker-all-${mesh}`)).toBeDefined();
    const res = await zone.app.inject({ method: 'GET', url: `/meshes/${mesh}/secrets/${key}` });
    expect(res.statusCode).toBe(200);
    expect((await global.app.inject({ method: 'DELETE', url: `/meshes/${mesh}` })).statusCode).toBe(200);
    await eventually(() => !zone.views.get('Mesh', undefined, mesh), 5000, 'the mesh gone on the zone');
  });

  it('a NACKed entry is counted and reported, and the next entry still arrives', async () => {
    const before = (await subscriptions(global, 'zone-1')).at(-1) as Sub;
    const rejectedBefore = Number(before.status.stat.TrafficPermission?.responsesRejected ?? 0);
    // An entry the zone's schema refuses (as from a newer Global): appended to Global's log directly.
    const t = new Date().toISOString();
    const bad = { ...tp('bad-1'), sources: 'everyone', creationTime: t, modificationTime: t };
    const { durable } = global.log.append([
      {
        kind: 'TrafficPermission',
        mesh: 'default',
        name: 'bad-1',
        operation: 'create',
        resource: bad,
        actor: ACTOR,
        origin: 'local',
      },
    ]);
    await durable;
    expect(await put(global, '/meshes/default/traffic-permissions/after-bad', tp('after-bad'))).toBe(201);
    await eventually(
      () => zone.views.get('TrafficPermission', 'default', 'after-bad'),
      5000,
      'the next entry',
    );
    expect(zone.views.get('TrafficPermission', 'default', 'bad-1')).toBeUndefined();
    const sub = await eventually(
      async () => {
        const s = (await subscriptions(global, 'zone-1')).at(-1) as Sub;
        const c = s.status.stat.TrafficPermission;
        // Counted, and no batch still in flight (a loaded machine may read between a send and its ack).
        return Number(c.responsesRejected) === rejectedBefore + 1 &&
          Number(c.responsesSent) === Number(c.responsesAcknowledged) + Number(c.responsesRejected)
          ? s
          : undefined;
      },
      5000,
      'the rejection counted',
    );
    const c = sub.status.stat.TrafficPermission;
    expect(Number(c.responsesSent)).toBe(Number(c.responsesAcknowledged) + Number(c.responsesRejected));
    expect(sub.sync.globalToZone.ackedRevision).toBeGreaterThanOrEqual(global.log.head() - 1);
  });

  it('computes ingress available services on Global from the zone data planes', async () => {
    expect(await put(zone, '/meshes/default/dataplanes/web-1', dp('web-1', 'web'))).toBe(201);
    expect(await put(zone, '/meshes/default/dataplanes/web-2', dp('web-2', 'web', 8081))).toBe(201);
    expect(await put(zone, '/meshes/default/dataplanes/db-1', dp('db-1', 'db'))).toBe(201);
    expect(
      await put(zone, '/zone-ingresses/ingress', {
        type: 'ZoneIngress',
        name: 'ingress',
        networking: { address: '10.0.0.9', port: 10001, advertisedAddress: '1.2.3.4', advertisedPort: 10001 },
      }),
    ).toBe(201);
    const want = [
      {
        tags: { 'mesh.io/service': 'db', 'mesh.io/zone': 'zone-1', version: 'v1' },
        instances: 1,
        mesh: 'default',
      },
      {
        tags: { 'mesh.io/service': 'web', 'mesh.io/zone': 'zone-1', version: 'v1' },
        instances: 2,
        mesh: 'default',
      },
    ];
    await eventually(
      async () =>
        JSON.stringify((await getJson(global, '/zone-ingresses/zone-1.ingress')).availableServices) ===
        JSON.stringify(want),
      5000,
      'available services on Global',
    );
    // The zone's own ingress is not sent back to it.
    expect(zone.views.get('ZoneIngress', undefined, 'zone-1.ingress')).toBeUndefined();
  });

  it('shows the zone proxies online from the status it sends, and offline while it is disconnected; a connected zone cannot be deleted', async () => {
    zone.status.setDataplaneInsight('default', 'web-1', {
      subscriptions: [{ id: 's-1', controlPlaneInstanceId: 'cp', connectTime: new Date().toISOString() }],
    });
    const online = async () =>
      (await getJson<{ total: number }>(global, '/meshes/default/dataplanes+insights?status=online')).total;
    await eventually(async () => (await online()) === 1, 5000, 'web-1 online on Global');

    const refused = await global.app.inject({ method: 'DELETE', url: '/zones/zone-1' });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().details).toContain('connected');

    await zone.close();
    await eventually(async () => (await statuses(global))[0]?.active === false, 5000, 'zone-1 inactive');
    expect(await online()).toBe(0);
    const last = (await subscriptions(global, 'zone-1')).at(-1) as Sub;
    expect(last.disconnectTime).toEqual(expect.any(String));
  });

  it('resumes after a restart: what Global wrote meanwhile arrives and no snapshot is sent', async () => {
    expect(await put(global, '/meshes/default/traffic-permissions/while-down', tp('while-down'))).toBe(201);
    zone = await startZone(global, gdir.path, 'zone-1', token, {
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: zdir.path,
    });
    await eventually(
      () => zone.views.get('TrafficPermission', 'default', 'while-down'),
      10_000,
      'while-down',
    );
    expect((await subscriptions(global, 'zone-1')).length).toBeGreaterThanOrEqual(2);
    const last = await eventually(
      async () => {
        const s = (await subscriptions(global, 'zone-1')).at(-1) as Sub;
        return s.status.total.responsesAcknowledged === '1' ? s : undefined;
      },
      5000,
      'the ack counted',
    );
    expect(last.disconnectTime).toBeUndefined();
    // Only the one entry written while the zone was down was sent: no snapshot.
    expect(last.sync.globalToZone).toMatchObject({ start: 'resume', snapshotResources: 0 });
    expect(last.sync.zoneToGlobal.start).toBe('resume');
    expect(last.status.total.responsesSent).toBe('1');
    expect((await statuses(global))[0].active).toBe(true);
  });

  it('after a snapshot, removes what the peer owned that the snapshot lacks (cursor unavailable)', async () => {
    expect(await put(global, '/meshes/default/traffic-permissions/gone-later', tp('gone-later'))).toBe(201);
    await eventually(() => zone.views.get('TrafficPermission', 'default', 'gone-later'), 5000, 'gone-later');
    await zone.close();
    expect(
      (await global.app.inject({ method: 'DELETE', url: '/meshes/default/traffic-permissions/gone-later' }))
        .statusCode,
    ).toBe(200);
    // The zone's cursor names a log Global does not have: Global must send a snapshot.
    const log = createLevelLog({ path: zdir.path });
    await log.open();
    await log.putMeta('sync.down', JSON.stringify({ logId: 'another-global', revision: 3 }));
    await log.close();
    zone = await startZone(global, gdir.path, 'zone-1', token, {
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: zdir.path,
    });
    await eventually(
      () => !zone.views.get('TrafficPermission', 'default', 'gone-later'),
      10_000,
      'gone-later removed',
    );
    const last = (await subscriptions(global, 'zone-1')).at(-1) as Sub;
    expect(last.sync.globalToZone.start).toBe('snapshot');
    expect(last.sync.globalToZone.snapshotResources).toBeGreaterThan(0);
    // What Global still has is kept.
    expect(zone.views.get('TrafficPermission', 'default', 'while-down')).toBeDefined();
  });

  it('deleting a disconnected zone removes what it owned; when it comes back it sends a snapshot', async () => {
    await eventually(() => global.views.get('Dataplane', 'default', 'zone-1.web-1'), 5000, 'web-1 on Global');
    await zone.close();
    await eventually(async () => (await statuses(global))[0]?.active === false, 5000, 'zone-1 inactive');
    expect((await global.app.inject({ method: 'DELETE', url: '/zones/zone-1' })).statusCode).toBe(200);
    expect(global.views.get('Dataplane', 'default', 'zone-1.web-1')).toBeUndefined();
    expect(global.views.get('ZoneIngress', undefined, 'zone-1.ingress')).toBeUndefined();
    expect(await statuses(global)).toEqual([]);

    zone = await startZone(global, gdir.path, 'zone-1', token, {
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: zdir.path,
    });
    await eventually(() => global.views.get('Dataplane', 'default', 'zone-1.web-1'), 10_000, 'web-1 back');
    const last = await eventually(
      async () => {
        const s = (await subscriptions(global, 'zone-1')).at(-1) as Sub;
        return Number(s.sync.zoneToGlobal.total.responsesAcknowledged) >= 4 ? s : undefined;
      },
      5000,
      'the snapshot counted',
    );
    expect(last.sync.zoneToGlobal.start).toBe('snapshot');
    expect(global.views.get('ZoneIngress', undefined, 'zone-1.ingress')).toBeDefined();
  });
});

describe('zones that must not connect', () => {
  const gdir = tempDir('mz-global2-');
  let global: ControlPlane;
  const zones: ControlPlane[] = [];
  beforeAll(async () => {
    global = await startGlobal(gdir.path);
  });
  afterAll(async () => {
    for (const z of zones) await z.close();
    await global?.close();
    gdir.cleanup();
  });

  it('refuses a bad token, a token of another zone and a token without the cp scope; never shows them active', async () => {
    const other = await zoneToken(global, 'zone-b');
    const noCp = await zoneToken(global, 'zone-c', ['ingress']);
    const disabled = await zoneToken(global, 'zone-d');
    const put = await global.app.inject({
      method: 'PUT',
      url: '/zones/zone-d',
      payload: { type: 'Zone', name: 'zone-d', enabled: false },
    });
    expect(put.statusCode).toBe(201);
    const cases = [
      { name: 'zone-a', token: 'not-a-jwt', why: 'UNAUTHENTICATED' },
      { name: 'zone-x', token: other, why: 'PERMISSION_DENIED' },
      { name: 'zone-c', token: noCp, why: 'PERMISSION_DENIED' },
      { name: 'zone-d', token: disabled, why: 'disabled' },
    ];
    for (const c of cases) zones.push(await startZone(global, gdir.path, c.name, c.token));
    for (const [i, c] of cases.entries()) {
      const link = await eventually(
        () => zones[i].multizone?.link?.().lastError && zones[i].multizone?.link?.(),
        5000,
        c.name,
      );
      expect(link.connected).toBe(false);
      expect(link.lastError).toContain(c.why);
    }
    await new Promise((r) => setTimeout(r, 500));
    expect(await statuses(global)).toEqual([{ name: 'zone-d', url: '', active: false }]);
    expect(global.views.get('Zone', undefined, 'zone-a')).toBeUndefined();
  });

  it('does not connect to a Global it cannot verify, and connects with tlsSkipVerify (logging a warning)', async () => {
    const token = await zoneToken(global, 'zone-tls');
    const unverified = await startZone(global, gdir.path, 'zone-tls', token, {
      MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE: '',
    });
    zones.push(unverified);
    const link = await eventually(
      () => unverified.multizone?.link?.().lastError && unverified.multizone?.link?.(),
      5000,
      'tls failure',
    );
    expect(link.connected).toBe(false);
    // The reason says which key to set.
    expect(link.lastError).toContain(
      'is not trusted (self-signed certificate): set multizone.zone.kds.rootCaFile',
    );
    await unverified.close();
    zones.pop();
    // Pointed at the HTTP API port, which is not TLS: said so.
    const plain = await startZone(global, gdir.path, 'zone-tls', token, {
      MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: `grpcs://127.0.0.1:${global.ports.api}`,
    });
    zones.push(plain);
    const notTls = await eventually(() => plain.multizone?.link?.().lastError, 5000, 'plain port failure');
    expect(notTls).toBe(
      `127.0.0.1:${global.ports.api} does not speak TLS: is it the sync port of a Global (multizone.global.kds.grpcPort, 5685 by default)? (TLS error: wrong version number)`,
    );
    await plain.close();
    zones.pop();
    // The trusted certificate names 127.0.0.1, not 127.0.0.2 (also loopback): with no TLS server
    // name sent for an IP address, the certificate is still checked against the address dialled.
    const misnamed = await startZone(global, gdir.path, 'zone-tls', token, {
      MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: `grpcs://127.0.0.2:${global.ports.kds}`,
    });
    zones.push(misnamed);
    const refused = await eventually(() => misnamed.multizone?.link?.().lastError, 5000, 'altname failure');
    expect(refused).toContain('127.0.0.2 is not in the cert');
    expect(misnamed.multizone?.link?.().connected).toBe(false);
    await misnamed.close();
    zones.pop();
    const { logger, lines } = capturingLogger();
    const skip = await startZone(
      global,
      gdir.path,
      'zone-tls',
      token,
      { MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE: '', MESH_MULTIZONE_ZONE_KDS_TLS_SKIP_VERIFY: 'true' },
      { logger },
    );
    zones.push(skip);
    await eventually(() => skip.multizone?.link?.().connected, 5000, 'connected without verification');
    expect(lines.find((l) => l.level === 40 && String(l.msg).includes('NOT verified'))).toBeDefined();
  });
});
