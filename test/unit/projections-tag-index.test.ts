import { describe, expect, it } from 'vitest';
import type { LogEntry } from '../../src/events/types.js';
import { createResourceViews, tagSetsMatch } from '../../src/projections/resource-views.js';
import { registry } from '../../src/resources/registry.js';
import { dataplaneEntry } from '../helpers/entries.js';

const entry = (
  op: 'create' | 'update' | 'delete',
  mesh: string,
  name: string,
  tags: Array<Record<string, string>>,
): LogEntry =>
  dataplaneEntry(
    op,
    mesh,
    name,
    tags.map((t, i) => ({ port: 1000 + i, tags: t })),
  );

describe('tag index of the views', () => {
  it('pages tag filters exactly like a full scan, through creates, updates and deletes', () => {
    let seed = 7;
    const rand = (n: number) => {
      seed = (seed * 1103515245 + 12345) & 0x7fffffff;
      return seed % n;
    };
    const views = createResourceViews(registry);
    const model = new Map<string, { mesh: string; name: string; tags: Array<Record<string, string>> }>();
    for (let step = 0; step < 3000; step++) {
      const mesh = `m${rand(3)}`;
      const name = `dp-${rand(200)}`;
      const key = `${mesh}/${name}`;
      if (model.has(key) && rand(4) === 0) {
        views.apply([entry('delete', mesh, name, [])]);
        model.delete(key);
        continue;
      }
      const tags = Array.from({ length: 1 + rand(2) }, () => ({
        'mesh.io/service': `s${rand(5)}`,
        team: `t${rand(10)}`,
      }));
      views.apply([entry(model.has(key) ? 'update' : 'create', mesh, name, tags)]);
      model.set(key, { mesh, name, tags });
    }
    const filters: Array<Array<[string, string]>> = [
      [['team', 't3']],
      [
        ['mesh.io/service', 's1'],
        ['team', 't2'],
      ],
      [
        ['mesh.io/service', '*'],
        ['team', 't9'],
      ],
      [['mesh.io/service', '*']],
      [['team', 'nope']],
    ];
    for (const mesh of [undefined, 'm0', 'm2']) {
      for (const f of filters) {
        const expected = [...model.values()]
          .filter((r) => (mesh === undefined || r.mesh === mesh) && tagSetsMatch(r.tags, f))
          .sort((a, b) => (a.mesh === b.mesh ? (a.name < b.name ? -1 : 1) : a.mesh < b.mesh ? -1 : 1))
          .map((r) => `${r.mesh}/${r.name}`);
        const page = views.page('Dataplane', { mesh, offset: 3, size: 7, tags: f });
        expect(page.total).toBe(expected.length);
        expect(page.items.map((i) => `${i.mesh}/${i.name}`)).toEqual(expected.slice(3, 10));
      }
    }
  });
});
