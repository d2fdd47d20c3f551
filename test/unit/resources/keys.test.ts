import { describe, expect, it } from 'vitest';
import {
  PROXY_LOCATION,
  dataplaneStatusKey,
  inboundLocation,
  itemKey,
  kindOfPolicyKey,
  kindOfResourceKey,
  locationIndex,
  locationPlace,
  locationService,
  meshNameKey,
  meshRange,
  nameInZone,
  nameOfPolicyKey,
  nodeId,
  nodeIdSplits,
  outboundLocation,
  policyKey,
  resourceKey,
  serviceLocation,
  servedKey,
  splitDataplaneStatusKey,
  splitMeshNameKey,
  splitServedKey,
  statusRowKey,
  tagIndexKey,
  zonedName,
} from '../../../src/resources/keys.js';

/** Every character a resource or mesh name may hold (resources/fragments.ts, RESOURCE_NAME). */
const NAME_CHARACTERS = [...'0123456789abcdefghijklmnopqrstuvwxyz._-'];
/** Every character a tag key or value may hold (resources/fragments.ts). */
const TAG_CHARACTERS = [...'0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ._:/-'];

const byCodeUnits = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

describe('mesh and name keys', () => {
  it('read back the mesh and name they were made of; a global kind has the empty mesh', () => {
    expect(splitMeshNameKey(meshNameKey('default', 'web-1.a'))).toEqual(['default', 'web-1.a']);
    expect(splitMeshNameKey(meshNameKey(undefined, 'default'))).toEqual(['', 'default']);
    expect(meshNameKey(undefined, 'x')).toBe(meshNameKey('', 'x'));
  });

  it('sort by mesh, then name: the separator sorts below every name character', () => {
    for (const c of NAME_CHARACTERS) {
      // A longer mesh comes after every name of the shorter one, whatever its names.
      expect(byCodeUnits(meshNameKey('a', 'zzz'), meshNameKey(`a${c}`, '0'))).toBe(-1);
    }
    const pairs: Array<[string, string]> = [
      ['a', 'b'],
      ['a-b', 'a'],
      ['a.b', 'a'],
      ['a', 'b.c'],
      ['ab', '0'],
      ['a', 'zz'],
    ];
    const sorted = [...pairs].sort(([m1, n1], [m2, n2]) => byCodeUnits(m1, m2) || byCodeUnits(n1, n2));
    expect(pairs.map(([m, n]) => meshNameKey(m, n)).sort(byCodeUnits)).toEqual(
      sorted.map(([m, n]) => meshNameKey(m, n)),
    );
  });

  it("a mesh's range holds its keys and no other mesh's", () => {
    const { from, to } = meshRange('a');
    const inside = (key: string): boolean => key >= from && key < to;
    expect(inside(meshNameKey('a', '0'))).toBe(true);
    expect(inside(meshNameKey('a', 'zzzz'))).toBe(true);
    expect(inside(meshNameKey(undefined, 'a'))).toBe(false);
    for (const c of NAME_CHARACTERS) expect(inside(meshNameKey(`a${c}`, '0'))).toBe(false);
  });
});

