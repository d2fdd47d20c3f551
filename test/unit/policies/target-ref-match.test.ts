import { describe, expect, it } from 'vitest';
import type { Networking } from '../../../src/policies/proxy-interfaces.js';
import {
  compareByTargetRef,
  targetRefListeners,
  type TargetRefPolicy,
} from '../../../src/policies/target-ref-match.js';
import { SVC } from '../../helpers/policies.js';

const sidecar: Networking = {
  address: '10.0.0.1',
  inbound: [
    { port: 8080, tags: { [SVC]: 'web', version: 'v1' } },
    { port: 9090, address: '10.0.0.2', tags: { [SVC]: 'admin', version: 'v2' } },
  ],
  outbound: [{ port: 10001, tags: { [SVC]: 'db' } }],
};
const names = (ref: TargetRefPolicy['spec']['targetRef'], n: Networking = sidecar, gw?: object) =>
  targetRefListeners(ref, n, gw).map((l) => `${l.name} ${l.service}`);

describe('targetRefListeners (Kuma 2.0 inboundsSelectedByTargetRef)', () => {
  it('Mesh selects every inbound, named <address>:<port>', () => {
    expect(names({ kind: 'Mesh' })).toEqual(['10.0.0.1:8080 web', '10.0.0.2:9090 admin']);
  });
  it('MeshService selects the inbounds of that service', () => {
    expect(names({ kind: 'MeshService', name: 'admin' })).toEqual(['10.0.0.2:9090 admin']);
    expect(names({ kind: 'MeshService', name: 'db' })).toEqual([]);
  });
  it('MeshSubset and MeshServiceSubset match tags, `*` any value', () => {
    expect(names({ kind: 'MeshSubset', tags: { version: 'v1' } })).toEqual(['10.0.0.1:8080 web']);
    expect(names({ kind: 'MeshSubset', tags: { version: '*' } })).toHaveLength(2);
    expect(names({ kind: 'MeshServiceSubset', name: 'web', tags: { version: 'v2' } })).toEqual([]);
    expect(names({ kind: 'MeshServiceSubset', name: 'admin', tags: { version: 'v2' } })).toEqual([
      '10.0.0.2:9090 admin',
    ]);
  });
  it('a proxy without inbounds is selected by nothing, not even Mesh', () => {
    expect(names({ kind: 'Mesh' }, { address: '10.0.0.3', outbound: sidecar.outbound })).toEqual([]);
    const delegated = { address: '10.0.0.3', gateway: { tags: { [SVC]: 'edge' } } };
    expect(names({ kind: 'Mesh' }, delegated, { conf: { listeners: [{ port: 80 }] } })).toEqual([]);
  });
  it('a built-in gateway proxy is selected through its MeshGateway listeners with merged tags', () => {
    const builtin: Networking = {
      address: '10.0.0.4',
      gateway: { type: 'BUILTIN', tags: { [SVC]: 'edge' } },
    };
    const gateway = {
      tags: { zone: 'z1' },
      conf: {
        listeners: [
          { port: 80, tags: { port: 'http' } },
          { port: 443, tags: { port: 'https' } },
        ],
      },
    };
    expect(names({ kind: 'Mesh' }, builtin, gateway)).toEqual(['10.0.0.4:80 edge', '10.0.0.4:443 edge']);
    expect(names({ kind: 'MeshSubset', tags: { port: 'https', zone: 'z1' } }, builtin, gateway)).toEqual([
      '10.0.0.4:443 edge',
    ]);
    expect(names({ kind: 'MeshService', name: 'edge' }, builtin)).toEqual([]);
  });
  it('MeshGatewayRoute refs select no listener', () => {
    expect(names({ kind: 'MeshGatewayRoute', name: 'r' })).toEqual([]);
  });
});

describe('compareByTargetRef', () => {
  const p = (name: string, kind: string): TargetRefPolicy => ({
    type: 'MeshTrace',
    name,
    spec: { targetRef: { kind, name: kind === 'Mesh' ? undefined : 'x' } },
  });
  it('orders by ref kind, least specific first, then by name', () => {
    const sorted = [
      p('b', 'MeshService'),
      p('z', 'Mesh'),
      p('a', 'MeshServiceSubset'),
      p('a', 'MeshService'),
      p('c', 'MeshSubset'),
    ]
      .sort(compareByTargetRef)
      .map((x) => `${x.spec.targetRef.kind}/${x.name}`);
    expect(sorted).toEqual([
      'Mesh/z',
      'MeshSubset/c',
      'MeshService/a',
      'MeshService/b',
      'MeshServiceSubset/a',
    ]);
  });
});
