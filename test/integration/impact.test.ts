import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane } from '../helpers/control-plane.js';
import { seededInts } from '../helpers/seeded.js';

const SVC = 'mesh.io/service';
const PROTOCOL = 'mesh.io/protocol';
const SERVICES = ['web', 'api', 'db'];
const PROXIES = ['web-1', 'api-1', 'api-2', 'db-1'];

const sidecar = (name: string, version: string, extra: Record<string, string> = {}) => {
  const service = name.split('-')[0];
  return {
    type: 'Dataplane',
    mesh: 'default',
    name,
    networking: {
      address: `10.0.0.${1 + PROXIES.indexOf(name)}`,
      inbound: [{ port: 8080, tags: { [SVC]: service, [PROTOCOL]: 'http', version, ...extra } }],
      outbound: SERVICES.filter((s) => s !== service).map((s, i) => ({
        port: 10001 + i,
        tags: { [SVC]: s },
      })),
    },
  };
};
const gatewayProxy = {
  type: 'Dataplane',
  mesh: 'default',
  name: 'edge-1',
  networking: { address: '10.0.0.9', gateway: { tags: { [SVC]: 'edge' }, type: 'BUILTIN' } },
};
const timeout = (name: string, source: string, destination: string, seconds: number) => ({
  type: 'Timeout',
  mesh: 'default',
  name,
  sources: [{ match: { [SVC]: source } }],
  destinations: [{ match: { [SVC]: destination } }],
  conf: { connectTimeout: `${seconds}s`, http: { requestTimeout: `${seconds * 2}s` } },
});

/** [kind, collection, names]: the policies the random sequence writes. */
const POLICIES: Array<[kind: string, path: string, names: string[]]> = [
  ['TrafficPermission', 'traffic-permissions', ['tp-1', 'tp-2']],
  ['Timeout', 'timeouts', ['to-1', 'to-2']],
  ['TrafficRoute', 'traffic-routes', ['tr-1']],
  ['FaultInjection', 'fault-injections', ['fi-1']],
  ['MeshGatewayRoute', 'meshgatewayroutes', ['gr-1']],
  ['Retry', 'retries', ['re-1']],
  ['CircuitBreaker', 'circuit-breakers', ['cb-1']],
  ['MeshTrafficPermission', 'meshtrafficpermissions', ['mtp-1']],
];

function policyBody(kind: string, name: string, r: (n: number) => number): Record<string, unknown> {
  const service = SERVICES[r(SERVICES.length)];
  const version = r(2) === 0 ? '*' : `v${1 + r(2)}`;
  const base = { type: kind, mesh: 'default', name };
  const any = [{ match: { [SVC]: '*' } }];
  switch (kind) {
    case 'TrafficPermission':
      return { ...base, sources: any, destinations: [{ match: { [SVC]: service, version } }] };
    case 'Timeout':
      return timeout(name, r(2) === 0 ? '*' : SERVICES[r(3)], r(2) === 0 ? '*' : service, 1 + r(9));
    case 'TrafficRoute':
      return {
        ...base,
        sources: any,
        destinations: [{ match: { [SVC]: service } }],
        conf: {
          split: [
            { weight: 1 + r(50), destination: { [SVC]: service, version: 'v1' } },
            { weight: 1 + r(50), destination: { [SVC]: service, version: 'v2' } },
          ],
        },
      };
    case 'Retry':
      return {
        ...base,
        sources: [{ match: { [SVC]: r(2) === 0 ? '*' : SERVICES[r(3)] } }],
        destinations: [{ match: { [SVC]: service } }],
        conf: { http: { numRetries: 1 + r(5), perTryTimeout: '1s', retriableStatusCodes: [503] } },
      };
    case 'CircuitBreaker':
      return {
        ...base,
        sources: any,
        destinations: [{ match: { [SVC]: service } }],
        conf: {
          interval: '5s',
          baseEjectionTime: `${1 + r(30)}s`,
          detectors: { totalErrors: { consecutive: 20 } },
        },
      };
    case 'MeshTrafficPermission':
      return {
        ...base,
        spec: {
          targetRef: { kind: 'MeshService', name: service },
          from: [{ targetRef: { kind: 'Mesh' }, default: { action: r(2) === 0 ? 'ALLOW' : 'DENY' } }],
        },
      };
    case 'FaultInjection':
      return {
        ...base,
        sources: any,
        destinations: [{ match: { [SVC]: service, [PROTOCOL]: 'http', version } }],
        conf: { abort: { httpStatus: 503, percentage: 10 + r(80) } },
      };
    default:
      return {
        ...base,
        selectors: [{ match: { [SVC]: 'edge' } }],
        conf: {
          http: {
            rules: [
              {
                matches: [{ path: { match: 'PREFIX', value: `/${service}` } }],
                backends: [{ destination: { [SVC]: service } }],
              },
            ],
          },
        },
      };
  }
}

