import * as grpc from '@grpc/grpc-js';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { LogEntry, WireResource } from '../../../src/events/types.js';
import type { PolicyResource } from '../../../src/policies/policy-resource.js';
import type { Networking } from '../../../src/policies/proxy-interfaces.js';
import { createResourceViews } from '../../../src/projections/resource-views.js';
import { registry } from '../../../src/resources/registry.js';
import { onMeshChange, xdsSources } from '../../../src/runtime/xds-sources.js';
import { encodedValue } from '../../../src/xds/encode-any.js';
import { createMeshConfigSource } from '../../../src/xds/mesh-config-source.js';
import { dataplaneLookup } from '../../../src/xds/node-identity.js';
import { CONFIG_KINDS, proxylessConfig } from '../../../src/xds/proxyless/config.js';
import { readyEndpoints } from '../../../src/xds/proxyless/endpoints.js';
import { CLUSTER, CLUSTER_LOAD_ASSIGNMENT, LISTENER } from '../../../src/xds/type-urls.js';
import { SVC } from '../../helpers/policies.js';

const MESH = 'default';
const SERVICES = ['a', 'b', 'c', 'd'];
const PROXIES = ['dp1', 'dp2', 'dp3', 'dp4', 'dp5', 'dp6'];
const POLICIES = ['p1', 'p2', 'p3'];
const TIMES = ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z'];

const service = fc.constantFrom(...SERVICES, '*');
const selector = fc.record(
  { [SVC]: service, version: fc.constantFrom('v1', 'v2', '*') },
  { requiredKeys: [SVC] },
);
const selectors = fc.array(
  selector.map((match) => ({ match })),
  { minLength: 1, maxLength: 2 },
);
const networking = fc.record({
  address: fc.constantFrom('10.0.0.1', '10.0.0.2'),
  inbound: fc.array(
    fc.record({
      port: fc.integer({ min: 8000, max: 8002 }),
      tags: fc.record({ [SVC]: fc.constantFrom(...SERVICES), version: fc.constantFrom('v1', 'v2') }),
      health: fc.record({ ready: fc.boolean() }),
    }),
    { maxLength: 2 },
  ),
});
const confOf = (kind: string): fc.Arbitrary<unknown> => {
  const dest = fc.record({ [SVC]: service, version: fc.constantFrom('v1', 'v2') }, { requiredKeys: [SVC] });
  switch (kind) {
    case 'TrafficRoute':
      return fc.oneof(
        dest.map((destination) => ({ destination })),
        fc
          .array(fc.record({ weight: fc.integer({ min: 0, max: 3 }), destination: dest }), {
            minLength: 1,
            maxLength: 3,
          })
          .map((split) => ({ split })),
      );
    case 'Timeout':
      return fc.constantFrom(
        { connectTimeout: '1s', http: { requestTimeout: '2s' } },
        { connectTimeout: '3s' },
      );
    case 'Retry':
      return fc.constantFrom({ http: { numRetries: 2 } }, { http: { numRetries: 5 } });
    case 'FaultInjection':
      return fc.constantFrom(
        { abort: { httpStatus: 503, percentage: 50 } },
        { delay: { value: '1s', percentage: 10 } },
      );
    case 'CircuitBreaker':
      return fc.constantFrom({ thresholds: { maxRequests: 10 } }, { thresholds: { maxRequests: 20 } });
    default:
      return fc.constant({ activeChecks: { interval: '10s', timeout: '2s' } });
  }
};

/** A write: a Dataplane, a policy of a config kind, a Secret or the Mesh; a state or a delete. */
const write: fc.Arbitrary<{ kind: string; name: string; fields?: Record<string, unknown> }> = fc.oneof(
  fc.record({
    kind: fc.constant('Dataplane'),
    name: fc.constantFrom(...PROXIES, 'other'),
    fields: fc.option(fc.record({ creationTime: fc.constantFrom(...TIMES), networking }), {
      nil: undefined,
      freq: 6,
    }),
  }),
  fc.constantFrom(...CONFIG_KINDS).chain((kind) =>
    fc.record({
      kind: fc.constant(kind),
      name: fc.constantFrom(...POLICIES),
      fields: fc.option(
        fc.record({
          creationTime: fc.constantFrom(...TIMES),
          sources: selectors,
          destinations: selectors,
          conf: confOf(kind),
        }),
        { nil: undefined, freq: 5 },
      ),
    }),
  ),
  fc.record({
    kind: fc.constant('Secret'),
    name: fc.constant('s1'),
    fields: fc.constant({ creationTime: TIMES[0], data: 'c2VjcmV0' }),
  }),
  fc.constant({ kind: 'Mesh', name: MESH, fields: { creationTime: TIMES[0] } }),
);

