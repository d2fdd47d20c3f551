// The mesh of the inspect scenarios: 10,000 sidecar proxies and 1,000 policies of
// mixed kinds, written straight into a LevelDB log as `buildStore` does. Every resource is checked by
// the kind's own PUT validation first (`validateBody`) and stored in the form a PUT stores.
import { toWire } from '../src/app/decide.js';
import type { WireResource } from '../src/events/types.js';
import { registry } from '../src/resources/registry.js';
import { validateBody } from '../src/resources/validate.js';
import { create, openBatchedLog } from './fixtures.js';

const T = Date.parse('2026-01-01T00:00:00.000Z');
const at = (seconds: number): string => new Date(T + seconds * 1000).toISOString();

/** The mesh every resource of the fixture is in. */
export const MESH = 'default';
/** Proxies in the mesh. */
export const PROXIES = 10_000;
/** Services: proxy i serves `s-(i % 50)`, so each service has 200 proxies. */
export const SERVICES = 50;
/** Inbound tag sets: besides its service, proxy i has `version: v1`..`v5` (40 proxies per service and version). */
export const VERSIONS = 5;
/** The services whose 1,000 proxies (5 × 200) the policies below reach. */
export const HOT_SERVICES = ['s-0', 's-1', 's-2', 's-3', 's-4'];

const SERVICE = 'mesh.io/service';
const svc = (k: number) => `s-${((k % SERVICES) + SERVICES) % SERVICES}`;

/** The name of proxy i: `dp-00042`. */
export const proxyName = (i: number): string => `dp-${String(i).padStart(5, '0')}`;

/** Proxy i: one inbound (its service, http, its version), three outbounds to other services. */
export function proxyBody(i: number): Record<string, unknown> {
  const k = i % SERVICES;
  return {
    type: 'Dataplane',
    mesh: MESH,
    name: proxyName(i),
    networking: {
      address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      inbound: [
        {
          port: 8080,
          servicePort: 80,
          tags: {
            [SERVICE]: svc(k),
            'mesh.io/protocol': 'http',
            version: `v${(Math.floor(i / SERVICES) % VERSIONS) + 1}`,
          },
        },
      ],
      outbound: [1, 7, 20].map((d, j) => ({ port: 10001 + j, tags: { [SERVICE]: svc(k + d) } })),
    },
  };
}

// ---------------------------------------------------------------- policies

/** How many of each kind the 1,000 background policies hold (their sum is 1,000 minus the three named ones). */
const MIX: ReadonlyArray<readonly [string, number]> = [
  ['TrafficPermission', 199],
  ['TrafficRoute', 100],
  ['Timeout', 98],
  ['HealthCheck', 80],
  ['CircuitBreaker', 80],
  ['Retry', 80],
  ['FaultInjection', 60],
  ['RateLimit', 80],
  ['TrafficLog', 60],
  ['TrafficTrace', 40],
  ['ProxyTemplate', 40],
  ['MeshTrafficPermission', 60],
  ['MeshAccessLog', 10],
  ['MeshTrace', 10],
];

type Match = Record<string, string>;
const sel = (match: Match) => [{ match }];

/** Selectors of background policy m of a kind: 5% wildcard, 20% by service and version, the rest by service. */
function selectorsOf(m: number): { sources: Match; destinations: Match } {
  const a = svc(m * 7 + 3);
  const b = svc(m * 13 + 5);
  if (m % 20 === 0) return { sources: { [SERVICE]: '*' }, destinations: { [SERVICE]: '*' } };
  if (m % 5 === 1)
    return { sources: { [SERVICE]: a }, destinations: { [SERVICE]: b, version: `v${(m % VERSIONS) + 1}` } };
  return { sources: { [SERVICE]: a }, destinations: { [SERVICE]: b } };
}

/** Kinds whose destinations name the service alone (Kuma's rule): no version selector for them. */
const SERVICE_ONLY_DESTINATIONS = new Set([
  'TrafficRoute',
  'Timeout',
  'HealthCheck',
  'CircuitBreaker',
  'Retry',
  'TrafficLog',
]);

