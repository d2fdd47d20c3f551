import { describe, expect, it } from 'vitest';
import { ALL_KINDS, createRegistry, registry } from '../../../src/resources/registry.js';

// Spec 2.18 and the targetRef kinds of extra-policies.md, sorted by name.
const CATALOGUE = [
  ['CircuitBreaker', 'circuit-breakers', 'Circuit Breakers'],
  ['ExternalService', 'external-services', 'External Services'],
  ['FaultInjection', 'fault-injections', 'Fault Injections'],
  ['HealthCheck', 'health-checks', 'Health Checks'],
  ['MeshAccessLog', 'meshaccesslogs', 'Mesh Access Logs'],
  ['MeshGateway', 'meshgateways', 'Mesh Gateways'],
  ['MeshGatewayRoute', 'meshgatewayroutes', 'Mesh Gateway Routes'],
  ['MeshTrace', 'meshtraces', 'Mesh Traces'],
  ['MeshTrafficPermission', 'meshtrafficpermissions', 'Mesh Traffic Permissions'],
  ['ProxyTemplate', 'proxytemplates', 'Proxy Templates'],
  ['RateLimit', 'rate-limits', 'Rate Limits'],
  ['Retry', 'retries', 'Retries'],
  ['Timeout', 'timeouts', 'Timeouts'],
  ['TrafficLog', 'traffic-logs', 'Traffic Logs'],
  ['TrafficPermission', 'traffic-permissions', 'Traffic Permissions'],
  ['TrafficRoute', 'traffic-routes', 'Traffic Routes'],
  ['TrafficTrace', 'traffic-traces', 'Traffic Traces'],
  ['VirtualOutbound', 'virtual-outbounds', 'Virtual Outbounds'],
];

// Every kind named in spec 2.2–2.18 (2.10 names both Secret and Global Secret) and extra-policies.md.
const SPEC_KINDS = [
  'Mesh',
  'MeshInsight',
  'Dataplane',
  'DataplaneOverview',
  'HealthCheck',
  'TrafficPermission',
  'TrafficLog',
  'TrafficRoute',
  'FaultInjection',
  'Retry',
  'Timeout',
  'ProxyTemplate',
  'TrafficTrace',
  'ExternalService',
  'ServiceInsight',
  'Secret',
  'GlobalSecret',
  'Zone',
  'ZoneOverview',
  'ZoneIngress',
  'ZoneIngressOverview',
  'ZoneEgress',
  'ZoneEgressOverview',
  'GlobalInsights',
  ...CATALOGUE.map(([name]) => name),
];

const DERIVED = [
  'DataplaneOverview',
  'MeshInsight',
  'ServiceInsight',
  'GlobalInsights',
  'ZoneOverview',
  'ZoneIngressOverview',
  'ZoneEgressOverview',
];

