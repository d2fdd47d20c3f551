import { describe, expect, it } from 'vitest';
import type { Current, DecideState } from '../../../src/app/decide.js';
import { toWire } from '../../../src/app/decide.js';
import type { SetCommand } from '../../../src/app/decide-set.js';
import { SetItemError, decideSet } from '../../../src/app/decide-set.js';
import type { Actor, WireResource } from '../../../src/events/types.js';
import { registry } from '../../../src/resources/registry.js';

const actor: Actor = { name: 'alice', groups: [], address: '127.0.0.1' };
const T0 = '2026-01-01T00:00:00.000Z';
const all = [{ match: { 'mesh.io/service': '*' } }];
const options = { skipDefaultPolicies: true };

/** A state holding the `default` mesh, a policy in it at revision 5 and a data plane at 6. */
function state(): DecideState {
  const map = new Map<string, Current>();
  const add = (
    kind: string,
    mesh: string | undefined,
    name: string,
    spec: Record<string, unknown>,
    revision: number,
  ) =>
    map.set(`${kind}/${mesh ?? ''}/${name}`, {
      resource: toWire(registry.get(kind), mesh, name, T0, T0, spec) as WireResource,
      revision,
      origin: 'local',
    });
  add('Mesh', undefined, 'default', {}, 1);
  add('TrafficPermission', 'default', 'tp', { sources: all, destinations: all }, 5);
  add('Dataplane', 'shop', 'web-1', { networking: { address: '10.0.0.1', inbound: [] } }, 6);
  return {
    get: (kind, mesh, name) => map.get(`${kind}/${mesh ?? ''}/${name}`),
    inMesh: (mesh) =>
      [...map.entries()]
        .filter(([, c]) => c.resource.mesh === mesh)
        .map(([k, c]) => ({ kind: k.split('/')[0], name: c.resource.name, current: c })),
  };
}

const upsert = (
  kind: string,
  mesh: string | undefined,
  name: string,
  spec: Record<string, unknown>,
  extra = {},
): SetCommand => ({
  op: 'upsert',
  kind,
  mesh,
  name,
  spec,
  actor,
  origin: 'local',
  now: T0,
  ...extra,
});
const del = (kind: string, mesh: string | undefined, name: string, extra = {}): SetCommand => ({
  op: 'delete',
  kind,
  mesh,
  name,
  actor,
  origin: 'local',
  ...extra,
});
const tpSpec = (service: string) => ({
  sources: all,
  destinations: [{ match: { 'mesh.io/service': service } }],
});

describe('decideSet', () => {
  it('decides each item on the state the items before it left', () => {
    const d = decideSet(
      registry,
      [
        upsert('Mesh', undefined, 'shop', {}),
        upsert('TrafficPermission', 'shop', 'a', tpSpec('web')),
        upsert('TrafficPermission', 'shop', 'a', tpSpec('api')),
        upsert('TrafficPermission', 'shop', 'a', tpSpec('api')),
        del('TrafficPermission', 'default', 'tp', { ifMatch: '"5"' }),
        upsert('TrafficPermission', 'default', 'tp', tpSpec('db'), { ifNoneMatch: '*' }),
      ],
      state(),
      options,
    );
    expect(d.events.map((e) => [e.operation, e.kind, e.mesh, e.name])).toEqual([
      ['create', 'Mesh', undefined, 'shop'],
      ['create', 'TrafficPermission', 'shop', 'a'],
      ['update', 'TrafficPermission', 'shop', 'a'],
      ['delete', 'TrafficPermission', 'default', 'tp'],
      ['create', 'TrafficPermission', 'default', 'tp'],
    ]);
    expect(d.items.map((i) => [i.operation, i.offset, i.count])).toEqual([
      ['create', 0, 1],
      ['create', 1, 1],
      ['update', 2, 1],
      ['unchanged', 3, 0],
      ['delete', 3, 1],
      ['create', 4, 1],
    ]);
    // The unchanged item has the revision of the earlier item's event (its offset in the set).
    expect(d.items[3].revisionAtOffset).toBe(2);
  });

  it('a mesh delete sees what earlier items did to the mesh (its proxy deleted first)', () => {
    const refused = () =>
      decideSet(
        registry,
        [upsert('Mesh', undefined, 'shop', {}), del('Mesh', undefined, 'shop')],
        state(),
        options,
      );
    expect(refused).toThrow(/item 1 \(Mesh shop\): mesh "shop" still has 1 data plane proxy/);
    const d = decideSet(
      registry,
      [
        upsert('Mesh', undefined, 'shop', {}),
        upsert('TrafficPermission', 'shop', 'a', tpSpec('web')),
        del('Dataplane', 'shop', 'web-1'),
        del('Mesh', undefined, 'shop'),
      ],
      state(),
      options,
    );
    // The mesh delete takes the policy the set created with it.
    expect(d.events.slice(3).map((e) => [e.operation, e.kind, e.name])).toEqual([
      ['delete', 'TrafficPermission', 'a'],
      ['delete', 'Mesh', 'shop'],
    ]);
  });

  it('the first refusal names the item, with causes prefixed by its index', () => {
    let error: unknown;
    try {
      decideSet(
        registry,
        [
          upsert('TrafficPermission', 'default', 'x', tpSpec('web')),
          upsert('TrafficPermission', 'nowhere', 'y', tpSpec('web')),
          del('TrafficPermission', 'default', 'missing'),
        ],
        state(),
        options,
      );
    } catch (err) {
      error = err;
    }
    expect(error).toBeInstanceOf(SetItemError);
    const e = error as SetItemError;
    expect(e.item).toEqual({ index: 1, kind: 'TrafficPermission', mesh: 'nowhere', name: 'y' });
    expect(e.code).toBe('INVALID_BODY');
    expect(e.causes).toEqual([{ field: 'items[1].mesh', message: 'Mesh is not found' }]);
  });

  it('an If-Match of a later item cannot name a revision the set has not been given yet', () => {
    expect(() =>
      decideSet(
        registry,
        [
          upsert('TrafficPermission', 'default', 'tp', tpSpec('a')),
          upsert('TrafficPermission', 'default', 'tp', tpSpec('b'), { ifMatch: '"5"' }),
        ],
        state(),
        options,
      ),
    ).toThrow(/item 1 .*If-Match "5" does not match/);
  });
});
