// The mesh of the engine scenarios: 10,000 sidecar proxies of 200 services with varied tags
// (version, zone, protocol) and 1,000 policies of the connection kinds, written straight into a
// LevelDB log as bench/inspect-fixture.ts does (each resource first passed through the API's own
// `validateBody`). The same store without the policies is the start-up baseline.
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
/** Services: proxy i serves `svc-(i % 200)`, 50 proxies each. */
export const SERVICES = 200;
const VERSIONS = 3;
const ZONES = 4;
const PROTOCOLS = ['http', 'grpc', 'http', 'tcp', 'http2'] as const;

const SERVICE = 'mesh.io/service';
const PROTOCOL = 'mesh.io/protocol';
const ZONE = 'mesh.io/zone';

const svc = (k: number): string => `svc-${((k % SERVICES) + SERVICES) % SERVICES}`;
/** The protocol of service k's inbounds. */
const protocolOf = (k: number): string => PROTOCOLS[(((k % SERVICES) + SERVICES) % SERVICES) % 5] as string;

/** The name of proxy i: `dp-00042`. */
export const proxyName = (i: number): string => `dp-${String(i).padStart(5, '0')}`;

/**
 * Proxy i: one inbound of service i % 200 (its protocol, version v1–v3, zone z1–z4), four outbounds:
 * three that follow the service, one that follows the service and zone.
 */
export function proxyBody(i: number): Record<string, unknown> {
  const k = i % SERVICES;
  const zone = Math.floor(i / SERVICES) % ZONES;
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
            [PROTOCOL]: protocolOf(k),
            [ZONE]: `z${zone + 1}`,
            version: `v${(Math.floor(i / (SERVICES * ZONES)) % VERSIONS) + 1}`,
          },
        },
      ],
      outbound: [1, 7, 20, 40 + zone].map((d, j) => ({ port: 10001 + j, tags: { [SERVICE]: svc(k + d) } })),
    },
  };
}

/** How many of each kind the background policies hold (with the two named ones, 1,000). */
const MIX: ReadonlyArray<readonly [string, number]> = [
  ['TrafficPermission', 200],
  ['TrafficRoute', 150],
  ['Timeout', 148],
  ['Retry', 130],
  ['CircuitBreaker', 120],
  ['FaultInjection', 100],
  ['HealthCheck', 80],
  ['RateLimit', 70],
];

type Match = Record<string, string>;
const sel = (match: Match) => [{ match }];

/**
 * Selectors of background policy m: 5% wildcard, 20% by service and version (by service alone for
 * the kinds whose destinations may name only the service), 15% by service and zone, the rest by
 * service.
 */
function selectorsOf(m: number): { sources: Match; destinations: Match } {
  const a = svc(m * 7 + 3);
  const b = svc(m * 13 + 5);
  if (m % 20 === 0) return { sources: { [SERVICE]: '*' }, destinations: { [SERVICE]: '*' } };
  if (m % 5 === 1)
    return { sources: { [SERVICE]: a }, destinations: { [SERVICE]: b, version: `v${(m % VERSIONS) + 1}` } };
  if (m % 20 === 2 || m % 20 === 7 || m % 20 === 12)
    return { sources: { [SERVICE]: a, [ZONE]: `z${(m % ZONES) + 1}` }, destinations: { [SERVICE]: b } };
  return { sources: { [SERVICE]: a }, destinations: { [SERVICE]: b } };
}

/** Kinds whose destinations name the service alone (Kuma's rule): no version selector for them. */
const SERVICE_ONLY_DESTINATIONS: ReadonlySet<string> = new Set([
  'TrafficRoute',
  'Timeout',
  'HealthCheck',
  'CircuitBreaker',
  'Retry',
]);

