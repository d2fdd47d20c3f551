import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { REMOTE, bearer, issueUserToken } from '../helpers/auth.js';
import { startListeningPlane, startTestPlane, tempDir } from '../helpers/control-plane.js';
import { openSse } from '../helpers/sse.js';

const all = [{ match: { 'mesh.io/service': '*' } }];
const tp = (mesh: string, name: string, service = 'web') => ({
  type: 'TrafficPermission',
  mesh,
  name,
  sources: all,
  destinations: [{ match: { 'mesh.io/service': service } }],
});
const mesh = (name: string) => ({ type: 'Mesh', name });

interface SetAnswer {
  changeSet: string | null;
  dryRun: boolean;
  revision: number;
  items: Array<{
    index: number;
    kind: string;
    mesh?: string;
    name: string;
    operation: string;
    revision: number | null;
  }>;
}
interface EventList {
  total: number;
  items: Array<{
    revision: number;
    kind: string;
    mesh?: string;
    name: string;
    operation: string;
    changeSet?: string;
    actor: { name: string };
  }>;
}

describe('change sets: POST /_changes', () => {
  let cp: ControlPlane;
  let writer: string;
  let shopWriter: string;

  const post = (url: string, body: unknown, headers: Record<string, string> = {}, remote = false) =>
    cp.app.inject({
      method: 'POST',
      url,
      payload: typeof body === 'string' ? body : JSON.stringify(body),
      headers: { 'content-type': 'application/json', ...headers },
      ...(remote ? { remoteAddress: REMOTE } : {}),
    });
  const get = (url: string) => cp.app.inject({ method: 'GET', url });
  const head = (): number => cp.log.head();

  beforeAll(async () => {
    cp = await startTestPlane({
      MESH_API_SERVER_AUTHZ_GROUPS: JSON.stringify({ 'shop-team': { role: 'writer', meshes: ['shop'] } }),
    });
    writer = await issueUserToken(cp.app, { name: 'wes', groups: ['mesh-system:writer'] });
    shopWriter = await issueUserToken(cp.app, { name: 'sam', groups: ['shop-team'] });
  });
  afterAll(async () => {
    await cp.close();
  });

  it('creates a mesh and resources in it as one group: consecutive revisions, one id, one actor', async () => {
    const before = head();
    const res = await post(
      '/_changes',
      { items: [mesh('shop'), tp('shop', 'a'), { upsert: tp('shop', 'b') }, tp('default', 'c')] },
      bearer(writer),
      true,
    );
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<SetAnswer>();
    expect(body.changeSet).toMatch(/^[0-9a-f-]{36}$/);
    expect(body.dryRun).toBe(false);
    expect(body.items.map((i) => [i.index, i.kind, i.mesh, i.name, i.operation])).toEqual([
      [0, 'Mesh', undefined, 'shop', 'create'],
      [1, 'TrafficPermission', 'shop', 'a', 'create'],
      [2, 'TrafficPermission', 'shop', 'b', 'create'],
      [3, 'TrafficPermission', 'default', 'c', 'create'],
    ]);
    expect(body.revision).toBe(head());
    expect(res.headers['x-mesh-revision']).toBe(String(head()));
    // Every entry from the first to the last is the set's (a new mesh brings its defaults with it).
    const events = (await get(`/_events?fromRevision=${before + 1}&size=1000`)).json<EventList>();
    expect(events.total).toBe(head() - before);
    expect(events.items.every((e) => e.changeSet === body.changeSet)).toBe(true);
    expect(new Set(events.items.map((e) => e.actor.name))).toEqual(new Set(['wes']));
    expect(events.items.map((e) => e.revision)).toEqual(
      Array.from({ length: head() - before }, (_, i) => before + 1 + i),
    );
    // Each item's revision is its resource's ETag.
    for (const item of body.items) {
      const url =
        item.kind === 'Mesh'
          ? `/meshes/${item.name}`
          : `/meshes/${item.mesh}/traffic-permissions/${item.name}`;
      const r = await get(url);
      expect(r.statusCode).toBe(200);
      expect(r.headers.etag).toBe(`"${item.revision}"`);
    }
    // History and the changeSet filter show it.
    const history = (await get('/meshes/shop/traffic-permissions/a/_history')).json<EventList>();
    expect(history.items[0].changeSet).toBe(body.changeSet);
    const filtered = (await get(`/_events?changeSet=${body.changeSet}`)).json<EventList>();
    expect(filtered.total).toBe(head() - before);
    const single = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/traffic-permissions/single',
      payload: tp('default', 'single'),
    });
    expect(single.statusCode).toBe(201);
    const last = (await get(`/_events?fromRevision=${head()}`)).json<EventList>();
    expect(last.items[0]).not.toHaveProperty('changeSet');
  });

  it('a set whose third item is invalid writes nothing and names the item', async () => {
    const before = head();
    const res = await post('/_changes', {
      items: [mesh('m3'), tp('m3', 'ok'), { ...tp('m3', 'bad'), sources: 'nope' }, tp('m3', 'after')],
    });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.item).toEqual({ index: 2, kind: 'TrafficPermission', mesh: 'm3', name: 'bad' });
    expect(body.details).toMatch(/^item 2 \(TrafficPermission m3\/bad\): /);
    expect(body.causes[0].field).toMatch(/^items\[2\]\.sources/);
    expect(head()).toBe(before);
    expect((await get('/meshes/m3')).statusCode).toBe(404);
  });

  it('a refusal decided on the state (412, 404, no mesh) names the item and writes nothing', async () => {
    const before = head();
    const r412 = await post('/_changes', {
      items: [tp('default', 'x1'), { upsert: tp('default', 'c', 'other'), ifMatch: 1 }],
    });
    expect(r412.statusCode).toBe(412);
    expect(r412.json().item).toEqual({ index: 1, kind: 'TrafficPermission', mesh: 'default', name: 'c' });
    const r404 = await post('/_changes', {
      items: [tp('default', 'x1'), { delete: { type: 'TrafficPermission', mesh: 'default', name: 'nope' } }],
    });
    expect(r404.statusCode).toBe(404);
    expect(r404.json().item.index).toBe(1);
    const noMesh = await post('/_changes', { items: [tp('nowhere', 'x')] });
    expect(noMesh.statusCode).toBe(400);
    expect(noMesh.json().details).toContain('Mesh is not found');
    expect(head()).toBe(before);
  });

  it('each item sees the ones before it: update, then delete, then create again', async () => {
    const res = await post('/_changes', {
      items: [
        tp('default', 'seq', 'one'),
        tp('default', 'seq', 'two'),
        { delete: { type: 'TrafficPermission', mesh: 'default', name: 'seq' } },
        { upsert: tp('default', 'seq', 'three'), ifNoneMatch: '*' },
        tp('default', 'seq', 'three'),
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<SetAnswer>();
    expect(body.items.map((i) => i.operation)).toEqual(['create', 'update', 'delete', 'create', 'unchanged']);
    expect(body.items[4].revision).toBe(body.items[3].revision);
    const now = await get('/meshes/default/traffic-permissions/seq');
    expect(now.json().destinations[0].match['mesh.io/service']).toBe('three');
    expect(now.headers.etag).toBe(`"${body.items[3].revision}"`);
  });

  it('a set across two meshes, with If-Match on the current revisions', async () => {
    const a = await get('/meshes/shop/traffic-permissions/a');
    const c = await get('/meshes/default/traffic-permissions/c');
    const res = await post('/_changes', {
      items: [
        { upsert: tp('shop', 'a', 'api'), ifMatch: a.headers.etag },
        { upsert: tp('default', 'c', 'api'), ifMatch: Number(String(c.headers.etag).replace(/"/g, '')) },
      ],
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<SetAnswer>();
    expect(body.items[1].revision).toBe((body.items[0].revision as number) + 1);
    const events = (await get(`/_events?changeSet=${body.changeSet}`)).json<EventList>();
    expect(events.items.map((e) => e.mesh)).toEqual(['shop', 'default']);
  });

  it('?dryRun=true decides the same set (a new mesh and what is in it) and writes nothing', async () => {
    const before = head();
    const items = [mesh('dry'), tp('dry', 'a'), tp('dry', 'b')];
    const res = await post('/_changes?dryRun=true', { items });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json<SetAnswer>();
    expect(body).toMatchObject({ changeSet: null, dryRun: true, revision: before });
    expect(body.items.map((i) => i.operation)).toEqual(['create', 'create', 'create']);
    expect(head()).toBe(before);
    expect((await get('/meshes/dry')).statusCode).toBe(404);
    const bad = await post('/_changes?dryRun=true', {
      items: [...items, { delete: { type: 'Mesh', name: 'nope' } }],
    });
    expect(bad.statusCode).toBe(404);
    expect(bad.json().item.index).toBe(3);
  });

  it('YAML with several documents is a set', async () => {
    const yaml = [
      'type: Mesh\nname: yml',
      'type: TrafficPermission\nmesh: yml\nname: a\nsources: [{match: {mesh.io/service: "*"}}]\ndestinations: [{match: {mesh.io/service: web}}]',
      'delete: {type: TrafficPermission, mesh: default, name: x1}',
    ].join('\n---\n');
    const res = await post('/_changes', yaml, { 'content-type': 'application/yaml' });
    expect(res.statusCode, res.body).toBe(404);
    expect(res.json().item.index).toBe(2);
    const ok = await post('/_changes', yaml.split('\n---\n').slice(0, 2).join('\n---\n'), {
      'content-type': 'application/yaml',
    });
    expect(ok.statusCode, ok.body).toBe(200);
    expect(ok.json<SetAnswer>().items.map((i) => i.operation)).toEqual(['create', 'create']);
    // A single PUT still takes one document only.
    const put = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/yml2',
      payload: 'type: Mesh\nname: yml2\n---\ntype: Mesh\nname: yml3\n',
      headers: { 'content-type': 'application/yaml' },
    });
    expect(put.statusCode).toBe(400);
  });

  it('bodies that are not a set are 400 with causes', async () => {
    for (const body of [
      {},
      { items: [] },
      { items: 'x' },
      { items: [42] },
      { items: [{ type: 'Nope', name: 'x' }] },
    ]) {
      const res = await post('/_changes', body);
      expect(res.statusCode, JSON.stringify(body)).toBe(400);
      expect(res.json().causes.length).toBeGreaterThan(0);
    }
    const empty = await post('/_changes', { items: [tp('default', 'e0'), {}] });
    expect(empty.json().causes[0].field).toBe('items[1]');
    expect(empty.json().item.index).toBe(1);
    const badIfMatch = await post('/_changes', { items: [{ upsert: tp('default', 'e1'), ifMatch: -1 }] });
    expect(badIfMatch.statusCode).toBe(400);
    expect(badIfMatch.json().causes[0].field).toBe('items[0].ifMatch');
    const many = await post('/_changes', {
      items: Array.from({ length: 1001 }, (_, i) => tp('default', `n${i}`)),
    });
    expect(many.statusCode).toBe(400);
  });

  it('roles hold per item: one forbidden resource refuses the whole set (403, before anything is decided)', async () => {
    const before = head();
    const res = await post(
      '/_changes',
      { items: [tp('shop', 'sam-1'), tp('default', 'sam-2')] },
      bearer(shopWriter),
      true,
    );
    expect(res.statusCode).toBe(403);
    expect(res.json().item).toEqual({ index: 1, kind: 'TrafficPermission', mesh: 'default', name: 'sam-2' });
    const secret = await post(
      '/_changes',
      { items: [{ type: 'Secret', mesh: 'default', name: 's', data: 'AA==' }] },
      bearer(writer),
      true,
    );
    expect(secret.statusCode).toBe(403);
    expect(secret.json().item.kind).toBe('Secret');
    expect(head()).toBe(before);
    const ok = await post('/_changes', { items: [tp('shop', 'sam-1')] }, bearer(shopWriter), true);
    expect(ok.statusCode, ok.body).toBe(200);
    // A caller who may write nothing is refused before its body is read.
    const reader = await issueUserToken(cp.app, { name: 'rita', groups: ['mesh-system:reader'] });
    const refused = await post('/_changes', '{', bearer(reader), true);
    expect(refused.statusCode).toBe(403);
  });

  it('mode rules hold per item: a derived kind is 405 naming the item', async () => {
    const res = await post('/_changes', {
      items: [tp('default', 'm1'), { type: 'DataplaneInsight', mesh: 'default', name: 'x' }],
    });
    expect([400, 405]).toContain(res.statusCode);
    expect(res.json().item.index).toBe(1);
  });

  it('a POST a web page could forge is refused (415), as on other POST routes', async () => {
    const res = await cp.app.inject({
      method: 'POST',
      url: '/_changes',
      payload: 'items=1',
      headers: { 'content-type': 'application/x-www-form-urlencoded' },
    });
    expect(res.statusCode).toBe(415);
  });

  it('a body over the body limit is 413 (JSON and YAML), and a loopback call from a foreign Origin is no admin', async () => {
    const big = {
      items: Array.from({ length: 900 }, (_, i) => ({ ...tp('default', `big-${i}`), pad: 'x'.repeat(1200) })),
    };
    const before = head();
    const json = await post('/_changes', big);
    expect(json.statusCode).toBe(413);
    const yaml = big.items.map((i) => JSON.stringify(i)).join('\n---\n');
    const res = await post('/_changes', yaml, { 'content-type': 'application/yaml' });
    expect(res.statusCode).toBe(413);
    // A page's script on the same machine: loopback without a counted credential is anonymous (a reader).
    const foreign = await post(
      '/_changes',
      { items: [tp('default', 'evil')] },
      { origin: 'https://evil.example' },
    );
    expect(foreign.statusCode).toBe(403);
    expect(head()).toBe(before);
  });

  it('a set racing single writes on the same resource: never a lost update', async () => {
    await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/traffic-permissions/race',
      payload: tp('default', 'race', 'v0'),
    });
    const etag = (await get('/meshes/default/traffic-permissions/race')).headers.etag as string;
    for (let round = 0; round < 10; round++) {
      const current = (await get('/meshes/default/traffic-permissions/race')).headers.etag as string;
      const [set, single] = await Promise.all([
        post('/_changes', {
          items: [
            tp('default', 'race-other'),
            { upsert: tp('default', 'race', `set-${round}`), ifMatch: current },
          ],
        }),
        cp.app.inject({
          method: 'PUT',
          url: '/meshes/default/traffic-permissions/race',
          payload: tp('default', 'race', `single-${round}`),
          headers: { 'if-match': current },
        }),
      ]);
      // Exactly one of the two wins; the other is 412 and wrote nothing.
      expect([set.statusCode, single.statusCode].sort()).toEqual([200, 412].sort());
      const winner = set.statusCode === 200 ? `set-${round}` : `single-${round}`;
      const now = await get('/meshes/default/traffic-permissions/race');
      expect(now.json().destinations[0].match['mesh.io/service']).toBe(winner);
    }
    expect(etag).toBeDefined();
  });

  it('revert of a set is one new set that puts back the state before it', async () => {
    const before = head();
    const shopA = (await get('/meshes/shop/traffic-permissions/a')).json();
    const set = (
      await post('/_changes', {
        items: [
          mesh('rev'),
          tp('rev', 'a'),
          {
            type: 'Dataplane',
            mesh: 'rev',
            name: 'web-1',
            networking: {
              address: '10.0.0.9',
              inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }],
            },
          },
          tp('shop', 'a', 'changed'),
          { delete: { type: 'TrafficPermission', mesh: 'shop', name: 'b' } },
        ],
      })
    ).json<SetAnswer>();
    expect(set.changeSet).not.toBeNull();
    const dry = await post(`/_changes/${set.changeSet}/_revert?dryRun=true`, undefined);
    expect(dry.statusCode, dry.body).toBe(200);
    expect(head()).toBe(set.revision);
    // A writer may revert it: the mesh's signing key goes with the mesh, not as an item of its own.
    const res = await post(`/_changes/${set.changeSet}/_revert`, undefined, bearer(writer), true);
    expect(res.statusCode, res.body).toBe(200);
    const revert = res.json<SetAnswer>();
    expect(revert.changeSet).not.toBe(set.changeSet);
    expect((await get('/meshes/rev')).statusCode).toBe(404);
    expect((await get('/meshes/shop/traffic-permissions/b')).statusCode).toBe(200);
    const a = (await get('/meshes/shop/traffic-permissions/a')).json();
    expect(a.destinations).toEqual(shopA.destinations);
    const events = (await get(`/_events?fromRevision=${set.revision + 1}&size=1000`)).json<EventList>();
    expect(events.items.every((e) => e.changeSet === revert.changeSet)).toBe(true);
    expect(before).toBeLessThan(head());
    // The revert of the set again finds the state it left changed: 412 naming the item, nothing written.
    const again = await post(`/_changes/${set.changeSet}/_revert`, undefined);
    expect(again.statusCode).toBe(412);
    expect(again.json().item).toBeDefined();
    expect((await post('/_changes/nope/_revert', undefined)).statusCode).toBe(404);
  });
});

