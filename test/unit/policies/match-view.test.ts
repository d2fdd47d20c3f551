import { describe, expect, it } from 'vitest';
import type { LogEntry, WireResource } from '../../../src/events/types.js';
import { matchSidecar, type SidecarItem } from '../../../src/policies/match-sidecar.js';
import { gatewayMatcher } from '../../../src/policies/gateway-matcher.js';
import {
  createMatchView,
  diffItems,
  MATCHED_KINDS,
  type GatewayMatcher,
} from '../../../src/policies/match-view.js';
import { matchNetworking, meshPrometheus } from '../../../src/policies/metrics-inbound.js';
import type { PolicyResource } from '../../../src/policies/policy-resource.js';
import { isBuiltinGateway, proxyInterfaces } from '../../../src/policies/proxy-interfaces.js';
import { SIDECAR_KINDS } from '../../../src/policies/sidecar-cells.js';
import { createResourceViews } from '../../../src/projections/resource-views.js';
import { registry } from '../../../src/resources/registry.js';
import { expectEqual } from '../../helpers/expect-equal.js';
import { SVC } from '../../helpers/policies.js';
import { seededInts } from '../../helpers/seeded.js';

const MESH = 'default';
let revision = 0;

/** A policy's fields with what it sets changed (`conf`, a rule's `default`), what it selects kept. */
function resettled(stored: Record<string, unknown>, n: number): Record<string, unknown> {
  const { type: _type, mesh: _mesh, name: _name, modificationTime: _time, ...fields } = stored;
  const spec = fields.spec as { from?: Array<Record<string, unknown>> } | undefined;
  if (spec?.from) {
    return { ...fields, spec: { ...spec, from: spec.from.map((r) => ({ ...r, default: { marker: n } })) } };
  }
  return { ...fields, conf: { ...(fields.conf as object | undefined), marker: n } };
}

function entry(
  kind: string,
  name: string,
  resource: Record<string, unknown> | undefined,
  mesh = MESH,
): LogEntry {
  const wire = resource && ({ type: kind, mesh, name, modificationTime: 't', ...resource } as WireResource);
  return {
    revision: ++revision,
    time: 't',
    kind,
    ...(kind === 'Mesh' ? {} : { mesh }),
    name,
    operation: wire ? 'update' : 'delete',
    ...(wire ? { resource: wire } : {}),
    actor: { name: 'x', groups: [], address: 'x' },
    origin: 'local',
    prevHash: '',
    hash: '',
  } as LogEntry;
}

/** No gateway proxies in these sequences: the gateway half answers nothing. */
const noGateways: GatewayMatcher<never> = { view: () => undefined, policiesIn: () => [] };

