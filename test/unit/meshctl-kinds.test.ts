import { describe, expect, it } from 'vitest';
import { KIND_TABLE } from '../../src/meshctl/kind-table.js';
import { collectionPath, findKind, itemPath, kindNames, kindOfType } from '../../src/meshctl/kinds.js';
import { ALL_KINDS } from '../../src/resources/registry.js';

describe('meshctl kinds: the registry drives names, scope and paths', () => {
  it('has every kind of the registry, in its order', () => {
    expect(KIND_TABLE.map((k) => k.kind)).toEqual(ALL_KINDS.map((d) => d.kind));
  });

  it('finds each kind by its path, aliases, kind name (singular and plural), any case, with or without dashes', () => {
    for (const k of KIND_TABLE) {
      expect(findKind(k.path)?.kind).toBe(k.kind);
      for (const alias of k.aliases) expect(findKind(alias)?.kind).toBe(k.kind);
      expect(findKind(k.kind)?.kind).toBe(k.kind);
      expect(findKind(k.kind.toUpperCase())?.kind).toBe(k.kind);
    }
    expect(findKind('traffic-permission')?.kind).toBe('TrafficPermission');
    expect(findKind('trafficpermissions')?.kind).toBe('TrafficPermission');
    expect(findKind('retry')?.kind).toBe('Retry');
    expect(findKind('retries')?.kind).toBe('Retry');
    expect(findKind('dataplane')?.kind).toBe('Dataplane');
    expect(findKind('dataplanes+insights')?.kind).toBe('DataplaneOverview');
    expect(findKind('mesh')?.kind).toBe('Mesh');
    expect(findKind('meshes')?.kind).toBe('Mesh');
    expect(findKind('global-secret')?.kind).toBe('GlobalSecret');
    expect(findKind('nothing')).toBeUndefined();
  });

  it('gives no two kinds the same name', () => {
    const owner = new Map<string, string>();
    for (const k of KIND_TABLE) {
      for (const n of kindNames(k)) {
        expect([n, owner.get(n) ?? k.kind]).toEqual([n, k.kind]);
        owner.set(n, k.kind);
      }
    }
  });

  it('places a document by its type and whether it names a mesh (spec 2.10: a global secret is a Secret)', () => {
    expect(kindOfType('Secret', true)?.kind).toBe('Secret');
    expect(kindOfType('Secret', false)?.kind).toBe('GlobalSecret');
    expect(kindOfType('GlobalSecret', false)?.kind).toBe('GlobalSecret');
    expect(kindOfType('Mesh', false)?.kind).toBe('Mesh');
    expect(kindOfType('DataplaneOverview', true)).toBeUndefined();
    const tp = findKind('traffic-permissions');
    expect(tp && collectionPath(tp, 'a b')).toBe('/meshes/a%20b/traffic-permissions');
    const zone = findKind('zone');
    expect(zone && itemPath(zone, 'ignored', 'z/1')).toBe('/zones/z%2F1');
  });

  // scripts/build.mjs writes each tagSets function into dist by its source text.
  it('has tag-set functions that read only their argument, so that their source alone works', () => {
    const proxy = {
      networking: {
        address: '10.0.0.1',
        inbound: [{ port: 1, tags: { 'mesh.io/service': 'a', v: '1' } }],
        gateway: { tags: { 'mesh.io/service': 'gw' } },
      },
      tags: { 'mesh.io/service': 'ext' },
    };
    const withTags = KIND_TABLE.filter((k) => k.tagSets);
    expect(withTags.map((k) => k.kind)).toContain('Dataplane');
    for (const k of withTags) {
      const fn = k.tagSets as (r: Record<string, unknown>) => unknown;
      const copy = new Function(`return (${fn.toString()});`)() as typeof fn;
      expect(copy(proxy)).toEqual(fn(proxy));
      expect(copy({})).toEqual(fn({}));
    }
  });
});
