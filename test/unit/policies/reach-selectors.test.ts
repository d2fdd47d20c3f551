import { describe, expect, it } from 'vitest';
import { matchSidecar } from '../../../src/policies/match-sidecar.js';
import type { Networking } from '../../../src/policies/proxy-interfaces.js';
import { reachSelectors } from '../../../src/policies/reach-selectors.js';
import { tagSelectorMatches } from '../../../src/policies/tag-selector.js';
import { at, policy, sel, SVC } from '../../helpers/policies.js';

describe('reachSelectors', () => {
  const fields = {
    sources: sel({ [SVC]: 'src' }),
    destinations: sel({ [SVC]: 'dst' }),
    selectors: sel({ [SVC]: 'sel' }),
  };
  const reach = (type: string) => reachSelectors(policy(type, 'p', fields))?.map((s) => s.match[SVC]);

  it('names the list that must match the proxy, per kind', () => {
    expect(reach('TrafficPermission')).toEqual(['dst']);
    // Inbounds by destination, and the proxyless clients that dial them by source.
    expect(reach('FaultInjection')).toEqual(['dst', 'src']);
    expect(reach('RateLimit')).toEqual(['dst', 'src']);
    expect(reach('Timeout')).toEqual(['src']);
    expect(reach('TrafficLog')).toEqual(['src']);
    expect(reach('HealthCheck')).toEqual(['src']);
    expect(reach('ProxyTemplate')).toEqual(['sel']);
    expect(reach('TrafficTrace')).toEqual(['sel']);
    expect(reach('VirtualOutbound')).toEqual(['sel']);
    expect(reach('MeshGateway')).toBeUndefined();
  });

  it('gives a targetRef policy its ref tags as one selector; Mesh reaches every proxy', () => {
    const ref = (targetRef: Record<string, unknown>) =>
      reachSelectors({
        type: 'MeshTrace',
        name: 'p',
        creationTime: at(0),
        spec: { targetRef },
      } as never)?.map((s) => s.match);
    expect(ref({ kind: 'Mesh' })).toEqual([{}]);
    expect(ref({ kind: 'MeshService', name: 'web' })).toEqual([{ [SVC]: 'web' }]);
    expect(ref({ kind: 'MeshServiceSubset', name: 'web', tags: { v: '1' } })).toEqual([
      { v: '1', [SVC]: 'web' },
    ]);
    expect(ref({ kind: 'MeshGatewayRoute', name: 'r' })).toEqual([]);
  });

  // The contract a view relies on: a proxy none of whose tag sets the reach selectors match gets no
  // item from the policy. Checked over a small grid of proxies and policies of every kind.
  it('never misses a proxy that matchSidecar attaches the policy to', () => {
    const services = ['a', 'b', '*'];
    const kinds = [
      'TrafficPermission',
      'FaultInjection',
      'RateLimit',
      'Timeout',
      'TrafficRoute',
      'TrafficLog',
    ];
    const proxies: Networking[] = ['a', 'b'].map((svc) => ({
      address: '10.0.0.1',
      inbound: [{ port: 80, tags: { [SVC]: svc } }],
      outbound: [{ port: 9000, tags: { [SVC]: svc === 'a' ? 'b' : 'a' } }],
    }));
    for (const type of [...kinds, 'TrafficTrace'])
      for (const s of services)
        for (const d of services) {
          const p =
            type === 'TrafficTrace'
              ? policy(type, 'p', { selectors: sel({ [SVC]: s }) })
              : policy(type, 'p', { sources: sel({ [SVC]: s }), destinations: sel({ [SVC]: d }) });
          for (const proxy of proxies) {
            const attached = matchSidecar(proxy, { [type]: [p] }).length > 0;
            const tagSets = proxy.inbound!.map((i) => i.tags);
            const reachable = (reachSelectors(p) ?? []).some(({ match }) =>
              tagSets.some((tags) => tagSelectorMatches(match, tags)),
            );
            if (attached) expect(reachable, `${type} ${s}->${d}`).toBe(true);
          }
        }
  });
});