/** The destination selector of background policy m of `kind`, as that kind allows it. */
function destinationOf(kind: string, destinations: Match): Match {
  if (SERVICE_ONLY_DESTINATIONS.has(kind)) return { [SERVICE]: destinations[SERVICE] };
  // A FaultInjection names the protocol of its destinations (Kuma's rule); every inbound is http.
  if (kind === 'FaultInjection') return { ...destinations, 'mesh.io/protocol': 'http' };
  return destinations;
}

/** The kind-specific fields of background policy m of `kind`. */
function fieldsOf(kind: string, m: number): Record<string, unknown> {
  const { sources, destinations } = selectorsOf(m);
  const sd = { sources: sel(sources), destinations: sel(destinationOf(kind, destinations)) };
  const service = destinations[SERVICE] === '*' ? undefined : destinations[SERVICE];
  switch (kind) {
    case 'TrafficPermission':
      return sd;
    case 'TrafficRoute':
      return {
        ...sd,
        conf:
          m % 4 === 0 && service !== undefined
            ? {
                split: [
                  { weight: 90, destination: { [SERVICE]: service, version: 'v1' } },
                  { weight: 10, destination: { [SERVICE]: service, version: 'v2' } },
                ],
              }
            : { destination: { [SERVICE]: '*' }, loadBalancer: { roundRobin: {} } },
      };
    case 'Timeout':
      return { ...sd, conf: { connectTimeout: '5s', http: { requestTimeout: `${(m % 10) + 1}s` } } };
    case 'HealthCheck':
      return {
        ...sd,
        conf: {
          interval: '10s',
          timeout: '2s',
          unhealthyThreshold: 3,
          healthyThreshold: 1,
          http: { path: '/health' },
        },
      };
    case 'CircuitBreaker':
      return {
        ...sd,
        conf: { interval: '5s', baseEjectionTime: '30s', detectors: { totalErrors: { consecutive: 20 } } },
      };
    case 'Retry':
      return { ...sd, conf: { http: { numRetries: 3, perTryTimeout: '1s', retriableStatusCodes: [503] } } };
    case 'FaultInjection':
      return { ...sd, conf: { delay: { percentage: 5, value: '100ms' } } };
    case 'RateLimit':
      return { ...sd, conf: { http: { requests: 100 + m, interval: '1s' } } };
    case 'TrafficLog':
      return { ...sd, conf: {} };
    case 'TrafficTrace':
      return { selectors: sel(m % 20 === 0 ? { [SERVICE]: '*' } : { ...destinations }), conf: {} };
    case 'ProxyTemplate':
      return {
        selectors: sel(m % 20 === 0 ? { [SERVICE]: '*' } : { ...destinations }),
        conf: { imports: ['default-proxy'] },
      };
    case 'MeshTrafficPermission':
      return {
        spec: {
          targetRef:
            m % 20 === 0
              ? { kind: 'Mesh' }
              : m % 5 === 1
                ? { kind: 'MeshSubset', tags: { version: `v${(m % VERSIONS) + 1}` } }
                : { kind: 'MeshService', name: svc(m * 13 + 5) },
          from: [
            { targetRef: { kind: 'MeshService', name: svc(m * 7 + 3) }, default: { action: 'ALLOW' } },
            { targetRef: { kind: 'Mesh' }, default: { action: 'DENY' } },
          ],
        },
      };
    case 'MeshAccessLog':
      return {
        spec: {
          targetRef: { kind: 'MeshService', name: svc(m * 13 + 5) },
          from: [
            { targetRef: { kind: 'Mesh' }, default: { backends: [{ file: { path: '/tmp/access.log' } }] } },
          ],
        },
      };
    case 'MeshTrace':
      return {
        spec: {
          targetRef: { kind: 'MeshService', name: svc(m * 13 + 5) },
          default: {
            backends: [{ zipkin: { url: 'http://zipkin.local:9411/api/v2/spans' } }],
            sampling: { overall: 10 },
          },
        },
      };
    default:
      throw new Error(`no fixture for ${kind}`);
  }
}

/** A policy of the fixture: its registry kind, its collection path and its PUT body. */
export interface FixturePolicy {
  kind: string;
  path: string;
  body: Record<string, unknown>;
}

const policyBody = (kind: string, name: string, fields: Record<string, unknown>): FixturePolicy => ({
  kind,
  path: registry.get(kind).path,
  body: { type: registry.get(kind).wireType, mesh: MESH, name, ...fields },
});

