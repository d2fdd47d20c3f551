import { describe, expect, it } from 'vitest';
import type { Networking } from '../../../../src/policies/proxy-interfaces.js';
import { proxyRules, type RuleItem } from '../../../../src/policies/rules/index.js';
import type { GatewayListeners } from '../../../../src/policies/target-ref-match.js';
import { SVC, entry, targetRefPolicy } from '../../../helpers/policies.js';

const MESH = { kind: 'Mesh' };
const svc = (name: string) => ({ kind: 'MeshService', name });
const mtp = (name: string, targetRef: object, from: unknown[]) =>
  targetRefPolicy('MeshTrafficPermission', name, { targetRef: targetRef as never, from });
const allow = (action: string) => ({ action });

/** One line per item: name, type, service, policyType, subset, conf, origins. */
const lines = (items: RuleItem[]) =>
  items.map(
    (i) =>
      `${i.name} ${i.type} ${i.service || '-'} ${i.policyType} ${JSON.stringify(i.subset)} ${JSON.stringify(i.conf)} ${i.origins.map((o) => `${o.mesh}/${o.name}`).join(',')}`,
  );

const sidecar: Networking = {
  address: '10.0.0.1',
  inbound: [
    { port: 8080, tags: { [SVC]: 'web', version: 'v1' } },
    { port: 9090, address: '10.0.0.2', tags: { [SVC]: 'admin' } },
  ],
  outbound: [
    { port: 10001, tags: { [SVC]: 'backend' } },
    { port: 10002, address: '10.0.0.9', service: 'db' },
  ],
};

const file = (path: string) => ({ backends: [{ file: { path } }] });
const policies = [
  mtp('mtp-all', MESH, [entry(MESH, allow('ALLOW')), entry(svc('evil'), allow('DENY'))]),
  mtp('mtp-web', svc('web'), [entry(svc('evil'), allow('ALLOW_WITH_SHADOW_DENY'))]),
  mtp('mtp-other', svc('other'), [entry(MESH, allow('DENY'))]),
  targetRefPolicy('MeshAccessLog', 'mal', {
    targetRef: MESH,
    from: [entry(MESH, file('/a'))],
    to: [entry(MESH, { backends: [{ tcp: { address: 'logs:5000' } }] }), entry(svc('backend'), file('/b'))],
  }),
  targetRefPolicy('MeshTrace', 'mt', {
    targetRef: svc('web'),
    default: { backends: [{ zipkin: { url: 'http://zipkin:9411' } }] },
  }),
];