let revision = 0;
function entry(
  kind: string,
  name: string,
  fields: Record<string, unknown> | undefined,
  old?: WireResource,
): LogEntry {
  const mesh = kind === 'Mesh' ? undefined : MESH;
  const resource =
    fields &&
    ({ type: kind, ...(mesh ? { mesh } : {}), name, modificationTime: 't', ...fields } as WireResource);
  return {
    revision: ++revision,
    time: 't',
    kind,
    ...(mesh ? { mesh } : {}),
    name,
    operation: resource ? (old ? 'update' : 'create') : 'delete',
    ...(resource ? { resource } : { previous: old }),
    actor: { name: 'x', groups: [], address: 'x' },
    origin: 'local',
    prevHash: '',
    hash: '',
  } as LogEntry;
}

type Views = ReturnType<typeof createResourceViews>;

/**
 * The config of `name` dialling `services`, computed from scratch from the views: for the services
 * that exist (a Dataplane of the mesh serves them) and those it was `sent` already.
 */
function fullRecomputation(views: Views, name: string, services: string[], sent: ReadonlySet<string>) {
  const own = views.get('Dataplane', MESH, name)?.resource.networking as Networking | undefined;
  if (!own) return { listeners: [], clusters: [], assignments: [] };
  const candidates: Record<string, PolicyResource[]> = {};
  for (const kind of CONFIG_KINDS) {
    candidates[kind] = [];
    views.each(kind, MESH, (i) => candidates[kind].push(i.resource as unknown as PolicyResource));
  }
  const nets: Networking[] = [];
  views.each('Dataplane', MESH, (i) => nets.push(i.resource.networking as Networking));
  const exists = new Set<string>();
  for (const n of nets) for (const ib of n.inbound ?? []) exists.add(ib.tags[SVC] as string);
  const present = services.filter((s) => sent.has(s) || exists.has(s));
  const c = proxylessConfig({
    networking: own,
    services: present,
    candidates,
    endpoints: readyEndpoints(nets),
  });
  return { listeners: c.listeners, clusters: c.clusters, assignments: c.assignments };
}

/** The wire bytes of each list, hex. */
const encodedAll = (c: { listeners: object[]; clusters: object[]; assignments: object[] }) => ({
  listeners: c.listeners.map((r) => encodedValue(LISTENER, r).toString('hex')),
  clusters: c.clusters.map((r) => encodedValue(CLUSTER, r).toString('hex')),
  assignments: c.assignments.map((r) => encodedValue(CLUSTER_LOAD_ASSIGNMENT, r).toString('hex')),
});