/** A seeded generator of random writes over a small world, so that matches collide often. */
function world(seed: number) {
  const rand = seededInts(seed);
  const pick = <T>(xs: readonly T[]): T => xs[rand(xs.length)];
  const services = ['a', 'b', 'c', 'd'];
  const selector = (): Record<string, string> => {
    const m: Record<string, string> = { [SVC]: pick([...services, '*']) };
    if (rand(3) === 0) m.version = pick(['v1', 'v2', '*']);
    return m;
  };
  const selectors = () => Array.from({ length: 1 + rand(2) }, () => ({ match: selector() }));
  const times = ['2026-01-01T00:00:00.000Z', '2026-01-02T00:00:00.000Z', '2026-01-03T00:00:00.000Z'];
  const policyFields = (kind: string): Record<string, unknown> => {
    const creationTime = pick(times);
    if (['TrafficTrace', 'ProxyTemplate', 'VirtualOutbound'].includes(kind)) {
      return { creationTime, selectors: selectors() };
    }
    if (['MeshTrafficPermission', 'MeshAccessLog', 'MeshTrace'].includes(kind)) {
      const targetRef = pick([
        { kind: 'Mesh' },
        { kind: 'MeshService', name: pick(services) },
        { kind: 'MeshSubset', tags: { version: pick(['v1', 'v2']) } },
        { kind: 'MeshServiceSubset', name: pick(services), tags: { version: 'v1' } },
      ]);
      return {
        creationTime,
        spec: {
          targetRef,
          from: [{ targetRef: { kind: 'Mesh' }, default: { action: pick(['ALLOW', 'DENY']) } }],
        },
      };
    }
    const fields: Record<string, unknown> = { creationTime, sources: selectors(), destinations: selectors() };
    if (kind === 'TrafficRoute') {
      const split = Array.from({ length: 1 + rand(2) }, () => ({
        weight: 1,
        destination: { [SVC]: pick([...services, '*']) },
      }));
      fields.conf = rand(2) === 0 ? { destination: split[0].destination } : { split };
    }
    return fields;
  };
  const proxyFields = (): Record<string, unknown> => {
    const inbound = Array.from({ length: rand(3) }, (_, i) => ({
      port: 8000 + i,
      tags: { [SVC]: pick(services), version: pick(['v1', 'v2']) },
    }));
    const outbound = Array.from({ length: rand(4) }, (_, i) => ({
      port: 10000 + i,
      tags: { [SVC]: pick(services) },
    }));
    const networking: Record<string, unknown> = {
      address: pick(['10.0.0.1', '10.0.0.3']),
      inbound,
      outbound,
    };
    // The Dataplane's override of the mesh's Prometheus backend: its port and a tag set of its own.
    const metrics =
      rand(3) === 0
        ? { type: 'prometheus', conf: { port: 9000 + rand(2), tags: { [SVC]: pick(services) } } }
        : undefined;
    if (inbound.length === 0 && rand(2) === 0) {
      // Delegated (a sidecar with gateway tags) or built-in (the gateway form).
      networking.gateway = {
        tags: { [SVC]: pick(['edge', 'edge2']), version: pick(['v1', 'v2']) },
        ...(rand(3) > 0 ? { type: 'BUILTIN' } : {}),
      };
      networking.inbound = undefined;
      networking.outbound = undefined;
    }
    return { creationTime: pick(times), networking, ...(metrics ? { metrics } : {}) };
  };
  /** The mesh: metrics off, on with the default backend conf, or on with a port and tags of a service. */
  const meshFields = (): Record<string, unknown> => {
    const prom = (conf?: Record<string, unknown>) => ({
      name: 'prom',
      type: 'prometheus',
      ...(conf ? { conf } : {}),
    });
    return pick([
      { creationTime: 't' },
      { creationTime: 't', metrics: { enabledBackend: 'prom', backends: [prom()] } },
      { creationTime: 't', metrics: { enabledBackend: '', backends: [prom()] } },
      {
        creationTime: 't',
        metrics: {
          enabledBackend: 'prom',
          backends: [prom({ port: 1234, tags: { [SVC]: pick(services), version: pick(['v1', 'v2']) } })],
        },
      },
    ]);
  };
  /** A MeshGateway or MeshGatewayRoute over the gateway services, with random selectors and backends. */
  const gatewayFields = (kind: string): Record<string, unknown> => {
    const selectors = [
      { match: { [SVC]: pick(['edge', 'edge2', '*']), ...(rand(3) === 0 ? { version: 'v2' } : {}) } },
    ];
    if (kind === 'MeshGateway') {
      const listeners = Array.from({ length: 1 + rand(2) }, (_, i) => ({
        port: 80 + i,
        protocol: pick(['HTTP', 'TCP']),
        hostname: pick(['*', 'a.example']),
        tags: { version: pick(['v1', 'v2']) },
      }));
      return { creationTime: pick(times), selectors, tags: { [SVC]: 'edge' }, conf: { listeners } };
    }
    const backends = () =>
      Array.from({ length: 1 + rand(2) }, () => ({ weight: 1, destination: { [SVC]: pick(services) } }));
    const conf =
      rand(2) === 0
        ? { tcp: { rules: [{ backends: backends() }] } }
        : {
            http: { rules: [{ matches: [{ path: { match: 'PREFIX', value: '/' } }], backends: backends() }] },
          };
    return { creationTime: pick(times), selectors, conf };
  };
  const gatewayProxyFields = (): Record<string, unknown> => ({
    creationTime: pick(times),
    networking: {
      address: '10.0.0.2',
      gateway: { tags: { [SVC]: pick(['edge', 'edge2']), version: pick(['v1', 'v2']) }, type: 'BUILTIN' },
    },
  });
  return { rand, pick, policyFields, proxyFields, meshFields, gatewayFields, gatewayProxyFields };
}