describe('change sets on a real port and a LevelDB store', () => {
  const dir = tempDir('change-sets-');
  const env = { MESH_STORE_TYPE: 'level', MESH_STORE_LEVEL_PATH: dir.path };
  afterAll(() => dir.cleanup());

  it('watch streams show the id; it survives a restart, and the set can be reverted after it', async () => {
    let cp = await startListeningPlane(env);
    const base = `http://127.0.0.1:${cp.ports.api}`;
    const from = cp.log.head() + 1;
    const stream = await openSse(cp.ports.api, `/_events?fromRevision=${from}`);
    const res = await fetch(`${base}/_changes`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ items: [tp('default', 'w1'), tp('default', 'w2')] }),
    });
    expect(res.status).toBe(200);
    const { changeSet } = (await res.json()) as SetAnswer;
    await stream.until((events) => events.filter((e) => e.id !== undefined).length >= 2);
    const seen = stream
      .entries()
      .map((e) => JSON.parse(e.data as string) as { name: string; changeSet?: string });
    expect(seen.map((e) => [e.name, e.changeSet])).toEqual([
      ['w1', changeSet],
      ['w2', changeSet],
    ]);
    stream.close();
    await cp.close();
    cp = await startListeningPlane(env);
    try {
      const again = `http://127.0.0.1:${cp.ports.api}`;
      const events = (await (await fetch(`${again}/_events?changeSet=${changeSet}`)).json()) as EventList;
      expect(events.items.map((e) => e.name)).toEqual(['w1', 'w2']);
      const revert = await fetch(`${again}/_changes/${changeSet}/_revert`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
      });
      expect(revert.status).toBe(200);
      expect((await fetch(`${again}/meshes/default/traffic-permissions/w1`)).status).toBe(404);
    } finally {
      await cp.close();
    }
  });
});
