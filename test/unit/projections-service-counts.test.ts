import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/events/types.js';
import { createResourceViews } from '../../src/projections/resource-views.js';
import type { AvailableService } from '../../src/projections/service-counts.js';
import { trackServiceCounts } from '../../src/projections/service-counts.js';
import { registry } from '../../src/resources/registry.js';
import { dataplaneEntry } from '../helpers/entries.js';

const SERVICE = 'mesh.io/service';
const ZONE = 'mesh.io/zone';
const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** The services of `zone` by a full pass over every data plane: what the counts must always equal. */
function fullPass(views: ReturnType<typeof createResourceViews>, zone: string): AvailableService[] {
  const counts = new Map<string, AvailableService>();
  views.each('Dataplane', undefined, (item) => {
    if (item.origin !== zone || item.mesh === undefined) return;
    const inbound = (item.resource.networking as { inbound: Array<Record<string, unknown>> }).inbound;
    const seen = new Set<string>();
    for (const ib of inbound) {
      const t = ib.tags as Record<string, string> | undefined;
      if (!t?.[SERVICE] || (ib.health as { ready?: boolean } | undefined)?.ready === false) continue;
      const tags = Object.fromEntries(
        Object.entries({ ...t, [ZONE]: t[ZONE] ?? zone }).sort((a, b) => cmp(a[0], b[0])),
      );
      const key = `${item.mesh}\u0000${JSON.stringify(tags)}`;
      if (seen.has(key)) continue;
      seen.add(key);
      const found = counts.get(key);
      if (found) found.instances += 1;
      else counts.set(key, { tags, instances: 1, mesh: item.mesh });
    }
  });
  return [...counts.entries()].sort((a, b) => cmp(a[0], b[0])).map(([, v]) => v);
}

const entry = (
  op: 'create' | 'update' | 'delete',
  mesh: string,
  name: string,
  origin: string,
  inbound: Array<Record<string, unknown>>,
): LogEntry => dataplaneEntry(op, mesh, name, inbound, origin);

describe('service counts of the zones (ingress availableServices)', () => {
  it('equal a full pass over the data planes through creates, updates, moves between zones and deletes', () => {
    let seed = 11;
    const rand = (n: number): number => {
      // The high bits of the generator: its low bits repeat every few calls.
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return Math.floor((seed / 0x80000000) * n);
    };
    const zones = ['east', 'west', 'local'];
    const inboundOf = (): Array<Record<string, unknown>> =>
      Array.from({ length: rand(4) }, (_, i) => {
        const tags: Record<string, string> = { [SERVICE]: `svc-${rand(3)}` };
        if (rand(4) === 0) delete tags[SERVICE];
        if (rand(3) === 0) tags.version = `v${rand(2)}`;
        if (rand(8) === 0) tags[ZONE] = 'elsewhere';
        return { port: 1000 + i, tags, ...(rand(6) === 0 ? { health: { ready: false } } : {}) };
      });
    const views = createResourceViews(registry);
    // Half the data planes exist before the counts start: they must be counted too.
    const live = new Set<string>();
    const step = (): void => {
      const name = `dp-${rand(40)}`;
      const mesh = rand(5) === 0 ? 'other' : 'default';
      const key = `${mesh}/${name}`;
      const op = live.has(key) ? (rand(4) === 0 ? 'delete' : 'update') : 'create';
      if (op === 'delete') live.delete(key);
      else live.add(key);
      views.apply([entry(op, mesh, name, zones[rand(zones.length)], inboundOf())]);
    };
    for (let i = 0; i < 60; i++) step();
    const counts = trackServiceCounts(views);
    const seen = new Map(zones.map((z) => [z, 0]));
    for (let i = 0; i < 600; i++) {
      step();
      for (const zone of zones) {
        const got = counts.of(zone);
        expect(got).toEqual(fullPass(views, zone));
        seen.set(zone, Math.max(seen.get(zone) ?? 0, got.length));
      }
    }
    // Not a comparison of two empty lists: every zone offered several services along the way.
    for (const zone of zones) expect(seen.get(zone)).toBeGreaterThan(2);
    expect(counts.of('nowhere')).toEqual([]);
  });

  it('hands out copies: changing an answer does not change the counts', () => {
    const views = createResourceViews(registry);
    const counts = trackServiceCounts(views);
    views.apply([entry('create', 'default', 'a', 'east', [{ port: 1, tags: { [SERVICE]: 'web' } }])]);
    const first = counts.of('east');
    first[0].instances = 99;
    first[0].tags[SERVICE] = 'changed';
    expect(counts.of('east')).toEqual([
      { tags: { [SERVICE]: 'web', [ZONE]: 'east' }, instances: 1, mesh: 'default' },
    ]);
  });

  it('moves a data plane whose inbounds did not change to the zone of its last change', () => {
    const views = createResourceViews(registry);
    const counts = trackServiceCounts(views);
    const inbound = [{ port: 1, tags: { [SERVICE]: 'web' } }];
    views.apply([entry('create', 'default', 'a', 'east', inbound)]);
    views.apply([entry('update', 'default', 'a', 'west', inbound)]);
    expect(counts.of('east')).toEqual([]);
    expect(counts.of('west')).toEqual([
      { tags: { [SERVICE]: 'web', [ZONE]: 'west' }, instances: 1, mesh: 'default' },
    ]);
  });

  it('re-counts an update that changes only tag values, or only readiness, in the same zone', () => {
    const views = createResourceViews(registry);
    const counts = trackServiceCounts(views);
    const web = (version: string, ready = true) => [
      { port: 1, tags: { [SERVICE]: 'web', version }, ...(ready ? {} : { health: { ready: false } }) },
    ];
    views.apply([entry('create', 'default', 'a', 'east', web('v1'))]);
    views.apply([entry('update', 'default', 'a', 'east', web('v2'))]);
    expect(counts.of('east')).toEqual([
      { tags: { [SERVICE]: 'web', [ZONE]: 'east', version: 'v2' }, instances: 1, mesh: 'default' },
    ]);
    views.apply([entry('update', 'default', 'a', 'east', web('v2', false))]);
    expect(counts.of('east')).toEqual([]);
    expect(counts.of('east')).toEqual(fullPass(views, 'east'));
  });
});