describe('bounded recomputation (issue 17 point 3): a write recomputes only the proxies it can affect', () => {
  it('every connected proxy a write skips has the config a full recomputation gives', async () => {
    let skipped = 0;
    let told = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.array(write, { minLength: 3, maxLength: 12 }),
        fc.array(fc.subarray(SERVICES, { minLength: 1 }), {
          minLength: PROXIES.length,
          maxLength: PROXIES.length,
        }),
        fc.array(write, { minLength: 1, maxLength: 25 }),
        async (initial, dials, writes) => {
          const views = createResourceViews(registry);
          const apply = (w: { kind: string; name: string; fields?: Record<string, unknown> }) => {
            const old = views.get(w.kind, w.kind === 'Mesh' ? undefined : MESH, w.name)?.resource;
            if (!w.fields && !old) return;
            views.apply([entry(w.kind, w.name, w.fields, old)]);
          };
          views.apply([entry('Mesh', MESH, { creationTime: TIMES[0] })]);
          for (const [i, p] of PROXIES.entries()) {
            const tags = { [SVC]: SERVICES[i % SERVICES.length], version: 'v1' };
            const networking = { address: '10.0.9.9', inbound: [{ port: 9000, tags }] };
            apply({ kind: 'Dataplane', name: p, fields: { creationTime: TIMES[0], networking } });
          }
          for (const w of initial) apply(w);
          const source = createMeshConfigSource({
            lookup: dataplaneLookup(views),
            checkToken: async () => ({ ok: true }),
            sources: xdsSources(views),
            onMeshChange: onMeshChange(views),
          });
          const proxies = [];
          for (const [i, name] of PROXIES.entries()) {
            if (!views.get('Dataplane', MESH, name)) continue;
            const handle = await source.open(
              {
                id: `${MESH}.${name}`,
                cluster: '',
                metadata: {},
                user_agent_name: '',
                user_agent_version: '',
                client_features: [],
              },
              new grpc.Metadata(),
            );
            const services = dials[i] as string[];
            const state = { name, services, handle, dirty: false, sent: new Set<string>() };
            handle.onChange(() => (state.dirty = true));
            for (const r of handle.resources(LISTENER, services).resources) state.sent.add(r.name);
            proxies.push(state);
          }
          for (const w of writes) {
            for (const p of proxies) p.dirty = false;
            apply(w);
            for (const p of proxies) {
              const served = {
                listeners: p.handle.resources(LISTENER, p.services).resources.map((r) => r.resource),
                clusters: p.handle.resources(CLUSTER, []).resources.map((r) => r.resource),
                assignments: p.handle.resources(CLUSTER_LOAD_ASSIGNMENT, []).resources.map((r) => r.resource),
              };
              const full = fullRecomputation(views, p.name, p.services, p.sent);
              for (const r of p.handle.resources(LISTENER, p.services).resources) p.sent.add(r.name);
              if (!p.dirty) {
                skipped++;
                expect(served).toEqual(full);
                continue;
              }
              // Told: recomputed, with the lists that did not change shared with the last revision;
              // what goes on the wire is what a full recomputation gives.
              told++;
              expect(encodedAll(served)).toEqual(encodedAll(full));
            }
          }
        },
      ),
      { numRuns: 150 },
    );
    // The property is only worth something if the filter both skips and tells, often.
    expect(skipped).toBeGreaterThan(100);
    expect(told).toBeGreaterThan(100);
  });
});

describe('unchanged lists are shared between revisions', () => {
  it('a Timeout change gives new Listeners and the very same cluster and endpoint arrays', async () => {
    const views = createResourceViews(registry);
    views.apply([entry('Mesh', MESH, { creationTime: TIMES[0] })]);
    const dp = (name: string, svc: string, address: string) =>
      entry('Dataplane', name, {
        creationTime: TIMES[0],
        networking: { address, inbound: [{ port: 9000, tags: { [SVC]: svc } }] },
      });
    views.apply([dp('client', 'a', '10.0.0.1'), dp('backend', 'b', '10.0.0.2')]);
    const timeout = (ms: number) =>
      entry(
        'Timeout',
        't1',
        {
          creationTime: TIMES[0],
          sources: [{ match: { [SVC]: '*' } }],
          destinations: [{ match: { [SVC]: 'b' } }],
          conf: { http: { requestTimeout: `${ms}ms` } },
        },
        views.get('Timeout', MESH, 't1')?.resource,
      );
    views.apply([timeout(1000)]);
    const source = createMeshConfigSource({
      lookup: dataplaneLookup(views),
      checkToken: async () => ({ ok: true }),
      sources: xdsSources(views),
      onMeshChange: onMeshChange(views),
    });
    const handle = await source.open(
      {
        id: `${MESH}.client`,
        cluster: '',
        metadata: {},
        user_agent_name: '',
        user_agent_version: '',
        client_features: [],
      },
      new grpc.Metadata(),
    );
    let told = 0;
    handle.onChange(() => told++);
    const read = () => ({
      listeners: handle.resources(LISTENER, ['b']),
      clusters: handle.resources(CLUSTER, []),
      assignments: handle.resources(CLUSTER_LOAD_ASSIGNMENT, []),
    });
    const before = read();
    expect(before.clusters.resources.length).toBeGreaterThan(0);
    views.apply([timeout(2000)]);
    expect(told).toBe(1);
    const after = read();
    expect(after.listeners.version).toBeGreaterThan(before.listeners.version);
    expect(after.listeners.resources).not.toBe(before.listeners.resources);
    expect(encodedValue(LISTENER, after.listeners.resources[0]!.resource)).not.toEqual(
      encodedValue(LISTENER, before.listeners.resources[0]!.resource),
    );
    expect(after.clusters.resources).toBe(before.clusters.resources);
    expect(after.assignments.resources).toBe(before.assignments.resources);
  });
});
