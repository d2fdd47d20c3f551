import { describe, expect, it } from 'vitest';
import {
  DIALLED_KINDS,
  GATEWAY_DESTINATION_KINDS,
  GATEWAY_KIND,
  GATEWAY_ROUTE_KIND,
  INBOUND_ALL_KINDS,
  INBOUND_BEST_KINDS,
  LOGGED_KINDS,
  OUTBOUND_KINDS,
  POLICY_KINDS,
  proxylessNotes,
  proxylessSetting,
  ROUTE_KIND,
  ROUTED_KINDS,
  SETTING_KINDS,
  TARGET_REF_POLICY_KINDS,
  WHOLE_GATEWAY_KINDS,
  DATAPLANE_ALL_KINDS,
  DATAPLANE_BEST_KINDS,
} from '../../../src/policies/kind-sets.js';
import { defaultPolicies } from '../../../src/app/default-policies.js';
import { registry } from '../../../src/resources/registry.js';
import { validateBody } from '../../../src/resources/validate.js';

const meta = { mesh: 'm', creationTime: '2026-01-01T00:00:00Z', modificationTime: '2026-01-01T00:00:00Z' };

describe('policy kinds as units', () => {
  it('has one unit per policy kind of the registry, and none for other kinds', () => {
    const policies = registry.all.filter((d) => d.isPolicy).map((d) => d.kind);
    expect(POLICY_KINDS.map((u) => u.descriptor.kind).sort()).toEqual([...policies].sort());
    for (const u of POLICY_KINDS) expect(registry.find(u.descriptor.kind)).toBe(u.descriptor);
  });

  it('derives the reference’s attachment table (Kuma 2.0 matchers, the inspect view)', () => {
    expect(INBOUND_BEST_KINDS).toEqual(['TrafficPermission']);
    expect(INBOUND_ALL_KINDS).toEqual(['FaultInjection', 'RateLimit']);
    expect(OUTBOUND_KINDS).toEqual(['RateLimit', 'Timeout', 'TrafficRoute']);
    expect(ROUTED_KINDS).toEqual(['CircuitBreaker', 'HealthCheck', 'Retry']);
    expect(LOGGED_KINDS).toEqual(['TrafficLog']);
    expect(DATAPLANE_BEST_KINDS).toEqual(['ProxyTemplate', 'TrafficTrace']);
    expect(DATAPLANE_ALL_KINDS).toEqual(['VirtualOutbound']);
    expect(TARGET_REF_POLICY_KINDS).toEqual(['MeshAccessLog', 'MeshTrace', 'MeshTrafficPermission']);
    expect(DIALLED_KINDS).toEqual(['FaultInjection']);
    expect(ROUTE_KIND).toBe('TrafficRoute');
    expect([GATEWAY_KIND, GATEWAY_ROUTE_KIND]).toEqual(['MeshGateway', 'MeshGatewayRoute']);
    expect(GATEWAY_DESTINATION_KINDS).toEqual([
      'CircuitBreaker',
      'FaultInjection',
      'HealthCheck',
      'RateLimit',
      'Retry',
      'Timeout',
    ]);
    expect(WHOLE_GATEWAY_KINDS).toEqual(['TrafficLog', 'TrafficTrace']);
  });

  it('gives each proxyless setting from one kind, read from the typed spec', () => {
    expect(SETTING_KINDS).toEqual({
      route: 'TrafficRoute',
      timeout: 'Timeout',
      retry: 'Retry',
      circuitBreaker: 'CircuitBreaker',
      fault: 'FaultInjection',
    });
    const sd = {
      sources: [{ match: { 'mesh.io/service': 'a' } }],
      destinations: [{ match: { 'mesh.io/service': 'b' } }],
    };
    const timeout = {
      type: 'Timeout',
      name: 't',
      ...meta,
      ...sd,
      conf: { grpc: { maxStreamDuration: '2s' } },
    };
    expect(proxylessSetting('timeout', timeout)).toEqual({ grpc: { maxStreamDuration: '2s' } });
    // A kind gives only its own setting.
    expect(proxylessSetting('retry', timeout)).toBeUndefined();
    // A tag written without a value (YAML `version:`) is the empty value in a client route.
    const route = {
      type: 'TrafficRoute',
      name: 'r',
      ...meta,
      ...sd,
      conf: { split: [{ weight: 1, destination: { 'mesh.io/service': 'b', version: null } }] },
    };
    expect(proxylessSetting('route', route)).toEqual({
      split: [{ weight: 1, destination: { 'mesh.io/service': 'b', version: '' } }],
    });
  });

  it('says what cannot apply to a proxyless client, for the item it is listed on', () => {
    expect(proxylessNotes('outbound', ['Timeout', 'TrafficRoute', 'RateLimit'])).toEqual([
      'RateLimit cannot apply to a proxyless gRPC client: the server side limits calls',
    ]);
    expect(proxylessNotes('service', ['HealthCheck', 'Retry'])).toEqual([
      'HealthCheck cannot apply to a proxyless gRPC client: it has no active health checking',
    ]);
    expect(proxylessNotes('service', ['RateLimit'])).toEqual([]);
  });

  it('declares default policies that the kinds’ own schemas accept, in the order a new mesh writes them', () => {
    const defaults = defaultPolicies('m');
    expect(defaults.map((d) => `${d.kind}/${d.name}`)).toEqual([
      'TrafficPermission/allow-all-m',
      'TrafficRoute/route-all-m',
      'Timeout/timeout-all-m',
      'CircuitBreaker/circuit-breaker-all-m',
      'Retry/retry-all-m',
    ]);
    for (const d of defaults) {
      const desc = registry.find(d.kind);
      expect(desc, d.kind).toBeDefined();
      const result = validateBody(
        desc!,
        { type: d.kind, mesh: 'm', name: d.name, ...d.spec },
        { mesh: 'm', name: d.name },
      );
      expect(result.ok, `${d.kind}: ${JSON.stringify(result)}`).toBe(true);
    }
  });
});