/** What the view must always equal: every proxy matched from scratch, and the reverse of that. */
function recompute(views: ReturnType<typeof createResourceViews>) {
  const candidates: Record<string, PolicyResource[]> = {};
  const byName = new Map<string, Map<string, PolicyResource>>();
  for (const kind of MATCHED_KINDS) {
    views.each(kind, MESH, (item) => {
      const p = item.resource as unknown as PolicyResource;
      (candidates[kind] ??= []).push(p);
      (byName.get(kind) ?? byName.set(kind, new Map()).get(kind))?.set(item.name, p);
    });
  }
  const proxies = new Map<string, unknown>();
  const affected = new Map<string, string[]>();
  const prometheus = meshPrometheus(views.get('Mesh', undefined, MESH)?.resource);
  views.each('Dataplane', MESH, (item) => {
    const networking = matchNetworking(item.resource, prometheus);
    const listed = new Set<string>();
    if (isBuiltinGateway(networking)) {
      const view = gatewayMatcher.view(networking, byName);
      proxies.set(item.name, view);
      if (view) for (const k of gatewayMatcher.policiesIn(view)) listed.add(k);
    } else {
      const items = matchSidecar(networking, candidates);
      proxies.set(item.name, items);
      for (const i of items)
        for (const [kind, ps] of Object.entries(i.matchedPolicies))
          for (const p of ps) listed.add(`${kind}/${p.name}`);
    }
    for (const k of listed) (affected.get(k) ?? affected.set(k, []).get(k))?.push(item.name);
  });
  return { proxies, affected, candidates };
}

