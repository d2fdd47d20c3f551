import { describe, expect, it } from 'vitest';
import { createMemoryLog } from '../../src/events/memory-log.js';
import type { EventInput, LogEntry, WireResource } from '../../src/events/types.js';
import { loadLatest } from '../../src/projections/load-latest.js';
import { createMeshSummaries } from '../../src/projections/mesh-summaries.js';
import { createResourceViews } from '../../src/projections/resource-views.js';
import { registry } from '../../src/resources/registry.js';
import { createStatusStore } from '../../src/status/status-store.js';

const actor = { name: 'a', groups: [], address: 'x' };

describe('start-up reads each resource’s last change only', () => {
  it('leaves the views, pages and insights exactly as a full replay in order', async () => {
    let clock = Date.parse('2026-01-01T00:00:00.000Z');
    const log = createMemoryLog({ now: () => new Date((clock += 1000)) });
    await log.open();
    let seed = 5;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const live = new Map<string, WireResource>();
    const T = '2026-01-01T00:00:00.000Z';
    for (const mesh of ['m1', 'm2']) {
      const r: WireResource = { type: 'Mesh', name: mesh, creationTime: T, modificationTime: T };
      await log.append([
        { kind: 'Mesh', name: mesh, operation: 'create', resource: r, actor, origin: 'local' },
      ]).durable;
    }
    for (let step = 0; step < 1500; step++) {
      const mesh = `m${1 + rand(2)}`;
      const kind = rand(4) === 0 ? 'TrafficPermission' : 'Dataplane';
      const name = `${kind === 'Dataplane' ? 'dp' : 'tp'}-${rand(60)}`;
      const key = `${kind}/${mesh}/${name}`;
      let input: EventInput;
      if (live.has(key) && rand(3) === 0) {
        input = { kind, mesh, name, operation: 'delete', previous: live.get(key), actor, origin: 'local' };
        live.delete(key);
      } else {
        const resource: WireResource =
          kind === 'Dataplane'
            ? {
                type: kind,
                mesh,
                name,
                creationTime: T,
                modificationTime: T,
                networking: {
                  address: '10.0.0.1',
                  inbound: [{ port: 80, tags: { 'mesh.io/service': `s${rand(5)}`, team: `t${rand(3)}` } }],
                },
              }
            : { type: kind, mesh, name, creationTime: T, modificationTime: T, sources: [], destinations: [] };
        input = {
          kind,
          mesh,
          name,
          operation: live.has(key) ? 'update' : 'create',
          resource,
          actor,
          origin: rand(5) === 0 ? 'zone-1' : 'local',
        };
        live.set(key, resource);
      }
      await log.append([input]).durable;
    }
    const head = log.head();

    const build = () => {
      const views = createResourceViews(registry);
      const summaries = createMeshSummaries({ registry, views, status: createStatusStore() });
      return { views, summaries };
    };
    const inOrder = build();
    const all: LogEntry[] = [];
    for await (const e of log.read(1)) all.push(e);
    inOrder.views.apply(all);
    const latest = build();
    expect(await loadLatest(log, latest.views, { to: head })).toBe(head);

    expect(latest.views.revision()).toBe(inOrder.views.revision());
    const dump = (v: typeof inOrder.views) =>
      registry.stored.flatMap((d) => {
        const out: unknown[] = [];
        v.each(d.kind, undefined, (i) => out.push([i.key, i.resource, i.revision, i.origin]));
        return out;
      });
    expect(dump(latest.views)).toEqual(dump(inOrder.views));
    for (const mesh of ['m1', 'm2']) {
      expect(
        latest.views
          .page('Dataplane', { mesh, offset: 2, size: 5, tags: [['team', 't1']] })
          .items.map((i) => i.key),
      ).toEqual(
        inOrder.views
          .page('Dataplane', { mesh, offset: 2, size: 5, tags: [['team', 't1']] })
          .items.map((i) => i.key),
      );
      expect(latest.summaries.get(mesh)).toEqual(inOrder.summaries.get(mesh));
    }
  });
});
