import { describe, expect, it } from 'vitest';
import type { LogEntry, WireResource } from '../../src/events/types.js';
import { createMeshSummaries } from '../../src/projections/mesh-summaries.js';
import { createResourceViews } from '../../src/projections/resource-views.js';
import { registry } from '../../src/resources/registry.js';
import { createStatusStore } from '../../src/status/status-store.js';

let rev = 0;
const entry = (kind: string, op: LogEntry['operation'], resource: WireResource): LogEntry => ({
  revision: ++rev,
  time: `2026-01-01T00:00:${String(rev % 60).padStart(2, '0')}.000Z`,
  kind,
  mesh: resource.mesh,
  name: resource.name,
  operation: op,
  ...(op === 'delete' ? { previous: resource } : { resource }),
  actor: { name: 'x', groups: [], address: 'x' },
  origin: 'local',
  prevHash: '',
  hash: '',
});

describe('mesh summaries kept incrementally', () => {
  it('equal a summary built from scratch after every random change (data planes, status, policies)', () => {
    let seed = 11;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const views = createResourceViews(registry);
    const status = createStatusStore();
    const live = createMeshSummaries({ registry, views, status });
    const T = '2026-01-01T00:00:00.000Z';
    views.apply([entry('Mesh', 'create', { type: 'Mesh', name: 'm', creationTime: T, modificationTime: T })]);
    live.get('m');
    const exists = new Set<string>();
    for (let step = 0; step < 400; step++) {
      const name = `dp-${rand(30)}`;
      const roll = rand(10);
      if (roll < 2 && exists.has(name)) {
        const item = views.get('Dataplane', 'm', name);
        views.apply([entry('Dataplane', 'delete', item?.resource as WireResource)]);
        exists.delete(name);
      } else if (roll < 4) {
        const connected = rand(2) === 0;
        status.setDataplaneInsight('m', name, {
          subscriptions: [
            {
              id: `s${step}`,
              connectTime: T,
              ...(connected ? {} : { disconnectTime: T }),
              version: { meshDp: { version: `1.${rand(3)}` }, proxy: { version: '1.34' } },
            },
          ],
          mTLS: { issuedBackend: 'ca-1', supportedBackends: ['ca-1'] },
        });
      } else if (roll < 5) {
        views.apply([
          entry('TrafficPermission', 'create', {
            type: 'TrafficPermission',
            mesh: 'm',
            name: `tp-${step}`,
            creationTime: T,
            modificationTime: T,
            sources: [],
            destinations: [],
          }),
        ]);
      } else {
        const gateway = rand(5) === 0;
        const r: WireResource = {
          type: 'Dataplane',
          mesh: 'm',
          name,
          creationTime: T,
          modificationTime: T,
          networking: gateway
            ? { address: '10.0.0.1', gateway: { tags: { 'mesh.io/service': `gw-${rand(2)}` } } }
            : {
                address: '10.0.0.1',
                inbound: [
                  { port: 80, tags: { 'mesh.io/service': `s-${rand(4)}` }, health: { ready: rand(3) !== 0 } },
                ],
              },
        };
        views.apply([entry('Dataplane', exists.has(name) ? 'update' : 'create', r)]);
        exists.add(name);
      }
      const fresh = createMeshSummaries({ registry, views, status }).get('m');
      const got = live.get('m');
      // Service creation times depend on history, not on the state: compare the rest.
      const strip = (s: typeof got) => ({
        insight: { ...s?.insight, modificationTime: undefined, lastSync: undefined },
        services: s?.services.map((x) => ({ ...x, creationTime: undefined, modificationTime: undefined })),
      });
      expect(strip(got)).toEqual(strip(fresh));
    }
    const final = live.get('m')?.insight as { dataplanes: { total: number } };
    expect(final.dataplanes.total).toBe(exists.size);
  });
});