describe('proxyRules', () => {
  it('a sidecar with 2 inbounds and 2 outbounds: from per inbound, to per outbound, MeshTrace once', () => {
    expect(lines(proxyRules(sidecar, policies))).toEqual([
      '10.0.0.1:8080 clientSubset web MeshAccessLog {} {"backends":[{"file":{"path":"/a","format":{}}}]} default/mal',
      '10.0.0.1:8080 clientSubset web MeshTrafficPermission {"mesh.io/service":"evil"} {"action":"ALLOW_WITH_SHADOW_DENY"} default/mtp-all,default/mtp-web',
      '10.0.0.1:8080 clientSubset web MeshTrafficPermission {"mesh.io/service":"!evil"} {"action":"ALLOW"} default/mtp-all',
      '10.0.0.2:9090 clientSubset admin MeshAccessLog {} {"backends":[{"file":{"path":"/a","format":{}}}]} default/mal',
      '10.0.0.2:9090 clientSubset admin MeshTrafficPermission {"mesh.io/service":"evil"} {"action":"DENY"} default/mtp-all',
      '10.0.0.2:9090 clientSubset admin MeshTrafficPermission {"mesh.io/service":"!evil"} {"action":"ALLOW"} default/mtp-all',
      '10.0.0.9:10002 destinationSubset db MeshAccessLog {"mesh.io/service":"!backend"} {"backends":[{"tcp":{"address":"logs:5000","format":{}}}]} default/mal',
      '127.0.0.1:10001 destinationSubset backend MeshAccessLog {"mesh.io/service":"backend"} {"backends":[{"file":{"path":"/b","format":{}}}]} default/mal',
      'dataplane singleItem - MeshTrace {} {"backends":[{"zipkin":{"url":"http://zipkin:9411"}}],"sampling":{},"tags":null} default/mt',
    ]);
  });

  it('the order is total and does not depend on the order of the policies', () => {
    const forward = proxyRules(sidecar, policies);
    expect(proxyRules(sidecar, [...policies].reverse())).toStrictEqual(forward);
    expect(
      proxyRules(sidecar, [policies[3], policies[1], policies[4], policies[0], policies[2]]),
    ).toStrictEqual(forward);
  });

  it('a built-in gateway: clientSubset per selected listener, named <address>:<port>, the gateway service', () => {
    const networking: Networking = {
      address: '192.168.0.1',
      gateway: { type: 'BUILTIN', tags: { [SVC]: 'edge' } },
    };
    const gateway: GatewayListeners = {
      conf: { listeners: [{ port: 80, tags: { listener: 'a' } }, { port: 443 }] },
    };
    const gwPolicies = [
      mtp('deny-all', MESH, [entry(MESH, allow('DENY'))]),
      mtp('allow-a', { kind: 'MeshSubset', tags: { listener: 'a' } }, [entry(MESH, allow('ALLOW'))]),
      targetRefPolicy('MeshTrace', 'mt', { targetRef: svc('edge'), default: { backends: [] } }),
    ];
    expect(lines(proxyRules(networking, gwPolicies, gateway))).toEqual([
      '192.168.0.1:443 clientSubset edge MeshTrafficPermission {} {"action":"DENY"} default/deny-all',
      '192.168.0.1:80 clientSubset edge MeshTrafficPermission {} {"action":"ALLOW"} default/allow-a,default/deny-all',
      'dataplane singleItem - MeshTrace {} {"backends":[],"sampling":{},"tags":null} default/mt',
    ]);
    // Without its MeshGateway, or as a delegated gateway, nothing selects the proxy.
    expect(proxyRules(networking, gwPolicies)).toEqual([]);
    expect(proxyRules({ ...networking, gateway: { tags: { [SVC]: 'edge' } } }, gwPolicies, gateway)).toEqual(
      [],
    );
  });

  it('a proxy that no policy selects has no rules', () => {
    const lonely: Networking = { address: '10.0.0.5', inbound: [{ port: 80, tags: { [SVC]: 'lonely' } }] };
    const withOutbound = { ...lonely, outbound: [{ port: 10001, tags: { [SVC]: 'web' } }] };
    const others = [
      mtp('p', svc('web'), [entry(MESH, allow('ALLOW'))]),
      targetRefPolicy('MeshAccessLog', 'mal', { targetRef: svc('web'), to: [entry(MESH, file('/a'))] }),
      targetRefPolicy('MeshTrace', 'mt', { targetRef: svc('web'), default: { backends: [] } }),
    ];
    expect(proxyRules(withOutbound, others)).toEqual([]);
    expect(proxyRules(lonely, others)).toEqual([]);
    expect(proxyRules(lonely, [])).toEqual([]);
  });

  it('negated tags show as !value; of a key negated twice, the last value shows (as the reference)', () => {
    const subsets = (from: unknown[]) =>
      proxyRules(sidecar, [mtp('envs', MESH, from)])
        .filter((i) => i.name === '10.0.0.2:9090')
        .map((i) => i.subset);
    const dev = entry({ kind: 'MeshSubset', tags: { env: 'dev' } }, allow('ALLOW'));
    const prod = entry({ kind: 'MeshSubset', tags: { env: 'prod' } }, allow('DENY'));
    expect(subsets([entry(MESH, allow('DENY')), dev])).toEqual([{ env: 'dev' }, { env: '!dev' }]);
    // env: !dev and env: !prod, one map key: the reference's map keeps the last. Rules keep the
    // reference's order: more positive tags first, then the order the combinations came in.
    expect(subsets([entry(MESH, allow('DENY')), dev, prod])).toEqual([
      { env: 'prod' },
      { env: 'dev' },
      { env: '!prod' },
    ]);
  });

  it('items of one listener and policy type keep the order of the rules: most positive tags first, as the reference', () => {
    const p = mtp('p', MESH, [
      entry({ kind: 'MeshSubset', tags: { env: 'dev' } }, allow('ALLOW')),
      entry({ kind: 'MeshSubset', tags: { zone: 'x' } }, allow('DENY')),
    ]);
    expect(
      proxyRules(sidecar, [p])
        .filter((i) => i.name === '10.0.0.2:9090')
        .map((i) => i.subset),
    ).toEqual([
      { env: 'dev', zone: 'x' },
      { env: '!dev', zone: 'x' },
      { env: 'dev', zone: '!x' },
    ]);
  });

  it('origins: each policy once, by name, whatever the order the items applied in', () => {
    const p = [
      mtp('b-pol', MESH, [entry(MESH, allow('DENY')), entry(MESH, allow('ALLOW'))]),
      mtp('a-pol', svc('admin'), [entry(MESH, allow('ALLOW_WITH_SHADOW_DENY'))]),
    ];
    const [item] = proxyRules(sidecar, p).filter((i) => i.name === '10.0.0.2:9090');
    // b-pol (Mesh) applies before a-pol (MeshService): a-pol's conf wins, origins still by name.
    expect(item.conf).toEqual({ action: 'ALLOW_WITH_SHADOW_DENY' });
    expect(item.origins).toEqual([
      { mesh: 'default', name: 'a-pol' },
      { mesh: 'default', name: 'b-pol' },
    ]);
  });
});