describe('the match view: incremental equals a full recomputation', () => {
  for (const seed of process.env.MV_SEEDS
    ? Array.from({ length: Number(process.env.MV_SEEDS) }, (_, i) => i + 1)
    : [1, 2, 3, 4, 5]) {
    for (const sparse of [false, true])
      it(`after ${sparse ? 'some' : 'each'} of 500 random policy and proxy writes and deletes (seed ${seed})`, () => {
        const views = createResourceViews(registry);
        const view = createMatchView(views, gatewayMatcher);
        const w = world(seed);
        views.apply([entry('Mesh', MESH, { creationTime: 't' }, undefined)]);
        const policyNames = ['p1', 'p2', 'p3', 'p4'];
        const proxyNames = ['dp1', 'dp2', 'dp3', 'dp4', 'dp5', 'dp6', 'gw1', 'gw2'];
        let slowChecks = 0;
        let attachmentChecks = 0;
        let gatewayChecks = 0;
        let last: { kind: string; name: string } | undefined;
        for (let step = 0; step < 500; step++) {
          // Now and then the mesh's metrics change: the metrics inbound of every proxy with them.
          if (w.rand(20) === 0) views.apply([entry('Mesh', MESH, w.meshFields(), undefined)]);
          const r = w.rand(12);
          if (r >= 10) {
            const kind = r === 10 ? 'MeshGateway' : 'MeshGatewayRoute';
            const remove = w.rand(4) === 0;
            views.apply([entry(kind, w.pick(['g1', 'g2']), remove ? undefined : w.gatewayFields(kind))]);
          } else if (r < 6) {
            // Sparse: often the policy written last again, so that classes meet a policy's bursts.
            const again = sparse && last !== undefined && w.rand(2) === 0;
            const kind = again ? last!.kind : w.pick(SIDECAR_KINDS);
            const name = again ? last!.name : w.pick(policyNames);
            last = { kind, name };
            const remove = w.rand(4) === 0;
            views.apply([entry(kind, name, remove ? undefined : w.policyFields(kind))]);
          } else {
            const remove = w.rand(5) === 0;
            const name = w.pick(proxyNames);
            const fields = name.startsWith('gw') ? w.gatewayProxyFields() : w.proxyFields();
            views.apply([entry('Dataplane', name, remove ? undefined : fields)]);
          }
          // The view is built on its first read: the first 100 writes go in through the build path.
          if (step < 100) continue;
          // Sparse: reads after every few writes only, so that classes apply several writes at once
          // (a policy's net change), and now and then the reverse index is read before any proxy.
          const checkAt = (step * 7 + seed) % 5;
          if (sparse && checkAt > 1) continue;
          const want = recompute(views);
          const checkProxies = (): void => {
            for (const name of proxyNames) {
              const got = view.proxy(MESH, name);
              const expected = want.proxies.get(name);
              if (!want.proxies.has(name)) {
                expectEqual(got, undefined, `${name} at step ${step}`);
                continue;
              }
              if (got?.kind === 'MeshGatewayDataplane') {
                expectEqual(got.view, expected, `${name} at step ${step}`);
                if (got.view) gatewayChecks++;
                continue;
              }
              expectEqual(got?.kind, 'SidecarDataplane');
              if (got?.kind !== 'SidecarDataplane') continue;
              expectEqual(
                got.cells.items(proxyInterfaces(got.networking)),
                expected,
                `${name} at step ${step}`,
              );
              slowChecks++;
            }
          };
          const checkAffected = (): void => {
            for (const kind of [...SIDECAR_KINDS, 'MeshGatewayRoute']) {
              for (const p of [...policyNames, 'g1', 'g2']) {
                const key = `${kind}/${p}`;
                const affected = view.affected(MESH, kind, p);
                expectEqual(affected, want.affected.get(key) ?? [], `${key} at step ${step}`);
                // Each affected proxy's attachments: the items of the recomputation that list the policy.
                for (const name of affected) {
                  const got = view.proxy(MESH, name);
                  if (got?.kind !== 'SidecarDataplane') continue;
                  const items = want.proxies.get(name) as SidecarItem[];
                  const expected = items
                    .filter((i) => i.matchedPolicies[kind]?.some((x) => x.name === p))
                    .map((i) => ({ type: i.type, name: i.name, service: i.service }));
                  expectEqual(
                    got.cells.attachmentsOf(kind, p, proxyInterfaces(got.networking)),
                    expected,
                    `${key} on ${name}`,
                  );
                  attachmentChecks++;
                }
              }
            }
          };
          if (sparse && checkAt === 1) {
            checkAffected();
            checkProxies();
          } else {
            checkProxies();
            checkAffected();
          }
        }
        expect(slowChecks).toBeGreaterThan(sparse ? 300 : 1000);
        expect(attachmentChecks).toBeGreaterThan(sparse ? 300 : 1000);
        expect(gatewayChecks).toBeGreaterThan(sparse ? 10 : 50);
      });
  }

  for (const seed of [11, 12, 13]) {
    it(`with proxyless clients' dialled services changing between writes, over several streams (seed ${seed})`, () => {
      const views = createResourceViews(registry);
      const view = createMatchView(views, gatewayMatcher);
      const w = world(seed);
      views.apply([entry('Mesh', MESH, { creationTime: 't' }, undefined)]);
      const policyNames = ['p1', 'p2', 'p3', 'p4'];
      const proxyNames = ['dp1', 'dp2', 'dp3', 'dp4', 'dp5', 'dp6'];
      const streams = ['s1', 's2'];
      /** What each proxy's streams dial, as told to the view. */
      const told = new Map<string, Map<string, string[]>>();
      const dialled = (name: string): string[] | undefined => {
        const byStream = told.get(name);
        if (!byStream || byStream.size === 0) return undefined;
        return [...new Set([...byStream.values()].flat())].sort();
      };
      const heard: string[] = [];
      view.onProxiesChanged((_mesh, change) => heard.push(...(change.all ? ['*'] : change.proxies)));
      let checks = 0;
      let moves = 0;
      for (let step = 0; step < 400; step++) {
        const r = w.rand(10);
        if (r < 4) {
          const name = w.pick(proxyNames);
          const stream = w.pick(streams);
          const byStream = told.get(name) ?? told.set(name, new Map()).get(name);
          const before = dialled(name);
          const classBefore = view.proxy(MESH, name);
          heard.length = 0;
          if (w.rand(4) === 0) {
            byStream?.delete(stream);
            view.setDialled(MESH, name, stream, undefined);
          } else {
            const services = Array.from({ length: w.rand(3) }, () => w.pick(['a', 'b', 'c', 'd', 'x']));
            byStream?.set(stream, services);
            view.setDialled(MESH, name, stream, services);
          }
          const after = view.proxy(MESH, name);
          // A change of a sidecar's dialled services names it (built-in gateways dial nothing).
          if (
            JSON.stringify(before ?? []) !== JSON.stringify(dialled(name) ?? []) &&
            after?.kind === 'SidecarDataplane'
          ) {
            expect(heard, `${name} at step ${step}`).toContain(name);
            if (
              classBefore?.kind === 'SidecarDataplane' &&
              after.kind === 'SidecarDataplane' &&
              classBefore.classKey !== after.classKey
            )
              moves++;
          }
        } else if (r < 7) {
          const kind = w.pick(SIDECAR_KINDS);
          const remove = w.rand(4) === 0;
          views.apply([entry(kind, w.pick(policyNames), remove ? undefined : w.policyFields(kind))]);
        } else {
          const remove = w.rand(5) === 0;
          views.apply([entry('Dataplane', w.pick(proxyNames), remove ? undefined : w.proxyFields())]);
        }
        if (step < 50) continue;
        const candidates: Record<string, PolicyResource[]> = {};
        for (const kind of MATCHED_KINDS)
          views.each(kind, MESH, (i) =>
            (candidates[kind] ??= []).push(i.resource as unknown as PolicyResource),
          );
        const prometheus = meshPrometheus(views.get('Mesh', undefined, MESH)?.resource);
        const inboundTags: Array<Record<string, string>> = [];
        views.each('Dataplane', MESH, (i) => {
          for (const ib of matchNetworking(i.resource, prometheus).inbound ?? []) inboundTags.push(ib.tags);
        });
        const tagSetsOf = (service: string) => {
          const distinct = new Map(
            inboundTags.filter((t) => t[SVC] === service).map((t) => [JSON.stringify(t), t]),
          );
          return [...distinct.values()];
        };
        const affected = new Map<string, string[]>();
        for (const name of proxyNames) {
          const item = views.get('Dataplane', MESH, name);
          const got = view.proxy(MESH, name);
          if (!item) {
            expectEqual(got, undefined, `${name} at step ${step}`);
            continue;
          }
          const networking = matchNetworking(item.resource, prometheus);
          if (isBuiltinGateway(networking)) continue;
          if (got?.kind !== 'SidecarDataplane') throw new Error(`${name} is a sidecar`);
          const services = dialled(name);
          expectEqual(
            got.interfaces,
            proxyInterfaces(networking, services),
            `${name}'s interfaces at step ${step}`,
          );
          const want = matchSidecar(networking, candidates, services, tagSetsOf);
          expectEqual(got.cells.items(got.interfaces), want, `${name} at step ${step}`);
          for (const i of want)
            for (const [kind, ps] of Object.entries(i.matchedPolicies))
              for (const p of ps) {
                const list =
                  affected.get(`${kind}/${p.name}`) ??
                  affected.set(`${kind}/${p.name}`, []).get(`${kind}/${p.name}`);
                if (list && !list.includes(name)) list.push(name);
              }
          checks++;
        }
        for (const kind of SIDECAR_KINDS)
          for (const p of policyNames)
            expectEqual(
              view.affected(MESH, kind, p),
              (affected.get(`${kind}/${p}`) ?? []).sort(),
              `${kind}/${p} at step ${step}`,
            );
      }
      expect(checks).toBeGreaterThan(1000);
      expect(moves).toBeGreaterThan(20);
    });
  }

  it('a policy write re-matches only the proxies its selectors reach', () => {
    const views = createResourceViews(registry);
    const view = createMatchView(views, noGateways);
    views.apply([entry('Mesh', MESH, { creationTime: 't' }, undefined)]);
    const proxy = (name: string, service: string) =>
      entry('Dataplane', name, {
        creationTime: 't',
        networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { [SVC]: service } }] },
      });
    views.apply([proxy('web-1', 'web'), proxy('db-1', 'db')]);
    view.proxy(MESH, 'web-1'); // builds the mesh
    const seen = new Set<string>();
    const db = view.proxy(MESH, 'db-1');
    if (db?.kind !== 'SidecarDataplane') throw new Error('db-1 is a sidecar');
    const places = db.cells.places.bind(db.cells);
    db.cells.places = (kind, p) => {
      seen.add(kind);
      return places(kind, p);
    };
    const tp = (name: string, service: string) =>
      entry('TrafficPermission', name, {
        creationTime: 't',
        sources: [{ match: { [SVC]: '*' } }],
        destinations: [{ match: { [SVC]: service } }],
      });
    // A class applies a write at its next read: after the read, only the reached one has placed it.
    views.apply([tp('allow-web', 'web')]);
    expect(view.affected(MESH, 'TrafficPermission', 'allow-web')).toEqual(['web-1']);
    expect(seen.size).toBe(0);
    views.apply([tp('allow-db', 'db')]);
    expect(seen.size).toBe(0);
    expect(view.affected(MESH, 'TrafficPermission', 'allow-db')).toEqual(['db-1']);
    expect(seen).toEqual(new Set(['TrafficPermission']));
  });

  it('a Mesh write that changes its Prometheus backend re-matches its proxies; other Mesh writes keep them', () => {
    const views = createResourceViews(registry);
    const view = createMatchView(views, noGateways);
    const mesh = (metrics?: Record<string, unknown>) =>
      entry('Mesh', MESH, { creationTime: 't', ...(metrics ? { metrics } : {}) }, undefined);
    const prom = (conf: Record<string, unknown>) => ({
      enabledBackend: 'prom',
      backends: [{ name: 'prom', type: 'prometheus', conf }],
    });
    views.apply([mesh()]);
    views.apply([
      entry('Dataplane', 'dp', {
        creationTime: 't',
        networking: { address: '1.1.1.1', inbound: [{ port: 80, tags: { [SVC]: 'web' } }] },
      }),
      entry('TrafficPermission', 'to-metrics', {
        creationTime: 't',
        sources: [{ match: { [SVC]: 'prometheus' } }],
        destinations: [{ match: { [SVC]: 'dataplane-metrics' } }],
      }),
    ]);
    const inbounds = () => {
      const p = view.proxy(MESH, 'dp');
      if (p?.kind !== 'SidecarDataplane') throw new Error('dp is a sidecar');
      return p.cells.items(proxyInterfaces(p.networking)).map((i) => i.name);
    };
    expect(inbounds()).toEqual([]);
    expect(view.affected(MESH, 'TrafficPermission', 'to-metrics')).toEqual([]);
    views.apply([mesh(prom({ port: 5680 }))]);
    expect(inbounds()).toEqual(['1.1.1.1:5680:5680']);
    expect(view.affected(MESH, 'TrafficPermission', 'to-metrics')).toEqual(['dp']);
    views.apply([mesh(prom({ port: 5681 }))]);
    expect(inbounds()).toEqual(['1.1.1.1:5681:5681']);
    // Another change of the mesh (mTLS here) keeps the matches as they are: no rebuild.
    const before = view.proxy(MESH, 'dp');
    views.apply([
      entry(
        'Mesh',
        MESH,
        {
          creationTime: 't',
          metrics: prom({ port: 5681 }),
          mtls: { backends: [{ name: 'ca', type: 'builtin' }] },
        },
        undefined,
      ),
    ]);
    const after = view.proxy(MESH, 'dp');
    expect(after?.kind === 'SidecarDataplane' && before?.kind === 'SidecarDataplane' && after.cells).toBe(
      before?.kind === 'SidecarDataplane' && before.cells,
    );
    views.apply([mesh()]);
    expect(inbounds()).toEqual([]);
    expect(view.affected(MESH, 'TrafficPermission', 'to-metrics')).toEqual([]);
  });

  it('forgets a deleted mesh and answers nothing for a mesh that does not exist', () => {
    const views = createResourceViews(registry);
    const view = createMatchView(views, noGateways);
    expect(view.proxy('nope', 'dp')).toBeUndefined();
    views.apply([entry('Mesh', MESH, { creationTime: 't' }, undefined)]);
    views.apply([
      entry('Dataplane', 'dp', {
        creationTime: 't',
        networking: { address: '1.1.1.1', inbound: [{ port: 1, tags: { [SVC]: 'a' } }] },
      }),
    ]);
    expect(view.proxy(MESH, 'dp')?.kind).toBe('SidecarDataplane');
    views.apply([entry('Dataplane', 'dp', undefined), entry('Mesh', MESH, undefined, undefined)]);
    expect(view.proxy(MESH, 'dp')).toBeUndefined();
  });

  it('buildAll reports when the build began and its wall time, at least its longest slice', async () => {
    const views = createResourceViews(registry);
    views.apply([entry('Mesh', MESH, { creationTime: 't' }, undefined)]);
    views.apply(
      Array.from({ length: 300 }, (_, i) =>
        entry('Dataplane', `dp-${i}`, {
          creationTime: 't',
          networking: { address: '1.1.1.1', inbound: [{ port: 1, tags: { [SVC]: `s-${i % 7}` } }] },
        }),
      ),
    );
    const view = createMatchView(views, noGateways);
    const before = Date.now();
    const report = await view.buildAll({ sliceMs: 1 });
    expect(report).toMatchObject({ meshes: 1, proxies: 300 });
    expect(report.startedAt).toBeGreaterThanOrEqual(before);
    expect(report.startedAt + report.ms).toBeLessThanOrEqual(Date.now() + 1);
    expect(report.ms).toBeGreaterThanOrEqual(report.longestSliceMs);
  });

  it('a build names no proxy: the first write after it names only the proxies it reaches', async () => {
    const views = createResourceViews(registry);
    views.apply([entry('Mesh', MESH, { creationTime: 't' }, undefined)]);
    views.apply(
      Array.from({ length: 50 }, (_, i) =>
        entry('Dataplane', `dp-${i}`, {
          creationTime: 't',
          networking: {
            address: '1.1.1.1',
            inbound: [{ port: 1, tags: { [SVC]: `s-${i % 5}` } }],
            outbound: [{ port: 10001, tags: { [SVC]: 'backend' } }],
          },
        }),
      ),
    );
    const view = createMatchView(views, noGateways);
    const heard: string[][] = [];
    view.onProxiesChanged((_mesh, change) => heard.push(change.all ? ['*'] : [...change.proxies].sort()));
    await view.buildAll({ sliceMs: 1 });
    expect(heard).toEqual([]);
    views.apply([
      entry('Timeout', 't-1', {
        creationTime: 't',
        sources: [{ match: { [SVC]: 's-1' } }],
        destinations: [{ match: { [SVC]: 'backend' } }],
        conf: { connectTimeout: '2s' },
      }),
    ]);
    const reached = Array.from({ length: 10 }, (_, k) => `dp-${1 + 5 * k}`).sort();
    expect(heard).toEqual([reached]);
  });

  // The build's steps: the 2 policies as candidates, the 120 proxies, the 2 reach notes, then the
  // 120 classes; with slices of 0 ms each step is a turn of its own, so these turns write while the
  // build loads the policies, loads the proxies, notes the reach and matches the classes.
  for (const writeAt of [1, 60, 123, 150, 200]) {
    it(`a sliced build yields between its steps, and writes at its turn ${writeAt} end as a full recomputation`, async () => {
      const views = createResourceViews(registry);
      views.apply([entry('Mesh', MESH, { creationTime: 't' }, undefined)]);
      const proxy = (i: number) =>
        entry('Dataplane', `dp-${i}`, {
          creationTime: 't',
          networking: {
            address: '1.1.1.1',
            inbound: [{ port: 1, tags: { [SVC]: `s-${i}` } }],
            outbound: [{ port: 10001, tags: { [SVC]: `s-${(i + 1) % 120}` } }],
          },
        });
      views.apply(Array.from({ length: 120 }, (_, i) => proxy(i)));
      const timeout = (name: string, source: string, seconds: number) =>
        entry('Timeout', name, {
          creationTime: 't',
          sources: [{ match: { [SVC]: source } }],
          destinations: [{ match: { [SVC]: '*' } }],
          conf: { connectTimeout: `${seconds}s` },
        });
      // `wide` reaches every class (each class checks it), `narrow` one (noted on it).
      views.apply([timeout('wide', '*', 1), timeout('narrow', 's-3', 2)]);
      const view = createMatchView(views, noGateways);
      let turns = 0;
      let building = true;
      const turn = (): void => {
        turns++;
        // A new version of the wide Timeout that reaches one class, the narrow one deleted, a
        // Timeout created, a class's last proxy deleted, a new proxy of a new class.
        if (turns === writeAt)
          views.apply([
            timeout('wide', 's-7', 3),
            entry('Timeout', 'narrow', undefined),
            timeout('late', 's-9', 4),
            entry('Dataplane', 'dp-5', undefined),
            proxy(200),
          ]);
        if (building) setImmediate(turn);
      };
      setImmediate(turn);
      await view.buildAll({ sliceMs: 0 });
      building = false;
      expect(turns).toBeGreaterThan(writeAt);
      const want = recompute(views);
      for (const name of [...want.proxies.keys()]) {
        const got = view.proxy(MESH, name);
        expect(got?.kind).toBe('SidecarDataplane');
        if (got?.kind !== 'SidecarDataplane') continue;
        expect(got.cells.items(proxyInterfaces(got.networking)), name).toEqual(want.proxies.get(name));
      }
      expect(view.proxy(MESH, 'dp-5')).toBeUndefined();
      for (const p of ['wide', 'narrow', 'late'])
        expect(view.affected(MESH, 'Timeout', p)).toEqual(want.affected.get(`Timeout/${p}`) ?? []);
      expect(view.affected(MESH, 'Timeout', 'late')).toEqual(['dp-9']);
    });
  }
});