/**
 * `bench-reach-1000`: a TrafficPermission whose destinations are the inbounds of the 5 hot services
 * (1,000 proxies), ranked (3 tags, 2 exact) above every background TrafficPermission (at most 2 and
 * 2): the best one on each of those inbounds, so its `/dataplanes` lists exactly 1,000 proxies.
 */
export const REACH_1000 = policyBody('TrafficPermission', 'bench-reach-1000', {
  sources: sel({ [SERVICE]: '*' }),
  destinations: HOT_SERVICES.map((s) => ({
    match: { [SERVICE]: s, 'mesh.io/protocol': 'http', version: '*' },
  })),
});

/**
 * `bench-put-1000`, the policy the PUT figure alternates, in two versions: `on`, a Timeout whose
 * sources are the proxies of the 5 hot services (3 tags, 2 exact, and a wildcard destination: rank
 * (4, 2) against at most (2, 2) for a background Timeout on an outbound), the best Timeout on every
 * outbound of those 1,000 proxies; `off`, the same with a version no proxy has, which reaches none, so
 * those 1,000 proxies fall back to the background Timeouts. Each PUT changes the matches of 1,000.
 */
export function put1000(on: boolean): FixturePolicy {
  return policyBody('Timeout', 'bench-put-1000', {
    sources: HOT_SERVICES.map((s) => ({
      match: { [SERVICE]: s, 'mesh.io/protocol': 'http', version: on ? '*' : 'v0' },
    })),
    destinations: sel({ [SERVICE]: '*' }),
    conf: { connectTimeout: '3s', http: { requestTimeout: '15s' } },
  });
}

/**
 * `bench-put-none`, the baseline of the PUT figure: a Timeout like `bench-put-1000` whose sources name
 * services no proxy has, in two versions (each PUT is a change that reaches the log), matching no proxy.
 */
export function putNone(flip: boolean): FixturePolicy {
  return policyBody('Timeout', 'bench-put-none', {
    sources: HOT_SERVICES.map((s) => ({
      match: { [SERVICE]: `${s}-gone`, 'mesh.io/protocol': 'http', version: flip ? 'v0' : '*' },
    })),
    destinations: sel({ [SERVICE]: '*' }),
    conf: { connectTimeout: '3s', http: { requestTimeout: '15s' } },
  });
}

/** The 1,000 policies: the background mix, then `bench-reach-1000`, `bench-put-1000` (on) and `bench-put-none`. */
export function fixturePolicies(): FixturePolicy[] {
  const out: FixturePolicy[] = [];
  for (const [kind, count] of MIX) {
    const prefix = registry.get(kind).path.replace(/s$/, '').replace(/ie$/, 'y');
    for (let m = 0; m < count; m++)
      out.push(policyBody(kind, `${prefix}-${String(m).padStart(3, '0')}`, fieldsOf(kind, m)));
  }
  out.push(REACH_1000, put1000(true), putNone(false));
  return out;
}

// ---------------------------------------------------------------- store

/** Validates a PUT body as the API does and builds the stored resource; throws with the causes if invalid. */
function stored(kind: string, body: Record<string, unknown>, seconds: number): WireResource {
  const desc = registry.get(kind);
  const v = validateBody(desc, body, { mesh: MESH, name: body.name as string });
  if (!v.ok) throw new Error(`fixture ${kind} ${String(body.name)} is invalid: ${JSON.stringify(v.causes)}`);
  return toWire(desc, MESH, body.name as string, at(seconds), at(seconds), v.spec);
}

/**
 * Writes the inspect mesh into a new LevelDB store at `path`: the mesh, the 10,000 proxies, then the
 * 1,000 policies (each created a second after the one before, so ties on rank go to the newer, as
 * with policies written one by one). Returns the number of log entries.
 */
export async function buildInspectStore(path: string): Promise<number> {
  const w = await openBatchedLog(path);
  const push = w.push;
  const mesh: WireResource = { type: 'Mesh', name: MESH, creationTime: at(0), modificationTime: at(0) };
  await push(create('Mesh', mesh));
  for (let i = 0; i < PROXIES; i++) await push(create('Dataplane', stored('Dataplane', proxyBody(i), 1)));
  for (const [j, p] of fixturePolicies().entries()) await push(create(p.kind, stored(p.kind, p.body, 2 + j)));
  return w.close();
}
