import { describe, expect, it } from 'vitest';
import { matchSidecar, type SidecarItem } from '../../../src/policies/match-sidecar.js';
import {
  matchNetworking,
  meshPrometheus,
  metricsInbound,
  type PrometheusConf,
} from '../../../src/policies/metrics-inbound.js';
import type { PolicyResource } from '../../../src/policies/policy-resource.js';
import { proxyInterfaces, type Networking } from '../../../src/policies/proxy-interfaces.js';
import { policy, sel, SVC } from '../../helpers/policies.js';

const prometheusMesh = (conf?: Record<string, unknown>, enabledBackend = 'prometheus-1') => ({
  type: 'Mesh',
  name: 'demo',
  metrics: {
    enabledBackend,
    backends: [{ name: 'prometheus-1', type: 'prometheus', ...(conf ? { conf } : {}) }],
  },
});
const backend01 = (metrics?: Record<string, unknown>) => ({
  type: 'Dataplane',
  mesh: 'demo',
  name: 'backend-01',
  networking: { address: '192.168.0.1', inbound: [{ port: 8080, tags: { [SVC]: 'backend' } }] },
  ...(metrics ? { metrics } : {}),
});
const inboundOf = (mesh: PrometheusConf | undefined, dp: Record<string, unknown>) => metricsInbound(mesh, dp);

// kumahq/kuma 2.0.0 pkg/core/resources/apis/mesh/dataplane_helpers_test.go, GetPrometheusConfig(),
// with the Mesh defaults Kuma 2.0 writes into a prometheus backend (mesh_defaulter.go) applied here.
describe('the metrics inbound of a proxy (Kuma 2.0 PrometheusInbound)', () => {
  const override = { type: 'prometheus', conf: { port: 8765, path: '/even-more-non-standard-path' } };

  it('none without a mesh, without metrics, or when the enabled backend is none', () => {
    expect(meshPrometheus(undefined)).toBeUndefined();
    expect(inboundOf(undefined, backend01(override))).toBeUndefined();
    expect(meshPrometheus({ type: 'Mesh', name: 'demo' })).toBeUndefined();
    expect(meshPrometheus(prometheusMesh({ port: 1234 }, ''))).toBeUndefined();
    expect(meshPrometheus({ type: 'Mesh', name: 'demo', metrics: { backends: [] } })).toBeUndefined();
  });

  it("the mesh backend's port, else 5670; its tags, else mesh.io/service: dataplane-metrics", () => {
    const mesh = meshPrometheus(prometheusMesh({ port: 1234, path: '/non-standard-path' }));
    expect(inboundOf(mesh, backend01())).toEqual({ port: 1234, tags: { [SVC]: 'dataplane-metrics' } });
    expect(inboundOf(meshPrometheus(prometheusMesh()), backend01())).toEqual({
      port: 5670,
      tags: { [SVC]: 'dataplane-metrics' },
    });
    // Tags of the mesh backend replace the default, service tag and all (as the reference's defaulter).
    expect(inboundOf(meshPrometheus(prometheusMesh({ tags: { env: 'prod' } })), backend01())).toEqual({
      port: 5670,
      tags: { env: 'prod' },
    });
  });

  it("the Dataplane's override: its port wins, its tags are merged over the mesh's", () => {
    const mesh = meshPrometheus(prometheusMesh({ port: 1234, path: '/non-standard-path' }));
    expect(inboundOf(mesh, backend01(override))).toEqual({
      port: 8765,
      tags: { [SVC]: 'dataplane-metrics' },
    });
    expect(
      inboundOf(
        mesh,
        backend01({ type: 'prometheus', conf: { tags: { team: 'a', [SVC]: 'metrics-of-a' } } }),
      ),
    ).toEqual({ port: 1234, tags: { [SVC]: 'metrics-of-a', team: 'a' } });
    expect(inboundOf(mesh, backend01({ type: 'prometheus' }))).toEqual({
      port: 1234,
      tags: { [SVC]: 'dataplane-metrics' },
    });
  });

  it('matchNetworking: the networking with the metrics inbound, except on a built-in gateway', () => {
    const mesh = meshPrometheus(prometheusMesh());
    expect(matchNetworking(backend01(), mesh)).toEqual({
      ...backend01().networking,
      metricsInbound: { port: 5670, tags: { [SVC]: 'dataplane-metrics' } },
    });
    expect(matchNetworking(backend01(), undefined)).toEqual(backend01().networking);
    const gateway = (type: string) => ({
      type: 'Dataplane',
      networking: { address: '10.0.0.9', gateway: { type, tags: { [SVC]: 'edge' } } },
    });
    expect(matchNetworking(gateway('BUILTIN'), mesh).metricsInbound).toBeUndefined();
    expect(matchNetworking(gateway('DELEGATED'), mesh).metricsInbound).toEqual({
      port: 5670,
      tags: { [SVC]: 'dataplane-metrics' },
    });
  });

  it("is named <address>:<port>:<port> after the proxy's address, has no service, and is no tag set of the proxy", () => {
    const networking: Networking = {
      address: '192.168.0.1',
      inbound: [{ port: 8080, address: '192.168.0.2', tags: { [SVC]: 'web' } }],
      metricsInbound: { port: 1234, tags: { [SVC]: 'dataplane-metrics' } },
    };
    const proxy = proxyInterfaces(networking);
    expect(proxy.inbounds.map((i) => [i.name, i.service])).toEqual([
      ['192.168.0.2:8080:8080', 'web'],
      ['192.168.0.1:1234:1234', ''],
    ]);
    expect(proxy.tagSets).toEqual([{ [SVC]: 'web' }]);
    expect(proxy.reachTagSets).toEqual([{ [SVC]: 'web' }, { [SVC]: 'dataplane-metrics' }]);
  });
});