/** The kind-specific fields of background policy m of `kind`. */
function fieldsOf(kind: string, m: number): Record<string, unknown> {
  const { sources, destinations: selected } = selectorsOf(m);
  const destinations = SERVICE_ONLY_DESTINATIONS.has(kind) ? { [SERVICE]: selected[SERVICE] } : selected;
  const sd = { sources: sel(sources), destinations: sel(destinations) };
  const service = destinations[SERVICE] === '*' ? undefined : destinations[SERVICE];
  switch (kind) {
    case 'TrafficPermission':
      return sd;
    case 'TrafficRoute':
      return {
        ...sd,
        conf:
          m % 3 === 0 && service !== undefined
            ? {
                split: [
                  { weight: 80, destination: { [SERVICE]: service, version: 'v1' } },
                  { weight: 20, destination: { [SERVICE]: service, version: 'v2' } },
                ],
              }
            : { destination: { [SERVICE]: '*' }, loadBalancer: { roundRobin: {} } },
      };
    case 'Timeout':
      return { ...sd, conf: { connectTimeout: '5s', http: { requestTimeout: `${(m % 10) + 1}s` } } };
    case 'Retry':
      return { ...sd, conf: { http: { numRetries: 3, perTryTimeout: '1s', retriableStatusCodes: [503] } } };
    case 'CircuitBreaker':
      return {
        ...sd,
        conf: { interval: '5s', baseEjectionTime: '30s', detectors: { totalErrors: { consecutive: 20 } } },
      };
    case 'FaultInjection':
      // Kuma requires the protocol tag in a FaultInjection's destinations (it applies to HTTP).
      return {
        sources: sel(sources),
        destinations: sel({ ...destinations, [PROTOCOL]: 'http' }),
        conf: { delay: { percentage: 5, value: '100ms' } },
      };
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
    case 'RateLimit':
      return { ...sd, conf: { http: { requests: 100 + m, interval: '1s' } } };
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

/** The 40 services whose 2,000 proxies (40 × 50) `put2000` reaches. */
export const HOT_SERVICES = Array.from({ length: 40 }, (_, i) => svc(i * 5));

/**
 * `bench-put-2000`, in two versions: `on`, a Timeout whose sources are the proxies of the 40 hot
 * services (service and protocol exact, version and zone any: 4 tags, against at most 2 for a
 * background Timeout's sources) to any destination, the best Timeout on every outbound of those 2,000
 * proxies; `off`, the same with a version no proxy has, which reaches none. Each PUT of one after the
 * other changes the Timeout of every outbound of 2,000 proxies.
 */
export function put2000(on: boolean): FixturePolicy {
  return policyBody('Timeout', 'bench-put-2000', {
    sources: HOT_SERVICES.map((s, i) => ({
      match: { [SERVICE]: s, [PROTOCOL]: protocolOf(i * 5), version: on ? '*' : 'v0', [ZONE]: '*' },
    })),
    destinations: sel({ [SERVICE]: '*' }),
    conf: { connectTimeout: '3s', http: { requestTimeout: '15s' } },
  });
}

/**
 * `bench-mesh-wide`: a MeshTrafficPermission on the whole mesh, allowing or denying every caller;
 * listed by every proxy, so each write of it (the action flipped) changes all 10,000 proxies' matches.
 */
export function meshWide(allow: boolean): FixturePolicy {
  return policyBody('MeshTrafficPermission', 'bench-mesh-wide', {
    spec: {
      targetRef: { kind: 'Mesh' },
      from: [{ targetRef: { kind: 'Mesh' }, default: { action: allow ? 'ALLOW' : 'DENY' } }],
    },
  });
}

/** `bench-put-none`, the baseline: the same Timeout with services no proxy has, in two versions. */
export function putNone(flip: boolean): FixturePolicy {
  return policyBody('Timeout', 'bench-put-none', {
    sources: HOT_SERVICES.map((s, i) => ({
      match: {
        [SERVICE]: `${s}-gone`,
        [PROTOCOL]: protocolOf(i * 5),
        version: flip ? 'v0' : '*',
        [ZONE]: '*',
      },
    })),
    destinations: sel({ [SERVICE]: '*' }),
    conf: { connectTimeout: '3s', http: { requestTimeout: '15s' } },
  });
}

/** The 1,000 policies: the background mix, then `bench-put-2000` (on) and `bench-put-none`. */
export function fixturePolicies(): FixturePolicy[] {
  const out: FixturePolicy[] = [];
  for (const [kind, count] of MIX) {
    const prefix = registry.get(kind).path.replace(/s$/, '').replace(/ie$/, 'y');
    for (let m = 0; m < count; m++)
      out.push(policyBody(kind, `${prefix}-${String(m).padStart(3, '0')}`, fieldsOf(kind, m)));
  }
  out.push(put2000(true), putNone(false));
  return out;
}

/** Validates a PUT body as the API does and builds the stored resource; throws with the causes if invalid. */
function stored(kind: string, body: Record<string, unknown>, seconds: number): WireResource {
  const desc = registry.get(kind);
  const v = validateBody(desc, body, { mesh: MESH, name: body.name as string });
  if (!v.ok) throw new Error(`fixture ${kind} ${String(body.name)} is invalid: ${JSON.stringify(v.causes)}`);
  return toWire(desc, MESH, body.name as string, at(seconds), at(seconds), v.spec);
}

/** The fixture's resources in write order: the mesh, the 10,000 proxies, then (with `policies`) the 1,000 policies. */
export function engineResources(policies: boolean): Array<{ kind: string; resource: WireResource }> {
  const mesh: WireResource = { type: 'Mesh', name: MESH, creationTime: at(0), modificationTime: at(0) };
  const out = [{ kind: 'Mesh', resource: mesh }];
  for (let i = 0; i < PROXIES; i++)
    out.push({ kind: 'Dataplane', resource: stored('Dataplane', proxyBody(i), 1) });
  if (policies)
    for (const [j, p] of fixturePolicies().entries())
      out.push({ kind: p.kind, resource: stored(p.kind, p.body, 2 + j) });
  return out;
}

/**
 * Writes the engine mesh into a new LevelDB store at `path`: the mesh, the 10,000 proxies, then (with
 * `policies`) the 1,000 policies, each a second after the one before. Returns the number of entries.
 */
export async function buildEngineStore(path: string, policies: boolean): Promise<number> {
  const w = await openBatchedLog(path);
  for (const { kind, resource } of engineResources(policies)) await w.push(create(kind, resource));
  return w.close();
}