describe('the match view previews policy writes: what a set of writes would change is what it then changes', () => {
  for (const seed of [11, 12, 13, 14]) {
    it(`for 150 random sets of one to three policy writes (seed ${seed})`, () => {
      const views = createResourceViews(registry);
      const view = createMatchView(views, gatewayMatcher);
      const w = world(seed);
      views.apply([entry('Mesh', MESH, { creationTime: 't' }, undefined)]);
      const policyNames = ['p1', 'p2', 'p3'];
      const proxyNames = ['dp1', 'dp2', 'dp3', 'dp4', 'dp5', 'dp6', 'gw1', 'gw2'];
      for (const name of [...proxyNames]) {
        const fields = name.startsWith('gw') ? w.gatewayProxyFields() : w.proxyFields();
        views.apply([entry('Dataplane', name, fields)]);
        // A replica at another address: one match class, its own inbound and outbound names.
        if (name.startsWith('dp')) {
          const networking = { ...(fields.networking as Record<string, unknown>), address: '10.9.9.9' };
          views.apply([entry('Dataplane', `${name}-b`, { ...fields, networking })]);
          proxyNames.push(`${name}-b`);
        }
      }
      /** Each proxy's attachments: its matched-policies items (a gateway: the policies its view lists). */
      const snapshot = (reads: Pick<typeof view, 'proxy'> = view) =>
        new Map(
          proxyNames.map((name): [string, { gateway: boolean; list: unknown[] }] => {
            const p = reads.proxy(MESH, name);
            if (p?.kind === 'SidecarDataplane')
              return [name, { gateway: false, list: p.cells.items(proxyInterfaces(p.networking)) }];
            const list =
              p?.kind === 'MeshGatewayDataplane' && p.view ? [...gatewayMatcher.policiesIn(p.view)] : [];
            return [name, { gateway: true, list }];
          }),
        );
      let changed = 0;
      let unchanged = 0;
      for (let step = 0; step < 150; step++) {
        const writes = Array.from({ length: 1 + w.rand(3) }, () => {
          const gatewayKind = w.rand(6) === 0;
          const kind = gatewayKind ? w.pick(['MeshGateway', 'MeshGatewayRoute']) : w.pick(SIDECAR_KINDS);
          const name = gatewayKind ? w.pick(['g1', 'g2']) : w.pick(policyNames);
          const stored = views.get(kind, MESH, name)?.resource as Record<string, unknown> | undefined;
          // Now and then a new version that sets something else and selects the same proxies.
          if (!gatewayKind && stored && w.rand(3) === 0) return entry(kind, name, resettled(stored, step));
          const fields =
            w.rand(4) === 0 ? undefined : gatewayKind ? w.gatewayFields(kind) : w.policyFields(kind);
          return entry(kind, name, fields);
        });
        const before = snapshot();
        const preview = view.preview(
          MESH,
          writes.map((e) => ({
            kind: e.kind,
            name: e.name,
            after: e.resource as unknown as PolicyResource | undefined,
          })),
        );
        // What the preview says, read before the writes are applied (it answers for the view as it was).
        const said = new Map<string, unknown>();
        expect(preview.names()).toHaveLength(preview.total);
        expect([...preview.names()].sort()).toEqual(preview.names());
        for (const name of preview.names()) {
          const p = preview.impact(name);
          if (!p) throw new Error(`no impact for ${name}`);
          if (p.kind !== 'gateway') {
            said.set(p.proxy, p.attachments);
            continue;
          }
          const gone = p.attachments.flatMap((a) => a.removed.map((n) => `${a.policyKind}/${n}`)).sort();
          const come = p.attachments.flatMap((a) => a.added.map((n) => `${a.policyKind}/${n}`)).sort();
          if (gone.length + come.length > 0) said.set(p.proxy, { gone, come });
        }
        // A preview changes nothing, and its state after is the view's after the writes.
        const foreseen = snapshot(preview.after);
        expect(snapshot()).toEqual(before);
        views.apply(writes);
        const after = snapshot();
        expect(foreseen).toEqual(after);
        // What the writes did, proxy by proxy, from the view's answers before and after.
        const did = new Map<string, unknown>();
        for (const name of proxyNames) {
          const was = before.get(name) as { gateway: boolean; list: unknown[] };
          const now = after.get(name) as { gateway: boolean; list: unknown[] };
          const [b, a] = [was.list, now.list];
          if (was.gateway) {
            const bs = new Set(b as string[]);
            const as = new Set(a as string[]);
            const gone = [...bs].filter((k) => !as.has(k));
            const come = [...as].filter((k) => !bs.has(k));
            if (gone.length + come.length > 0) did.set(name, { gone: gone.sort(), come: come.sort() });
            continue;
          }
          const diff = diffItems(b as SidecarItem[], a as SidecarItem[]);
          if (diff.length > 0) did.set(name, diff);
        }
        expect(
          said,
          `step ${step}: ${JSON.stringify(writes.map((e) => [e.kind, e.name, e.operation]))}`,
        ).toEqual(did);
        if (did.size > 0) changed++;
        else unchanged++;
      }
      // Worth something only if sets both change matches and leave them alone, often.
      expect(changed).toBeGreaterThan(30);
      expect(unchanged).toBeGreaterThan(10);
    });
  }
});
