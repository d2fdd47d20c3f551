import { Ajv2020 } from 'ajv/dist/2020.js';
import addFormats from 'ajv-formats';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startPlane, testConfig } from '../helpers/control-plane.js';
import { seededInts } from '../helpers/seeded.js';

const SVC = 'mesh.io/service';
const PROTOCOL = 'mesh.io/protocol';
const T0 = Date.parse('2026-03-01T10:00:00.000Z');

const sidecar = (name: string, service: string, version: string, outbound: string[]) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: {
    address: '10.0.0.1',
    inbound: [{ port: 8080, tags: { [SVC]: service, [PROTOCOL]: 'http', version } }],
    outbound: outbound.map((s, i) => ({ port: 10001 + i, tags: { [SVC]: s } })),
  },
});
const gatewayProxy = (name: string) => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  networking: { address: '10.0.0.9', gateway: { tags: { [SVC]: 'edge' }, type: 'BUILTIN' } },
});
const sel = (tags: Record<string, string>) => [{ match: { [SVC]: '*', ...tags } }];

const SERVICES = ['web', 'api', 'db'];
const PROXIES = ['web-1', 'api-1', 'api-2', 'db-1'];
/** [kind, path, names]: the policies the sequence writes, and the collection their affected proxies are read from. */
const POLICIES: Array<[kind: string, path: string, names: string[]]> = [
  ['TrafficPermission', 'traffic-permissions', ['tp-1', 'tp-2']],
  ['Timeout', 'timeouts', ['to-1', 'to-2']],
  ['TrafficRoute', 'traffic-routes', ['tr-1']],
  ['FaultInjection', 'fault-injections', ['fi-1']],
  ['MeshTrafficPermission', 'meshtrafficpermissions', ['mtp-1']],
];

/** One write of the sequence: a policy of `kind` with choices from `r`, or undefined to delete it. */
function policyBody(kind: string, name: string, r: (n: number) => number): Record<string, unknown> {
  const service = SERVICES[r(SERVICES.length)];
  const version = r(2) === 0 ? '*' : `v${1 + r(2)}`;
  const base = { type: kind, mesh: 'default', name };
  switch (kind) {
    case 'TrafficPermission':
      return { ...base, sources: sel({}), destinations: [{ match: { [SVC]: service, version } }] };
    case 'Timeout':
      return {
        ...base,
        sources: [{ match: { [SVC]: r(2) === 0 ? '*' : SERVICES[r(3)] } }],
        destinations: [{ match: { [SVC]: r(2) === 0 ? '*' : service } }],
        conf: { connectTimeout: `${1 + r(9)}s`, http: { requestTimeout: `${1 + r(30)}s` } },
      };
    case 'TrafficRoute':
      return {
        ...base,
        sources: sel({}),
        destinations: [{ match: { [SVC]: service } }],
        conf: {
          split: [
            { weight: 1 + r(50), destination: { [SVC]: service, version: 'v1' } },
            { weight: 1 + r(50), destination: { [SVC]: service, version: 'v2' } },
          ],
        },
      };
    case 'FaultInjection':
      return {
        ...base,
        sources: sel({}),
        destinations: [{ match: { [SVC]: service, [PROTOCOL]: 'http', version } }],
        conf: { abort: { httpStatus: 503, percentage: 10 + r(80) } },
      };
    default:
      return {
        ...base,
        spec: {
          targetRef: { kind: 'MeshService', name: service },
          from: [{ targetRef: { kind: 'Mesh' }, default: { action: r(2) === 0 ? 'ALLOW' : 'DENY' } }],
        },
      };
  }
}