describe('registry', () => {
  it('builds without duplicate kinds or paths', () => {
    expect(() => createRegistry(ALL_KINDS)).not.toThrow();
    expect(new Set(ALL_KINDS.map((d) => d.kind)).size).toBe(ALL_KINDS.length);
  });

  it('has unique URL segments across scopes, aliases and item aliases', () => {
    // Mesh-scoped kinds with crossMeshList are also served at the top level, so all segments share one space.
    const segments = ALL_KINDS.flatMap((d) => [d.path, ...d.aliases, ...d.itemAliases]);
    expect(new Set(segments).size).toBe(segments.length);
  });

  it('serves /policies as exactly the spec 2.18 table and the targetRef kinds, sorted by name', () => {
    expect(registry.catalogue.map((d) => [d.kind, d.path, d.catalogue?.displayName])).toEqual(CATALOGUE);
  });

  it('gives every catalogue entry a singular display name', () => {
    const singular = Object.fromEntries(
      registry.catalogue.map((d) => [d.kind, d.catalogue?.singularDisplayName]),
    );
    expect(singular).toMatchObject({
      CircuitBreaker: 'Circuit Breaker',
      ExternalService: 'External Service',
      HealthCheck: 'Health Check',
      MeshGatewayRoute: 'Mesh Gateway Route',
      ProxyTemplate: 'Proxy Template',
      Retry: 'Retry',
      Timeout: 'Timeout',
    });
    for (const d of registry.catalogue)
      expect(d.catalogue?.singularDisplayName).toMatch(/^[A-Z][A-Za-z ]+[a-z]$/);
  });

  it('declares every kind named in spec 2.2–2.18 and extra-policies.md', () => {
    for (const kind of SPEC_KINDS) expect(registry.find(kind), kind).toBeDefined();
    expect(registry.all.map((d) => d.kind).sort()).toEqual([...new Set(SPEC_KINDS)].sort());
  });

  it('marks derived kinds derived, outside the catalogue, with an empty strict spec', () => {
    expect(registry.derived.map((d) => d.kind).sort()).toEqual([...DERIVED].sort());
    for (const d of registry.derived) {
      expect(d.catalogue, d.kind).toBeUndefined();
      expect(d.isPolicy, d.kind).toBe(false);
      expect(d.spec.safeParse({}).success).toBe(true);
      expect(d.spec.safeParse({ x: 1 }).success).toBe(false);
    }
    expect(registry.stored.some((d) => d.derived)).toBe(false);
  });

  it('binds derived kinds to their projections and sources', () => {
    const info = Object.fromEntries(registry.derived.map((d) => [d.kind, d.derived]));
    expect(info).toEqual({
      DataplaneOverview: { projection: 'dataplaneOverview', source: 'Dataplane' },
      MeshInsight: { projection: 'meshInsight' },
      ServiceInsight: { projection: 'serviceInsight' },
      GlobalInsights: { projection: 'globalInsights' },
      ZoneOverview: { projection: 'zoneOverview', source: 'Zone' },
      ZoneIngressOverview: { projection: 'zoneIngressOverview', source: 'ZoneIngress' },
      ZoneEgressOverview: { projection: 'zoneEgressOverview', source: 'ZoneEgress' },
    });
    for (const d of registry.derived)
      if (d.derived?.source) expect(registry.find(d.derived.source)).toBeDefined();
  });

  it('counts policy kinds only as policies: the catalogue minus ExternalService', () => {
    const policies = registry.all.filter((d) => d.isPolicy).map((d) => d.kind);
    expect(policies.sort()).toEqual(
      registry.catalogue.map((d) => d.kind).filter((k) => k !== 'ExternalService'),
    );
    for (const d of registry.all.filter((x) => x.isPolicy)) {
      expect([d.scope, d.sync, d.crossMeshList], d.kind).toEqual(['mesh', 'down', true]);
    }
  });

  it('counts in MeshInsight.policies every catalogue kind: the policy kinds and ExternalService', () => {
    const counted = registry.all.filter((d) => d.countedInMeshInsight).map((d) => d.kind);
    expect(counted.sort()).toEqual(registry.catalogue.map((d) => d.kind).sort());
  });

  it('keys GlobalInsights by spec 2.16 and decisions §2', () => {
    const keys = registry.all.filter((d) => d.globalInsightsKey).map((d) => [d.kind, d.globalInsightsKey]);
    expect(Object.fromEntries(keys)).toEqual({
      Mesh: 'Mesh',
      GlobalSecret: 'GlobalSecret',
      Zone: 'Zone',
      ZoneIngress: 'ZoneIngress',
      ZoneEgress: 'ZoneEgress',
    });
  });

  it('has the aliases of the spec irregularities (spec 4.4, 4.5, 4.7)', () => {
    expect(registry.get('TrafficPermission').aliases).toEqual(['trafficpermissions']);
    expect(registry.get('DataplaneOverview').aliases).toEqual(['dataplane+insights']);
    expect(registry.get('ZoneIngress').itemAliases).toEqual(['zone-ingress']);
    const withAliases = registry.all
      .filter((d) => d.aliases.length + d.itemAliases.length > 0)
      .map((d) => d.kind);
    expect(withAliases.sort()).toEqual(['DataplaneOverview', 'TrafficPermission', 'ZoneIngress']);
  });

  it('declares scope, sync and ownership of the stored kinds', () => {
    const row = (kind: string) => {
      const d = registry.get(kind);
      return [d.scope, d.path, d.sync, d.zoneOwned, d.crossMeshList, d.secret];
    };
    expect(row('Mesh')).toEqual(['global', 'meshes', 'down', false, false, false]);
    expect(row('Dataplane')).toEqual(['mesh', 'dataplanes', 'up', true, true, false]);
    expect(row('ExternalService')).toEqual(['mesh', 'external-services', 'down', false, true, false]);
    expect(row('Secret')).toEqual(['mesh', 'secrets', 'down', false, true, true]);
    expect(row('GlobalSecret')).toEqual(['global', 'global-secrets', 'down', false, false, true]);
    expect(row('Zone')).toEqual(['global', 'zones', 'none', false, false, false]);
    expect(row('ZoneIngress')).toEqual(['global', 'zone-ingresses', 'up', true, false, false]);
    expect(row('ZoneEgress')).toEqual(['global', 'zoneegresses', 'up', true, false, false]);
    expect(registry.get('GlobalInsights').singleton).toBe(true);
    expect(registry.all.filter((d) => d.singleton).map((d) => d.kind)).toEqual(['GlobalInsights']);
  });

  it('writes a global secret as Secret and accepts both names (spec 2.10)', () => {
    const d = registry.get('GlobalSecret');
    expect([d.wireType, d.acceptedTypes]).toEqual(['Secret', ['Secret', 'GlobalSecret']]);
    expect(registry.get('Secret').acceptedTypes).toEqual(['Secret']);
  });
});
