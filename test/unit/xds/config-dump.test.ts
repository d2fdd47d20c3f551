import { describe, expect, it } from 'vitest';
import { configDump } from '../../../src/xds/config-dump.js';
import { proxylessConfig } from '../../../src/xds/proxyless/config.js';

describe('configDump (spec 2.20 proxy configuration dump)', () => {
  const served = proxylessConfig({
    networking: { address: '10.0.0.1', inbound: [{ port: 1, tags: { 'mesh.io/service': 'client' } }] },
    services: ['greeter'],
    candidates: {},
    endpoints: [{ address: '10.0.1.1', port: 50051, tags: { 'mesh.io/service': 'greeter' } }],
  });
  const dump = configDump({
    node: { id: 'default.client-1', cluster: 'client', adminPort: 9901 },
    versions: { lds: 12, cds: 12, eds: 13 },
    updated: { lds: '2026-11-26T10:00:00.000Z' },
    ...served,
    nacks: { cds: { message: 'bad cluster', time: '2026-11-26T10:00:01.000Z', version: 13 } },
    notes: { greeter: ['x'] },
  });

  it('starts with the bootstrap node (metadata dataplane.admin.port a string), then each type with versions', () => {
    expect(dump.configs.map((c) => c['@type'])).toEqual([
      'type.googleapis.com/envoy.admin.v3.BootstrapConfigDump',
      'type.googleapis.com/envoy.admin.v3.ListenersConfigDump',
      'type.googleapis.com/envoy.admin.v3.RoutesConfigDump',
      'type.googleapis.com/envoy.admin.v3.ClustersConfigDump',
      'type.googleapis.com/envoy.admin.v3.EndpointsConfigDump',
    ]);
    expect(dump.configs[0].bootstrap).toEqual({
      node: { id: 'default.client-1', cluster: 'client', metadata: { 'dataplane.admin.port': '9901' } },
    });
    type Listed = { name: string; active_state: { last_updated: string; listener: Record<string, unknown> } };
    const listeners = dump.configs[1] as { version_info: string; dynamic_listeners: Listed[] };
    expect(listeners.version_info).toBe('12');
    expect(listeners.dynamic_listeners[0].name).toBe('greeter');
    expect(listeners.dynamic_listeners[0].active_state.last_updated).toBe('2026-11-26T10:00:00.000Z');
    expect(listeners.dynamic_listeners[0].active_state.listener['@type']).toBe(
      'type.googleapis.com/envoy.config.listener.v3.Listener',
    );
  });

  it('shows the last NACK of a type as its error_state, and the notes', () => {
    const clusters = dump.configs[3] as { dynamic_active_clusters: Array<Record<string, unknown>> };
    expect(clusters.dynamic_active_clusters[0].error_state).toEqual({
      last_update_attempt: '2026-11-26T10:00:01.000Z',
      details: 'bad cluster',
      version_info: '13',
    });
    const endpoints = dump.configs[4] as { dynamic_endpoint_configs: Array<Record<string, unknown>> };
    expect(endpoints.dynamic_endpoint_configs[0].version_info).toBe('13');
    expect(endpoints.dynamic_endpoint_configs[0].error_state).toBeUndefined();
    expect(dump.notes).toEqual({ greeter: ['x'] });
  });
});