/** Items as `type name: Kind=a,b` lines. */
const summary = (items: SidecarItem[]) =>
  items.map(
    (i) =>
      `${i.type} ${i.name}: ` +
      Object.entries(i.matchedPolicies)
        .map(([kind, ps]) => `${kind}=${ps.map((p) => p.name).join(',')}`)
        .join('; '),
  );
const byKind = (...policies: PolicyResource[]) => {
  const out: Record<string, PolicyResource[]> = {};
  for (const p of policies) (out[p.type] ??= []).push(p);
  return out;
};

describe('matchSidecar: the metrics inbound', () => {
  // kumahq/kuma 2.0.0 pkg/core/permissions/matcher_test.go, "2 inbounds dataplane with additional
  // service, 2 policies": the mesh's prometheus-1 on port 1234 with tags kuma.io/service: dataplane-metrics.
  const dp1: Networking = {
    address: '192.168.0.1',
    inbound: [
      {
        port: 8080,
        servicePort: 8081,
        tags: { [SVC]: 'web', version: '0.1', region: 'eu', 'mesh.io/protocol': 'http' },
      },
      {
        port: 8081,
        servicePort: 8082,
        tags: { [SVC]: 'web-api', version: '0.1.2', region: 'us', 'mesh.io/protocol': 'http' },
      },
    ],
    metricsInbound: { port: 1234, tags: { [SVC]: 'dataplane-metrics' } },
  };

  it('TrafficPermission: the best per inbound, the metrics inbound included', () => {
    const tp = (name: string, source: string, dest: Record<string, string>) =>
      policy('TrafficPermission', name, { sources: sel({ [SVC]: source }), destinations: sel(dest) });
    expect(
      summary(
        matchSidecar(
          dp1,
          byKind(
            tp('more-specific-kong-to-web', 'kong', { [SVC]: 'web', version: '0.1' }),
            tp('less-specific-kong-to-web', 'kong', { [SVC]: 'web' }),
            tp('metrics', 'prometheus', { [SVC]: 'dataplane-metrics' }),
          ),
        ),
      ),
    ).toEqual([
      'inbound 192.168.0.1:1234:1234: TrafficPermission=metrics',
      'inbound 192.168.0.1:8080:8081: TrafficPermission=more-specific-kong-to-web',
    ]);
  });

  it('FaultInjection and RateLimit attach to it; its tags are no source and select nothing', () => {
    const toMetrics = sel({ [SVC]: 'dataplane-metrics' });
    const fi = policy('FaultInjection', 'fi', { sources: sel({ [SVC]: '*' }), destinations: toMetrics });
    const rl = policy('RateLimit', 'rl', { sources: sel({ [SVC]: '*' }), destinations: toMetrics });
    const fromMetrics = policy('Timeout', 'from-metrics', {
      sources: toMetrics,
      destinations: sel({ [SVC]: '*' }),
    });
    const trace = policy('TrafficTrace', 'trace', { selectors: toMetrics });
    const withOutbound = { ...dp1, outbound: [{ port: 10001, tags: { [SVC]: 'db' } }] };
    expect(summary(matchSidecar(withOutbound, byKind(fi, rl, fromMetrics, trace)))).toEqual([
      'inbound 192.168.0.1:1234:1234: FaultInjection=fi; RateLimit=rl',
    ]);
  });
});