describe('inspect and /xds at any revision (?revision=R, ?at=T)', () => {
  let cp: ControlPlane;
  let clock = T0;
  const get = async (url: string) => {
    const res = await cp.app.inject({ method: 'GET', url });
    return {
      status: res.statusCode,
      body: res.body ? res.json() : undefined,
      revision: res.headers['x-mesh-revision'],
    };
  };
  const write = async (method: 'PUT' | 'DELETE', url: string, payload?: unknown) => {
    clock += 60_000;
    const res = await cp.app.inject({ method, url, payload: payload as Record<string, unknown> | undefined });
    expect(res.statusCode, res.body).toBeLessThan(300);
  };
  /** Every inspect URL of the sequence's world (each proxy's views, each policy's and the gateway's proxies). */
  const urls = (): string[] => {
    const out: string[] = [];
    for (const p of [...PROXIES, 'edge-1'])
      out.push(
        `/meshes/default/dataplanes/${p}/policies`,
        `/meshes/default/dataplanes/${p}/rules`,
        `/meshes/default/dataplanes/${p}/xds`,
      );
    for (const [, path, names] of POLICIES)
      for (const n of names) out.push(`/meshes/default/${path}/${n}/dataplanes`);
    out.push('/meshes/default/meshgateways/edge/dataplanes');
    return out;
  };
  /** What each URL answered live at each revision of the sequence. */
  const recorded = new Map<number, Map<string, { status: number; body: unknown }>>();

  beforeAll(async () => {
    cp = await startPlane(testConfig(), { listen: false, now: () => new Date(clock) });
    await cp.defaultsReady;
    for (const [i, name] of PROXIES.entries()) {
      const service = name.split('-')[0];
      await write(
        'PUT',
        `/meshes/default/dataplanes/${name}`,
        sidecar(
          name,
          service,
          `v${1 + (i % 2)}`,
          SERVICES.filter((s) => s !== service),
        ),
      );
    }
    await write('PUT', '/meshes/default/dataplanes/edge-1', gatewayProxy('edge-1'));
    await write('PUT', '/meshes/default/meshgateways/edge', {
      type: 'MeshGateway',
      mesh: 'default',
      name: 'edge',
      selectors: [{ match: { [SVC]: 'edge' } }],
      conf: { listeners: [{ port: 8080, protocol: 'HTTP', hostname: '*' }] },
    });
    const r = seededInts(7);
    for (let step = 0; step < 40; step++) {
      const [kind, path, names] = POLICIES[r(POLICIES.length)];
      const name = names[r(names.length)];
      if (r(5) === 0) {
        const res = await cp.app.inject({ method: 'DELETE', url: `/meshes/default/${path}/${name}` });
        if (res.statusCode === 404) continue;
        expect(res.statusCode, res.body).toBe(200);
        clock += 60_000;
      } else {
        await write('PUT', `/meshes/default/${path}/${name}`, policyBody(kind, name, r));
      }
      // Now and then a proxy moves to the other version: matches follow its tags.
      if (r(4) === 0) {
        const i = r(PROXIES.length);
        const p = PROXIES[i];
        const service = p.split('-')[0];
        await write(
          'PUT',
          `/meshes/default/dataplanes/${p}`,
          sidecar(
            p,
            service,
            `v${1 + r(2)}`,
            SERVICES.filter((s) => s !== service),
          ),
        );
      }
      const answers = new Map<string, { status: number; body: unknown }>();
      for (const url of urls()) {
        const res = await get(url);
        answers.set(url, { status: res.status, body: res.body });
      }
      recorded.set(cp.log.head(), answers);
    }
  }, 120_000);
  afterAll(async () => {
    await cp?.close();
  });

  it('every inspect answer and /xds view at R equals what was answered live at R', async () => {
    let compared = 0;
    let withPolicies = 0;
    for (const [revision, answers] of recorded) {
      for (const [url, live] of answers) {
        const then = await get(`${url}?revision=${revision}`);
        expect(then.revision, url).toBe(String(revision));
        expect(then.status, `${url} at ${revision}`).toBe(live.status);
        if (url.endsWith('/xds')) {
          // The past names what it leaves out (runtime state); the config is the same.
          const { pointInTime, ...config } = then.body as Record<string, unknown>;
          expect(pointInTime, url).toMatchObject({ revision, leftOut: expect.any(Array) });
          expect(config, `${url} at ${revision}`).toEqual(live.body);
        } else {
          expect(then.body, `${url} at ${revision}`).toEqual(live.body);
        }
        if (url.endsWith('/policies') && (live.body as { total: number }).total > 1) withPolicies++;
        compared++;
      }
    }
    // A past /xds answer is as the OpenAPI document says (its `pointInTime` included).
    const doc = (await get('/openapi.json')).body as { components: Record<string, unknown> };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats.default(ajv);
    ajv.addSchema({ $id: 'openapi', components: doc.components });
    const validate = ajv.compile({ $ref: 'openapi#/components/schemas/ConfigDump' });
    const past = (await get(`/meshes/default/dataplanes/api-1/xds?revision=${[...recorded.keys()][5]}`)).body;
    expect(validate(past), JSON.stringify(validate.errors)).toBe(true);
    // The sequence is only worth something if the answers changed along it and named policies.
    expect(compared).toBeGreaterThan(500);
    expect(withPolicies).toBeGreaterThan(50);
    const distinct = new Set(
      [...recorded.values()].map((a) => JSON.stringify(a.get('/meshes/default/dataplanes/api-1/policies'))),
    );
    expect(distinct.size).toBeGreaterThan(5);
  }, 120_000);

  it("a proxy's config timeline names exactly the revisions at which its served config changed, with the write", async () => {
    /** A past /xds without what differs at every revision (versions, the point in time). */
    const configAt = async (p: string, r: number): Promise<string | undefined> => {
      const res = await get(`/meshes/default/dataplanes/${p}/xds?revision=${r}`);
      if (res.status === 404) return undefined;
      expect(res.status).toBe(200);
      return JSON.stringify(res.body, (k, v) =>
        k === 'version_info' || k === 'last_updated' || k === 'pointInTime' || k === 'versions'
          ? undefined
          : v,
      );
    };
    const head = cp.log.head();
    let changes = 0;
    for (const p of ['api-1', 'web-1', 'edge-1']) {
      const res = await get(`/meshes/default/dataplanes/${p}/xds/_history?size=1000`);
      expect(res.status).toBe(200);
      const body = res.body as {
        total: number;
        items: Array<{
          revision: number;
          config: string;
          write: { kind: string; name: string; actor: { name: string } };
        }>;
      };
      expect(body.total).toBe(body.items.length);
      const at = new Map(body.items.map((i) => [i.revision, i]));
      let before: string | undefined;
      for (let r = 1; r <= head; r++) {
        const now = await configAt(p, r);
        const item = at.get(r);
        if (now === before) {
          expect(item, `${p}: no change at ${r}`).toBeUndefined();
          continue;
        }
        expect(item, `${p}: a change at ${r}`).toBeDefined();
        expect(item?.config).toBe(
          before === undefined ? 'created' : now === undefined ? 'removed' : 'changed',
        );
        // The write that changed it is the entry at that revision.
        const entry = (
          (await get(`/_events?fromRevision=${r}&size=1`)).body as {
            items: Array<{ kind: string; name: string }>;
          }
        ).items[0];
        expect(item?.write).toMatchObject({ kind: entry.kind, name: entry.name });
        changes++;
        before = now;
      }
    }
    expect(changes).toBeGreaterThan(15);
    // Paged and filtered by time like other lists; a proxy that never existed is 404.
    const all = (await get('/meshes/default/dataplanes/api-1/xds/_history')).body as {
      total: number;
      items: Array<{ time: string }>;
    };
    const mid = all.items[Math.floor(all.items.length / 2)].time;
    const later = (await get(`/meshes/default/dataplanes/api-1/xds/_history?from=${mid}&size=1`)).body as {
      total: number;
      items: Array<{ time: string }>;
      next: string | null;
    };
    expect(later.items[0].time).toBe(mid);
    expect(later.total).toBe(all.items.filter((i) => i.time >= mid).length);
    expect(later.next).toContain('offset=1');
    expect((await get('/meshes/default/dataplanes/nobody/xds/_history')).status).toBe(404);
    const bad = await get('/meshes/default/dataplanes/api-1/xds/_history?to=soon');
    expect(bad.status).toBe(400);
    expect((bad.body as { causes: Array<{ field: string }> }).causes[0].field).toBe('to');
  });

  it('?at=T answers at the last revision at or before T, and says which', async () => {
    const revisions = [...recorded.keys()];
    const r = revisions[10];
    const entry = (await get(`/_events?fromRevision=${r}&size=1`)).body as { items: Array<{ time: string }> };
    const time = Date.parse(entry.items[0].time);
    // 30 s after the write of R, before the next (writes are a minute apart).
    const at = new Date(time + 30_000).toISOString();
    const url = '/meshes/default/dataplanes/api-1/policies';
    const then = await get(`${url}?at=${at}`);
    expect(then.status).toBe(200);
    expect(then.revision).toBe(String(r));
    expect(then.body).toEqual(recorded.get(r)?.get(url)?.body);
    // An offset is a time like any other.
    const offset = new Date(time + 30_000 + 2 * 3_600_000).toISOString().replace('Z', '+02:00');
    expect((await get(`${url}?at=${offset.replace('+', '%2B')}`)).revision).toBe(String(r));
    // Resources and lists take it too.
    const list = await get(`/meshes/default/timeouts?at=${at}`);
    expect(list.status).toBe(200);
    expect(list.revision).toBe(String(r));
  });

  it('refuses a bad point in time with a cause on the parameter', async () => {
    const url = '/meshes/default/dataplanes/api-1/policies';
    const cause = async (q: string) => {
      const res = await get(`${url}?${q}`);
      expect(res.status, q).toBe(400);
      return (res.body as { causes: Array<{ field: string; message: string }> }).causes[0];
    };
    expect((await cause('at=yesterday')).field).toBe('at');
    expect((await cause('at=2026-03-01')).message).toMatch(/RFC 3339/);
    expect((await cause('at=2020-01-01T00:00:00Z')).message).toMatch(/before the first revision/);
    expect((await cause('at=2026-03-01T10:30:00Z&revision=3')).message).toMatch(
      /cannot be given with revision/,
    );
    expect((await cause(`revision=${cp.log.head() + 1}`)).field).toBe('revision');
    // Counters have no past.
    const stats = await get('/meshes/default/dataplanes/api-1/stats?revision=3');
    expect(stats.status).toBe(400);
    expect((stats.body as { details: string }).details).toMatch(/runtime state/);
  });
});
