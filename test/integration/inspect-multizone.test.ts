import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { tempDir } from '../helpers/control-plane.js';
import { eventually, startGlobal, startZone, zoneToken } from '../helpers/multizone.js';

const SVC = 'mesh.io/service';
const dp = (name: string, service: string) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: {
    address: '10.0.0.1',
    inbound: [{ port: 8080, tags: { [SVC]: service } }],
    outbound: [{ port: 10001, tags: { [SVC]: 'db' } }],
  },
});
const timeout = (name: string, service: string) => ({
  type: 'Timeout',
  mesh: 'default',
  name,
  sources: [{ match: { [SVC]: service } }],
  destinations: [{ match: { [SVC]: '*' } }],
  conf: { connectTimeout: '2s' },
});

async function getJson(cp: ControlPlane, url: string) {
  const res = await cp.app.inject({ method: 'GET', url });
  return { status: res.statusCode, body: res.json() };
}

describe('inspect on Global and on zones (decisions §10: every mode, Global over every zone)', () => {
  const gdir = tempDir('inspect-global-');
  let global: ControlPlane;
  const zones: ControlPlane[] = [];

  beforeAll(async () => {
    global = await startGlobal(gdir.path);
    for (const name of ['zone-1', 'zone-2']) {
      const zone = await startZone(global, gdir.path, name, await zoneToken(global, name));
      zones.push(zone);
      await eventually(() => zone.multizone?.link?.().connected, 10_000, `${name} to connect`);
      await eventually(() => zone.views.get('Mesh', undefined, 'default'), 5000, `the mesh on ${name}`);
      const put = await zone.app.inject({
        method: 'PUT',
        url: '/meshes/default/dataplanes/web',
        payload: dp('web', 'web'),
      });
      expect(put.statusCode, put.body).toBe(201);
    }
    await eventually(
      () => ['zone-1', 'zone-2'].every((z) => global.views.get('Dataplane', 'default', `${z}.web`)),
      10_000,
      'both proxies on Global',
    );
  });
  afterAll(async () => {
    for (const zone of zones) await zone.close();
    await global?.close();
    gdir.cleanup();
  });

  it('Global answers for both zones’ proxies, and a policy written on Global reaches both', async () => {
    const put = await global.app.inject({
      method: 'PUT',
      url: '/meshes/default/timeouts/web-timeout',
      payload: timeout('web-timeout', 'web'),
    });
    expect(put.statusCode, put.body).toBe(201);
    // Read-your-writes on Global: no wait.
    const affected = await getJson(global, '/meshes/default/timeouts/web-timeout/dataplanes');
    expect(affected.status).toBe(200);
    expect(affected.body.items.map((i: { dataplane: { name: string } }) => i.dataplane.name)).toEqual([
      'zone-1.web',
      'zone-2.web',
    ]);
    const one = await getJson(global, '/meshes/default/dataplanes/zone-2.web/policies');
    expect(one.status).toBe(200);
    expect(one.body.items[0]).toMatchObject({ type: 'inbound', name: '10.0.0.1:8080:8080', service: 'web' });
  });

  it('a zone answers for its own proxies with the policies Global sent it', async () => {
    const [zone] = zones;
    await eventually(
      () => zone.views.get('Timeout', 'default', 'web-timeout'),
      5000,
      'the timeout on zone-1',
    );
    const affected = await getJson(zone, '/meshes/default/timeouts/web-timeout/dataplanes');
    expect(affected.body.items.map((i: { dataplane: { name: string } }) => i.dataplane.name)).toEqual([
      'web',
    ]);
    const none = await getJson(zone, '/meshes/default/dataplanes/zone-2.web/policies');
    expect(none.status).toBe(404);
    expect(none.body.details).toBe('Dataplane "zone-2.web" not found in mesh "default"');
  });

  it('Global follows a proxy that a zone deletes', async () => {
    const del = await zones[1].app.inject({ method: 'DELETE', url: '/meshes/default/dataplanes/web' });
    expect(del.statusCode).toBe(200);
    await eventually(
      async () => (await getJson(global, '/meshes/default/timeouts/web-timeout/dataplanes')).body.total === 1,
      10_000,
      'zone-2.web gone from the affected proxies on Global',
    );
  });
});
