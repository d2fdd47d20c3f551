import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { REMOTE, b64, bearer, issueUserToken } from '../helpers/auth.js';
import { startTestPlane } from '../helpers/control-plane.js';

const all = [{ match: { 'mesh.io/service': '*' } }];
const tp = (name: string, service: string, mesh = 'default') => ({
  type: 'TrafficPermission',
  mesh,
  name,
  sources: all,
  destinations: [{ match: { 'mesh.io/service': service } }],
});
const dp = (name: string, service: string) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { 'mesh.io/service': service } }] },
});

interface Item {
  revision: number;
  time: string;
  operation: string;
  actor: { name: string; groups: string[]; address: string };
  resource: Record<string, unknown>;
  kind?: string;
  mesh?: string;
  name?: string;
}
interface List {
  total: number;
  items: Item[];
  next: string | null;
}

describe('history, point-in-time reads, audit log and revert (decisions §8)', () => {
  let cp: ControlPlane;
  let reader: string;
  let writer: string;
  /** Revisions of the writes below, by step. */
  const rev: Record<string, number> = {};

  const inject = (
    method: 'GET' | 'PUT' | 'DELETE' | 'POST',
    url: string,
    opts: { body?: unknown; headers?: Record<string, string>; remote?: boolean } = {},
  ) =>
    cp.app.inject({
      method,
      url,
      payload: opts.body as Record<string, unknown> | undefined,
      // A POST says its content type even with no body (a browser form cannot).
      headers: method === 'POST' ? { 'content-type': 'application/json', ...opts.headers } : opts.headers,
      ...(opts.remote ? { remoteAddress: REMOTE } : {}),
    });
  const etag = (res: { headers: Record<string, unknown> }): number =>
    Number(String(res.headers.etag).replace(/"/g, ''));
  const head = (): number => cp.log.head();

  beforeAll(async () => {
    cp = await startTestPlane();
    reader = await issueUserToken(cp.app, { name: 'rita', groups: ['mesh-system:reader'] });
    writer = await issueUserToken(cp.app, { name: 'wes', groups: ['mesh-system:writer'] });
    rev.base = head();
    rev.create = etag(
      await inject('PUT', '/meshes/default/traffic-permissions/tp-1', { body: tp('tp-1', 'a') }),
    );
    rev.update1 = etag(
      await inject('PUT', '/meshes/default/traffic-permissions/tp-1', {
        body: tp('tp-1', 'b'),
        headers: bearer(writer),
        remote: true,
      }),
    );
    rev.update2 = etag(
      await inject('PUT', '/meshes/default/traffic-permissions/tp-1', { body: tp('tp-1', 'c') }),
    );
    rev.dp = etag(await inject('PUT', '/meshes/default/dataplanes/web-1', { body: dp('web-1', 'web') }));
    rev.secret = etag(
      await inject('PUT', '/meshes/default/secrets/s-1', {
        body: { type: 'Secret', mesh: 'default', name: 's-1', data: b64('hush') },
      }),
    );
    rev.zone = etag(await inject('PUT', '/zones/z-1', { body: { type: 'Zone', name: 'z-1' } }));
    const del = await inject('DELETE', '/meshes/default/traffic-permissions/tp-1');
    rev.delete = etag(del);
    rev.dpDelete = etag(await inject('DELETE', '/meshes/default/dataplanes/web-1'));
  });
  afterAll(() => cp.close());

  describe('GET <resource URL>/_history', () => {
    it('lists every change oldest first, with actor and the state after (before, for a delete), also once deleted', async () => {
      const res = await inject('GET', '/meshes/default/traffic-permissions/tp-1/_history');
      expect(res.statusCode).toBe(200);
      expect(res.headers['x-mesh-revision']).toBe(String(head()));
      const body = res.json() as List;
      expect(body.total).toBe(4);
      expect(body.next).toBeNull();
      expect(body.items.map((i) => [i.revision, i.operation])).toEqual([
        [rev.create, 'create'],
        [rev.update1, 'update'],
        [rev.update2, 'update'],
        [rev.delete, 'delete'],
      ]);
      expect(Object.keys(body.items[0])).toEqual(['revision', 'time', 'operation', 'actor', 'resource']);
      expect(body.items[0].actor).toEqual({
        name: 'admin',
        groups: ['mesh-system:admin'],
        address: '127.0.0.1',
      });
      expect(body.items[1].actor).toEqual({ name: 'wes', groups: ['mesh-system:writer'], address: REMOTE });
      const dest = (i: Item) =>
        (i.resource.destinations as Array<{ match: Record<string, string> }>)[0].match;
      expect(body.items.map(dest).map((m) => m['mesh.io/service'])).toEqual(['a', 'b', 'c', 'c']);
      expect(body.items[0].time).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
      // The alias path serves the same history.
      const alias = await inject('GET', '/meshes/default/trafficpermissions/tp-1/_history');
      expect((alias.json() as List).total).toBe(4);
    });

    it('pages like other lists: size, offset, total and an absolute next', async () => {
      const first = (
        await inject('GET', '/meshes/default/traffic-permissions/tp-1/_history?size=3')
      ).json() as List;
      expect(first.total).toBe(4);
      expect(first.items.map((i) => i.revision)).toEqual([rev.create, rev.update1, rev.update2]);
      expect(first.next).toBe(
        'http://localhost:80/meshes/default/traffic-permissions/tp-1/_history?offset=3&size=3',
      );
      const second = (
        await inject('GET', '/meshes/default/traffic-permissions/tp-1/_history?size=3&offset=3')
      ).json() as List;
      expect(second.items.map((i) => i.revision)).toEqual([rev.delete]);
      expect(second.next).toBeNull();
      const bad = await inject('GET', '/meshes/default/traffic-permissions/tp-1/_history?size=0&offset=-1');
      expect(bad.statusCode).toBe(400);
      expect((bad.json() as { causes: Array<{ field: string }> }).causes.map((c) => c.field)).toEqual([
        'size',
        'offset',
      ]);
    });

    it('works for global kinds and meshes; 404 for a resource that never existed', async () => {
      const zone = (await inject('GET', '/zones/z-1/_history')).json() as List;
      expect(zone.items.map((i) => [i.revision, i.operation, i.resource.name])).toEqual([
        [rev.zone, 'create', 'z-1'],
      ]);
      const mesh = (await inject('GET', '/meshes/default/_history')).json() as List;
      expect(mesh.items[0]).toMatchObject({ revision: 1, operation: 'create', actor: { name: 'mesh-cp' } });
      const missing = await inject('GET', '/meshes/default/traffic-permissions/never/_history');
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ title: 'Not found' });
    });

    it('needs the right to read the kind: readers read policy history, secrets stay admin only', async () => {
      const policy = await inject('GET', '/meshes/default/traffic-permissions/tp-1/_history', {
        headers: bearer(reader),
        remote: true,
      });
      expect(policy.statusCode).toBe(200);
      const secret = await inject('GET', '/meshes/default/secrets/s-1/_history', {
        headers: bearer(reader),
        remote: true,
      });
      expect(secret.statusCode).toBe(403);
      const writerSecret = await inject('GET', '/meshes/default/secrets/s-1/_history', {
        headers: bearer(writer),
        remote: true,
      });
      expect(writerSecret.statusCode).toBe(403);
      // Admins see each version's digest; the data itself when they ask for it.
      const admin = (await inject('GET', '/meshes/default/secrets/s-1/_history')).json() as List;
      expect(admin.items[0].resource.data).toEqual({ sha256: expect.stringMatching(/^[0-9a-f]{64}$/) });
      const withData = (
        await inject('GET', '/meshes/default/secrets/s-1/_history?includeSecretData=true')
      ).json() as List;
      expect(withData.items[0].resource.data).toBe(b64('hush'));
    });
  });

  describe('?revision=R on GETs', () => {
    it('one resource: as of R from its history, ETag its last change at or below R, x-mesh-revision R', async () => {
      const at = await inject('GET', `/meshes/default/traffic-permissions/tp-1?revision=${rev.update2 + 1}`);
      expect(at.statusCode).toBe(200);
      expect(at.headers['x-mesh-revision']).toBe(String(rev.update2 + 1));
      expect(at.headers.etag).toBe(`"${rev.update2}"`);
      expect((at.json() as { destinations: unknown }).destinations).toEqual([
        { match: { 'mesh.io/service': 'c' } },
      ]);
      const first = (
        await inject('GET', `/meshes/default/traffic-permissions/tp-1?revision=${rev.create}`)
      ).json() as {
        destinations: unknown;
      };
      expect(first.destinations).toEqual([{ match: { 'mesh.io/service': 'a' } }]);
      // Before it was created, and after it was deleted: not found at R.
      expect(
        (await inject('GET', `/meshes/default/traffic-permissions/tp-1?revision=${rev.base}`)).statusCode,
      ).toBe(404);
      const gone = await inject('GET', `/meshes/default/traffic-permissions/tp-1?revision=${rev.delete}`);
      expect(gone.statusCode).toBe(404);
      expect((gone.json() as { details: string }).details).toContain(`at revision ${rev.delete}`);
    });

    it('lists, overviews and insights as of R (replayed), without runtime status', async () => {
      const list = await inject('GET', `/meshes/default/traffic-permissions?revision=${rev.update1}`);
      expect(list.headers['x-mesh-revision']).toBe(String(rev.update1));
      const body = list.json() as List & { items: Array<{ name: string }> };
      expect(body.items.map((i) => i.name)).toEqual(['allow-all-default', 'tp-1']);
      const now = (await inject('GET', '/meshes/default/traffic-permissions')).json() as List;
      expect(now.total).toBe(1);

      const overviews = (
        await inject('GET', `/meshes/default/dataplanes+insights?revision=${rev.dp}`)
      ).json() as {
        items: Array<{ name: string; dataplaneInsight: unknown }>;
      };
      expect(overviews.items.map((o) => [o.name, o.dataplaneInsight])).toEqual([
        ['web-1', { subscriptions: [] }],
      ]);
      const one = await inject('GET', `/meshes/default/dataplanes+insights/web-1?revision=${rev.dp}`);
      expect(one.statusCode).toBe(200);
      expect((await inject('GET', '/meshes/default/dataplanes+insights/web-1')).statusCode).toBe(404);

      const insight = (await inject('GET', `/mesh-insights/default?revision=${rev.dp}`)).json() as {
        policies: Record<string, { total: number }>;
        dataplanes: { total: number; offline: number };
      };
      expect(insight.policies.TrafficPermission.total).toBe(2);
      expect(insight.dataplanes).toMatchObject({ total: 1, offline: 1 });
      const services = (
        await inject('GET', `/meshes/default/service-insights?revision=${rev.dp}`)
      ).json() as List;
      expect(services.items.map((s) => s.name)).toEqual(['web']);

      const global = await inject('GET', `/global-insights?revision=${rev.zone - 1}`);
      expect(global.headers['x-mesh-revision']).toBe(String(rev.zone - 1));
      expect((global.json() as { resources: { Zone: { total: number } } }).resources.Zone.total).toBe(0);
      expect(
        ((await inject('GET', '/global-insights')).json() as { resources: { Zone: { total: number } } })
          .resources.Zone.total,
      ).toBe(1);
    });

    it('pages a past list with next keeping the revision', async () => {
      const page = (
        await inject('GET', `/meshes/default/traffic-permissions?revision=${rev.update1}&size=1`)
      ).json() as List;
      expect(page.total).toBe(2);
      expect(page.next).toBe(
        `http://localhost:80/meshes/default/traffic-permissions?offset=1&revision=${rev.update1}&size=1`,
      );
    });

    it('a revision above the head or not a positive integer is 400 with a cause on revision', async () => {
      for (const bad of [String(head() + 1), '0', '-3', 'abc', '1.5', '']) {
        const res = await inject('GET', `/meshes/default/traffic-permissions?revision=${bad}`);
        expect(res.statusCode, bad).toBe(400);
        expect((res.json() as { causes: Array<{ field: string }> }).causes).toEqual([
          expect.objectContaining({ field: 'revision' }),
        ]);
        expect(
          (await inject('GET', `/meshes/default/traffic-permissions/tp-1?revision=${bad}`)).statusCode,
        ).toBe(400);
      }
      expect((await inject('GET', `/meshes/default/traffic-permissions?revision=${head()}`)).statusCode).toBe(
        200,
      );
    });
  });

  describe('GET /_events', () => {
    it('is the audit log from fromRevision: history items plus kind, mesh and name, paged', async () => {
      const res = await inject('GET', `/_events?fromRevision=${rev.create}&size=2`);
      expect(res.statusCode).toBe(200);
      const body = res.json() as List;
      expect(body.total).toBe(head() - rev.create + 1);
      expect(body.items.map((i) => i.revision)).toEqual([rev.create, rev.update1]);
      expect(Object.keys(body.items[0])).toEqual([
        'revision',
        'time',
        'kind',
        'mesh',
        'name',
        'operation',
        'actor',
        'resource',
      ]);
      expect(body.items[0]).toMatchObject({
        kind: 'TrafficPermission',
        mesh: 'default',
        name: 'tp-1',
        operation: 'create',
      });
      expect(body.next).toBe(`http://localhost:80/_events?fromRevision=${rev.create}&offset=2&size=2`);
      const zone = ((await inject('GET', `/_events?fromRevision=${rev.zone}&size=1`)).json() as List)
        .items[0];
      expect(zone).not.toHaveProperty('mesh');
      expect((await inject('GET', '/_events')).json()).toMatchObject({ total: head() });
    });

    it('filters by kind, mesh, exact name and actor; offset and size page within the filtered sequence', async () => {
      const q = async (query: string) => (await inject('GET', `/_events?${query}`)).json() as List;
      expect((await q('kind=TrafficPermission&name=tp-1')).items.map((i) => i.revision)).toEqual([
        rev.create,
        rev.update1,
        rev.update2,
        rev.delete,
      ]);
      expect(
        (await q('kind=TrafficPermission&mesh=default&name=tp-1&fromRevision=' + rev.update2)).total,
      ).toBe(2);
      expect((await q('actor=wes')).items.map((i) => i.revision)).toEqual([rev.update1]);
      expect((await q('name=tp')).total).toBe(0);
      const inMesh = await q(`mesh=default&fromRevision=1&size=1000`);
      expect(inMesh.items[0]).toMatchObject({ kind: 'Mesh', name: 'default' });
      expect(inMesh.items.every((i) => i.mesh === 'default' || i.kind === 'Mesh')).toBe(true);
      expect(inMesh.items.some((i) => i.kind === 'Zone')).toBe(false);
      const dps = await q('kind=Dataplane&size=1');
      expect(dps.total).toBe(2);
      expect(dps.items.map((i) => i.operation)).toEqual(['create']);
      expect(dps.next).toBe('http://localhost:80/_events?kind=Dataplane&offset=1&size=1');
      const page2 = await q('kind=Dataplane&size=1&offset=1');
      expect(page2.items.map((i) => [i.revision, i.operation])).toEqual([[rev.dpDelete, 'delete']]);
      expect(page2.next).toBeNull();
    });

    it('answers 400 with a cause per bad parameter', async () => {
      const res = await inject('GET', `/_events?fromRevision=${head() + 2}&kind=Nope&size=5000&offset=x`);
      expect(res.statusCode).toBe(400);
      expect((res.json() as { causes: Array<{ field: string }> }).causes.map((c) => c.field)).toEqual([
        'fromRevision',
        'kind',
        'size',
        'offset',
      ]);
      expect((await inject('GET', '/_events?fromRevision=0')).statusCode).toBe(400);
      expect((await inject('GET', '/_events?kind=MeshInsight')).statusCode).toBe(400);
      // The next revision to come is a valid start: nothing yet.
      expect((await inject('GET', `/_events?fromRevision=${head() + 1}`)).json()).toMatchObject({
        total: 0,
        items: [],
      });
    });

    it('shows callers only entries they may read: no secret entries without the right to read secrets', async () => {
      const admin = (await inject('GET', '/_events?size=1000')).json() as List;
      const secretKinds = (l: List) =>
        l.items.filter((i) => i.kind === 'Secret' || i.kind === 'GlobalSecret');
      expect(secretKinds(admin).length).toBeGreaterThan(0);
      for (const token of [reader, writer]) {
        const res = await inject('GET', '/_events?size=1000', { headers: bearer(token), remote: true });
        expect(res.statusCode).toBe(200);
        const body = res.json() as List;
        expect(secretKinds(body)).toEqual([]);
        expect(body.total).toBe(admin.total - secretKinds(admin).length);
        expect(res.body).not.toContain(b64('hush'));
        const paged = (
          await inject('GET', '/_events?size=3&offset=3', { headers: bearer(token), remote: true })
        ).json() as List;
        expect(paged.items.map((i) => i.revision)).toEqual(body.items.slice(3, 6).map((i) => i.revision));
      }
      const askSecrets = await inject('GET', '/_events?kind=Secret', {
        headers: bearer(reader),
        remote: true,
      });
      expect(askSecrets.statusCode).toBe(403);
      const anonymous = await inject('GET', '/_events', { remote: true });
      expect(anonymous.statusCode).toBe(200);
      expect(secretKinds(anonymous.json() as List)).toEqual([]);
    });
  });

  describe('POST <resource URL>/_revert?toRevision=R', () => {
    it('restores the state at R in one new entry, answered like a PUT', async () => {
      const put = await inject('PUT', '/meshes/default/traffic-permissions/rv', { body: tp('rv', 'one') });
      const r1 = etag(put);
      const r2 = etag(
        await inject('PUT', '/meshes/default/traffic-permissions/rv', { body: tp('rv', 'two') }),
      );
      const before = head();
      const res = await inject('POST', `/meshes/default/traffic-permissions/rv/_revert?toRevision=${r1}`);
      expect(res.statusCode).toBe(200);
      expect(etag(res)).toBe(before + 1);
      expect(res.headers['x-mesh-revision']).toBe(String(before + 1));
      const body = res.json() as { destinations: unknown; creationTime: string };
      expect(body.destinations).toEqual([{ match: { 'mesh.io/service': 'one' } }]);
      expect(body.creationTime).toBe((put.json() as { creationTime: string }).creationTime);
      const hist = (await inject('GET', '/meshes/default/traffic-permissions/rv/_history')).json() as List;
      expect(hist.items.map((i) => [i.revision, i.operation])).toEqual([
        [r1, 'create'],
        [r2, 'update'],
        [before + 1, 'update'],
      ]);
      // Reverting to the state it already has writes nothing.
      const again = await inject('POST', `/meshes/default/traffic-permissions/rv/_revert?toRevision=${r1}`);
      expect(again.statusCode).toBe(200);
      expect(etag(again)).toBe(before + 1);
      expect(head()).toBe(before + 1);
    });

    it('deletes the resource when it did not exist at R, and recreates a deleted one (201)', async () => {
      const created = etag(
        await inject('PUT', '/meshes/default/traffic-permissions/rv2', { body: tp('rv2', 'x') }),
      );
      const del = await inject(
        'POST',
        `/meshes/default/traffic-permissions/rv2/_revert?toRevision=${created - 1}`,
      );
      expect(del.statusCode).toBe(200);
      expect(del.body).toBe('{}');
      expect(etag(del)).toBe(head());
      expect((await inject('GET', '/meshes/default/traffic-permissions/rv2')).statusCode).toBe(404);
      const back = await inject(
        'POST',
        `/meshes/default/traffic-permissions/rv2/_revert?toRevision=${created}`,
      );
      expect(back.statusCode).toBe(201);
      expect((await inject('GET', '/meshes/default/traffic-permissions/rv2')).statusCode).toBe(200);
      // Absent at R and absent now: like a DELETE of a missing resource.
      expect(
        (await inject('POST', `/meshes/default/traffic-permissions/never/_revert?toRevision=1`)).statusCode,
      ).toBe(404);
    });

    it('honours If-Match and dryRun', async () => {
      const r1 = etag(
        await inject('PUT', '/meshes/default/traffic-permissions/rv3', { body: tp('rv3', 'p') }),
      );
      const r2 = etag(
        await inject('PUT', '/meshes/default/traffic-permissions/rv3', { body: tp('rv3', 'q') }),
      );
      const before = head();
      const stale = await inject('POST', `/meshes/default/traffic-permissions/rv3/_revert?toRevision=${r1}`, {
        headers: { 'if-match': `"${r1}"` },
      });
      expect(stale.statusCode).toBe(412);
      const dry = await inject(
        'POST',
        `/meshes/default/traffic-permissions/rv3/_revert?toRevision=${r1}&dryRun=true`,
        {
          headers: { 'if-match': `"${r2}"` },
        },
      );
      expect(dry.statusCode).toBe(200);
      expect(dry.headers.etag).toBeUndefined();
      expect((dry.json() as { destinations: unknown }).destinations).toEqual([
        { match: { 'mesh.io/service': 'p' } },
      ]);
      const dryDelete = await inject(
        'POST',
        `/meshes/default/traffic-permissions/rv3/_revert?toRevision=${r1 - 1}&dryRun=true`,
      );
      expect(dryDelete.statusCode).toBe(200);
      expect(head()).toBe(before);
      const ok = await inject('POST', `/meshes/default/traffic-permissions/rv3/_revert?toRevision=${r1}`, {
        headers: { 'if-match': `"${r2}"` },
      });
      expect(ok.statusCode).toBe(200);
      expect(head()).toBe(before + 1);
    });

    it('needs toRevision, at most the head; records the caller; writers may revert policies, not secrets', async () => {
      const missing = await inject('POST', '/meshes/default/traffic-permissions/rv/_revert');
      expect(missing.statusCode).toBe(400);
      expect((missing.json() as { causes: unknown[] }).causes).toEqual([
        { field: 'toRevision', message: 'cannot be empty' },
      ]);
      const above = await inject(
        'POST',
        `/meshes/default/traffic-permissions/rv/_revert?toRevision=${head() + 1}`,
      );
      expect(above.statusCode).toBe(400);
      const byReader = await inject('POST', '/meshes/default/traffic-permissions/rv/_revert?toRevision=1', {
        headers: bearer(reader),
        remote: true,
      });
      expect(byReader.statusCode).toBe(403);
      const r = etag(
        await inject('PUT', '/meshes/default/traffic-permissions/rv4', { body: tp('rv4', 'w') }),
      );
      await inject('PUT', '/meshes/default/traffic-permissions/rv4', { body: tp('rv4', 'w2') });
      const byWriter = await inject(
        'POST',
        `/meshes/default/traffic-permissions/rv4/_revert?toRevision=${r}`,
        {
          headers: bearer(writer),
          remote: true,
        },
      );
      expect(byWriter.statusCode).toBe(200);
      const last = (
        (await inject('GET', '/meshes/default/traffic-permissions/rv4/_history')).json() as List
      ).items.at(-1);
      expect(last?.actor).toEqual({ name: 'wes', groups: ['mesh-system:writer'], address: REMOTE });
      const secret = await inject('POST', `/meshes/default/secrets/s-1/_revert?toRevision=${rev.secret}`, {
        headers: bearer(writer),
        remote: true,
      });
      expect(secret.statusCode).toBe(403);
    });

    it('applies the mesh rules of a PUT: a policy cannot come back into a mesh that is gone', async () => {
      await inject('PUT', '/meshes/m-gone', { body: { type: 'Mesh', name: 'm-gone' } });
      const r = etag(
        await inject('PUT', '/meshes/m-gone/traffic-permissions/p', { body: tp('p', 'x', 'm-gone') }),
      );
      await inject('DELETE', '/meshes/m-gone');
      const res = await inject('POST', `/meshes/m-gone/traffic-permissions/p/_revert?toRevision=${r}`);
      expect(res.statusCode).toBe(400);
      expect((res.json() as { causes: unknown[] }).causes).toEqual([
        { field: 'mesh', message: 'Mesh is not found' },
      ]);
    });
  });
});