describe('resource keys', () => {
  it('read back their kind, and differ when any part does', () => {
    expect(kindOfResourceKey(resourceKey('TrafficRoute', 'default', 'r.1'))).toBe('TrafficRoute');
    expect(kindOfResourceKey(resourceKey('Mesh', undefined, 'default'))).toBe('Mesh');
    const keys = [
      resourceKey('Mesh', undefined, 'ab'),
      resourceKey('Mesh', 'a', 'b'),
      resourceKey('Mesh', 'ab', ''),
      resourceKey('MeshX', undefined, 'ab'),
      resourceKey('Mes', 'h', 'ab'),
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('sort by kind, then mesh, then name', () => {
    expect(byCodeUnits(resourceKey('A', 'zz', 'zz'), resourceKey('AB', undefined, '0'))).toBe(-1);
    expect(byCodeUnits(resourceKey('A', undefined, 'zz'), resourceKey('A', '0', '0'))).toBe(-1);
    for (const c of NAME_CHARACTERS) {
      expect(byCodeUnits(resourceKey('A', 'm', 'zz'), resourceKey('A', `m${c}`, '0'))).toBe(-1);
    }
  });
});

describe('two-part keys', () => {
  it('tag index keys differ wherever the key ends and the value begins', () => {
    expect(tagIndexKey('a', 'b.c')).not.toBe(tagIndexKey('a.b', 'c'));
    for (const c of TAG_CHARACTERS) {
      expect(byCodeUnits(tagIndexKey('k', 'zz'), tagIndexKey(`k${c}`, '0'))).toBe(-1);
    }
  });

  it('item and status row keys differ wherever the first part ends', () => {
    expect(itemKey('inbound', 'a.b')).not.toBe(itemKey('inbound.a', 'b'));
    expect(statusRowKey('dataplane', 'default/web')).not.toBe(statusRowKey('zone', 'default/web'));
  });

  it('served keys read back their type and name, and sort by type, then name', () => {
    const names = ['inbound:10.0.0.1:8080', 'outbound:web_default_svc_80', 'web.default'];
    for (const name of names) expect(splitServedKey(servedKey('Cluster', name))).toEqual(['Cluster', name]);
    const keys = [servedKey('ListenerX', 'a'), servedKey('Listener', 'z:z'), servedKey('Cluster', 'b')];
    expect(keys.sort(byCodeUnits).map(splitServedKey)).toEqual([
      ['Cluster', 'b'],
      ['Listener', 'z:z'],
      ['ListenerX', 'a'],
    ]);
  });
});

describe('keys that are stored or sent keep their spelling', () => {
  it('policy keys are `Kind/name` and read back both parts', () => {
    expect(policyKey('MeshTrafficPermission', 'allow-all.default')).toBe(
      'MeshTrafficPermission/allow-all.default',
    );
    const key = policyKey('MeshGatewayRoute', 'r/1');
    expect([kindOfPolicyKey(key), nameOfPolicyKey(key)]).toEqual(['MeshGatewayRoute', 'r/1']);
  });

  it('dataplane status keys are `<mesh>/<name>` and read back both parts', () => {
    expect(dataplaneStatusKey('default', 'east.web-1')).toBe('default/east.web-1');
    expect(splitDataplaneStatusKey(dataplaneStatusKey('a.b', 'c.d'))).toEqual(['a.b', 'c.d']);
  });

  it("zone-prefixed names are `<zone>.<name>`; a name reads back only from its own zone's", () => {
    expect(zonedName('east', 'web-1')).toBe('east.web-1');
    expect(nameInZone('east', zonedName('east', 'web.1'))).toBe('web.1');
    expect(nameInZone('east', zonedName('eastern', 'web'))).toBeUndefined();
    expect(nameInZone('east', 'east')).toBeUndefined();
    // Names may hold dots: `a.b` + `c` and `a` + `b.c` meet, and read back from either zone.
    expect(nameInZone('a', zonedName('a.b', 'c'))).toBe('b.c');
  });

  it('node ids are `<mesh>.<name>`, and a node id reads back as each split of it', () => {
    expect(nodeId('default', 'web-1')).toBe('default.web-1');
    expect(nodeIdSplits(nodeId('a.b', 'c'))).toEqual([
      { mesh: 'a', name: 'b.c' },
      { mesh: 'a.b', name: 'c' },
    ]);
  });
});

describe('locations', () => {
  it('read back their place and index or service', () => {
    for (const i of [0, 1, 12]) {
      expect([locationPlace(inboundLocation(i)), locationIndex(inboundLocation(i))]).toEqual(['i', i]);
      expect([locationPlace(outboundLocation(i)), locationIndex(outboundLocation(i))]).toEqual(['o', i]);
    }
    const service = 'web_default_svc_80';
    expect([locationPlace(serviceLocation(service)), locationService(serviceLocation(service))]).toEqual([
      's',
      service,
    ]);
    expect(locationPlace(PROXY_LOCATION)).toBe('d');
  });

  it('name no place, or no index, when they are not one', () => {
    for (const location of ['', 'x1', 'd0', 'I1']) expect(locationPlace(location)).toBeUndefined();
    for (const location of ['i-1', 'i1.5', 'ix', 'o1e99999']) expect(locationIndex(location)).toBeUndefined();
  });
});