/** Drops the fields that carry a revision or version: what is compared is the config. */
function withoutVersions(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutVersions);
  if (typeof value !== 'object' || value === null) return value;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === 'version_info' || k === 'versions' || k === 'revision' || k === 'last_updated') continue;
    out[k] = withoutVersions(v);
  }
  return out;
}

interface ImpactItem {
  mesh: string;
  name: string;
  zone: string | null;
  kind: string;
  proxy?: string;
  attachments: unknown[];
  resources: Array<{ type: string; name: string; change: string; diff?: string }>;
}
/** A write's answer as these tests read it. */
interface Answer {
  impact: { total: number; items: ImpactItem[]; next: string | null };
  revision: number;
  causes?: unknown[];
  [field: string]: unknown;
}

describe('impact of a write (?impact=true|diff)', () => {
  let cp: ControlPlane;
  const inject = async (method: string, url: string, payload?: unknown) => {
    const res = await cp.app.inject({
      method: method as 'GET',
      url,
      ...(payload === undefined
        ? {}
        : typeof payload === 'string'
          ? { payload, headers: { 'content-type': 'application/yaml' } }
          : { payload: payload as Record<string, unknown> }),
    });
    return { status: res.statusCode, body: res.body ? (res.json() as Answer) : ({} as Answer) };
  };
  /** Each proxy's inspect answer and /xds config, to see what a write did. */
  const observe = async (names: readonly string[]) => {
    const out = new Map<string, { policies: unknown; xds: unknown }>();
    for (const p of names) {
      const policies = await inject('GET', `/meshes/default/dataplanes/${p}/policies`);
      const xds = await inject('GET', `/meshes/default/dataplanes/${p}/xds`);
      out.set(p, {
        policies: policies.status === 200 ? policies.body : undefined,
        xds: xds.status === 200 ? withoutVersions(xds.body) : undefined,
      });
    }
    return out;
  };

  beforeAll(async () => {
    cp = await startTestPlane();
    for (const [i, name] of PROXIES.entries()) {
      const res = await inject('PUT', `/meshes/default/dataplanes/${name}`, sidecar(name, `v${1 + (i % 2)}`));
      expect(res.status, JSON.stringify(res.body)).toBe(201);
    }
    await inject('PUT', '/meshes/default/dataplanes/edge-1', gatewayProxy);
    await inject('PUT', '/meshes/default/meshgateways/edge', {
      type: 'MeshGateway',
      mesh: 'default',
      name: 'edge',
      selectors: [{ match: { [SVC]: 'edge' } }],
      conf: { listeners: [{ port: 8080, protocol: 'HTTP', hostname: '*' }] },
    });
  });
  afterAll(async () => {
    await cp?.close();
  });

  it('a dry run lists each proxy whose policies and config would change, writing nothing', async () => {
    const head = cp.log.head();
    const res = await inject(
      'PUT',
      '/meshes/default/timeouts/to-backend?dryRun=true&impact=true',
      timeout('to-backend', 'web', 'api', 3),
    );
    expect(res.status, JSON.stringify(res.body)).toBe(201);
    expect(cp.log.head()).toBe(head);
    expect(res.body).toMatchObject({ type: 'Timeout', name: 'to-backend' });
    const { impact } = res.body;
    expect(impact.total).toBe(1);
    expect(impact.next).toBeNull();
    const [web] = impact.items;
    expect(web).toMatchObject({ mesh: 'default', name: 'web-1', zone: null, kind: 'sidecar' });
    expect(web.attachments).toContainEqual({
      type: 'outbound',
      name: '127.0.0.1:10001',
      service: 'api',
      policyKind: 'Timeout',
      added: ['to-backend'],
      // The default mesh's catch-all Timeout gives way to the more specific one.
      removed: ['timeout-all-default'],
      replaced: [],
    });
    // A proxyless client takes a route's timeout in its Listener for the service.
    expect(web.resources).toEqual([{ type: 'Listener', name: 'api', change: 'changed' }]);
    expect(web.resources.every((r: { diff?: string }) => r.diff === undefined)).toBe(true);

    // With the diff: each changed resource's unified diff names the new timeout.
    const diffed = await inject(
      'PUT',
      '/meshes/default/timeouts/to-backend?dryRun=true&impact=diff',
      timeout('to-backend', 'web', 'api', 3),
    );
    const [listener] = diffed.body.impact.items[0].resources;
    expect(listener.diff).toMatch(/^-\s+"seconds": 15,$/m);
    expect(listener.diff).toMatch(/^\+\s+"seconds": 6,$/m);
  });

  it('pages the impact with exact totals and a next link', async () => {
    const everyone = timeout('to-all', '*', '*', 4);
    const first = await inject(
      'PUT',
      '/meshes/default/timeouts/to-all?dryRun=true&impact=true&size=2',
      everyone,
    );
    expect(first.body.impact.total).toBe(PROXIES.length);
    expect(first.body.impact.items.map((i: { name: string }) => i.name)).toEqual(['api-1', 'api-2']);
    expect(first.body.impact.next).toContain('offset=2');
    const second = await inject(
      'PUT',
      '/meshes/default/timeouts/to-all?dryRun=true&impact=true&size=2&offset=2',
      everyone,
    );
    expect(second.body.impact.items.map((i: { name: string }) => i.name)).toEqual(['db-1', 'web-1']);
    expect(second.body.impact.next).toBeNull();
  });

  it('refuses a bad impact parameter, naming it', async () => {
    const res = await inject('PUT', '/meshes/default/timeouts/x?impact=yes', timeout('x', 'web', 'api', 1));
    expect(res.status).toBe(400);
    expect(res.body.causes).toContainEqual({ field: 'impact', message: 'must be true, diff or false' });
  });

  it('a write that changes nothing has an empty impact; one that reaches no proxy too', async () => {
    const res = await inject(
      'PUT',
      '/meshes/default/timeouts/to-nobody?dryRun=true&impact=true',
      timeout('to-nobody', 'nothing', 'nowhere', 1),
    );
    expect(res.body.impact).toEqual({ total: 0, items: [], next: null });
    const secret = await inject('PUT', '/meshes/default/secrets/s1?dryRun=true&impact=true', {
      type: 'Secret',
      mesh: 'default',
      name: 's1',
      data: 'c2VjcmV0',
    });
    expect(secret.body.impact).toEqual({ total: 0, items: [], next: null });
  });

  it('a new proxy, and a deleted one, are listed as created and deleted with their endpoints at their callers', async () => {
    const res = await inject('PUT', '/meshes/default/dataplanes/db-2?dryRun=true&impact=true', {
      ...sidecar('db-1', 'v2'),
      name: 'db-2',
      networking: { ...sidecar('db-1', 'v2').networking, address: '10.0.0.42' },
    });
    const byName = new Map(res.body.impact.items.map((i) => [i.name, i]));
    expect(byName.get('db-2')).toMatchObject({ proxy: 'created', kind: 'sidecar' });
    // Its callers' load assignments of db gain the endpoint.
    expect(byName.get('web-1')?.resources).toContainEqual({
      type: 'ClusterLoadAssignment',
      name: 'db',
      change: 'changed',
    });
    const del = await inject('DELETE', '/meshes/default/dataplanes/api-2?dryRun=true&impact=true');
    expect(del.status).toBe(200);
    const gone = del.body.impact.items.find((i: { name: string }) => i.name === 'api-2');
    expect(gone).toMatchObject({ proxy: 'deleted' });
  });

  it('a dry-run set has the impact the real set then has, and both are what the writes did, over a random sequence', async () => {
    const r = seededInts(31);
    const names = [...PROXIES, 'edge-1'];
    let compared = 0;
    let nonEmpty = 0;
    const impactsByRevision: Array<{ from: number; to: number; proxies: Map<string, boolean> }> = [];
    for (let step = 0; step < 40; step++) {
      // One to three items on distinct resources: policies, and now and then a proxy's version.
      const count = 1 + r(3);
      const items: Array<Record<string, unknown>> = [];
      const used = new Set<string>();
      for (let i = 0; i < count; i++) {
        if (r(5) === 0) {
          const p = PROXIES[r(PROXIES.length)];
          if (used.has(p)) continue;
          used.add(p);
          items.push(sidecar(p, `v${1 + r(2)}`));
          continue;
        }
        const [kind, , policyNames] = POLICIES[r(POLICIES.length)];
        const name = policyNames[r(policyNames.length)];
        if (used.has(name)) continue;
        used.add(name);
        const exists =
          (await inject('GET', `/meshes/default/${POLICIES.find((p) => p[0] === kind)?.[1]}/${name}`))
            .status === 200;
        items.push(
          exists && r(4) === 0
            ? { delete: { type: kind, mesh: 'default', name } }
            : policyBody(kind, name, r),
        );
      }
      const before = await observe(names);
      const dry = await inject('POST', '/_changes?dryRun=true&impact=true', { items });
      expect(dry.status, JSON.stringify(dry.body)).toBe(200);
      const from = cp.log.head() + 1;
      const real = await inject('POST', '/_changes?impact=true', { items });
      expect(real.status, JSON.stringify(real.body)).toBe(200);
      expect(real.body.impact, `step ${step}`).toEqual(dry.body.impact);
      const after = await observe(names);
      // What the writes did, proxy by proxy: the inspect answer or the served config changed.
      const did = new Map<string, { policies: boolean; xds: boolean }>();
      for (const p of names) {
        const b = before.get(p) as { policies: unknown; xds: unknown };
        const a = after.get(p) as { policies: unknown; xds: unknown };
        const policies = JSON.stringify(b.policies) !== JSON.stringify(a.policies);
        const xds = JSON.stringify(b.xds) !== JSON.stringify(a.xds);
        if (policies || xds) did.set(p, { policies, xds });
      }
      const said = new Map<string, { policies: boolean; xds: boolean }>(
        real.body.impact.items.map((i: { name: string; attachments: unknown[]; resources: unknown[] }) => [
          i.name,
          { policies: i.attachments.length > 0, xds: i.resources.length > 0 },
        ]),
      );
      expect(real.body.impact.total).toBe(said.size);
      expect(said, `step ${step}: ${JSON.stringify(items)}`).toEqual(did);
      impactsByRevision.push({
        from,
        to: real.body.revision,
        proxies: new Map([...said].map(([p, s]) => [p, s.xds])),
      });
      compared++;
      if (said.size > 0) nonEmpty++;
    }
    expect(compared).toBe(40);
    expect(nonEmpty).toBeGreaterThan(10);

    // Each proxy's config timeline names exactly the writes whose impact changed its config.
    for (const p of names) {
      const res = await inject('GET', `/meshes/default/dataplanes/${p}/xds/_history?size=1000`);
      expect(res.status, JSON.stringify(res.body)).toBe(200);
      const first = impactsByRevision[0].from;
      const timeline = new Set(
        (res.body.items as Array<{ revision: number }>)
          .map((i) => i.revision)
          .filter((rev) => rev >= first)
          .map((rev) => impactsByRevision.findIndex((w) => rev >= w.from && rev <= w.to)),
      );
      const impacted = new Set(impactsByRevision.flatMap((w, i) => (w.proxies.get(p) ? [i] : [])));
      expect(timeline, p).toEqual(impacted);
    }
  }, 120_000);
});
