import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane } from '../helpers/control-plane.js';

const N = 57;

describe('pagination walk (decisions §5)', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane({ MESH_DEFAULTS_SKIP_DEFAULT_POLICIES: 'true' });
    await Promise.all(
      Array.from({ length: N }, (_, i) =>
        cp.app.inject({
          method: 'PUT',
          url: `/meshes/default/dataplanes/dp-${i}`,
          payload: {
            type: 'Dataplane',
            mesh: 'default',
            name: `dp-${i}`,
            networking: {
              address: '10.1.0.1',
              inbound: [
                { port: 1000 + i, tags: { 'mesh.io/service': i % 3 === 0 ? 'red' : 'blue', idx: String(i) } },
              ],
            },
          },
        }),
      ),
    );
  });
  afterAll(() => cp.close());

  const walk = async (url: string): Promise<{ names: string[]; pages: number; totals: Set<number> }> => {
    const names: string[] = [];
    const totals = new Set<number>();
    let next: string | null = url;
    let pages = 0;
    while (next) {
      const u = new URL(next, 'http://localhost');
      const res = await cp.app.inject({ method: 'GET', url: `${u.pathname}${u.search}` });
      expect(res.statusCode).toBe(200);
      const body = res.json() as { total: number; items: Array<{ name: string }>; next: string | null };
      names.push(...body.items.map((i) => i.name));
      totals.add(body.total);
      next = body.next;
      pages++;
      if (next)
        expect(next.startsWith('http://localhost:80/') || next.startsWith('http://localhost/')).toBe(true);
    }
    return { names, pages, totals };
  };

  it('following next to the end yields the whole sorted list exactly once', async () => {
    const whole = (
      await cp.app.inject({ method: 'GET', url: '/meshes/default/dataplanes?size=1000' })
    ).json() as {
      items: Array<{ name: string }>;
      total: number;
    };
    expect(whole.total).toBe(N);
    const expected = whole.items.map((i) => i.name);
    expect(expected).toEqual([...expected].sort());
    const { names, pages, totals } = await walk('/meshes/default/dataplanes?size=10');
    expect(names).toEqual(expected);
    expect(pages).toBe(6);
    expect([...totals]).toEqual([N]);
  });

  it('filters page too, and total counts every match', async () => {
    const red = Array.from({ length: N }, (_, i) => i)
      .filter((i) => i % 3 === 0)
      .map((i) => `dp-${i}`)
      .sort();
    const { names, totals } = await walk('/meshes/default/dataplanes?size=4&tag=mesh.io/service:red');
    expect(names).toEqual(red);
    expect([...totals]).toEqual([red.length]);
    const byName = await walk('/meshes/default/dataplanes+insights?size=3&name=dp-1');
    expect(byName.names).toEqual(
      Array.from({ length: N }, (_, i) => `dp-${i}`)
        .filter((n) => n.includes('dp-1'))
        .sort(),
    );
  });

  it('next keeps the other parameters, with keys sorted', async () => {
    const res = await cp.app.inject({
      method: 'GET',
      url: '/meshes/default/dataplanes?tag=mesh.io/service:blue&size=5&name=dp',
    });
    const body = res.json() as { next: string };
    const u = new URL(body.next);
    expect([...u.searchParams.keys()]).toEqual(['name', 'offset', 'size', 'tag']);
    expect(u.searchParams.get('offset')).toBe('5');
  });

  it('an offset past the end gives an empty page with next null', async () => {
    const res = await cp.app.inject({ method: 'GET', url: '/meshes/default/dataplanes?offset=500' });
    expect(res.json()).toMatchObject({ total: N, items: [], next: null });
  });

  it.each([
    ['size=0', 'size'],
    ['size=1001', 'size'],
    ['size=abc', 'size'],
    ['offset=-1', 'offset'],
    ['offset=1.5', 'offset'],
    ['offset=abc', 'offset'],
    ['tag=nocolon', 'tag'],
  ])('rejects %s with a cause on %s', async (query, field) => {
    const res = await cp.app.inject({ method: 'GET', url: `/meshes/default/dataplanes?${query}` });
    expect(res.statusCode).toBe(400);
    expect(res.json().causes).toEqual([expect.objectContaining({ field })]);
  });
});
