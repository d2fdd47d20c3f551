import { describe, expect, it } from 'vitest';
import { matchSidecar, type SidecarItem } from '../../../src/policies/match-sidecar.js';
import type { PolicyResource } from '../../../src/policies/policy-resource.js';
import type { Networking } from '../../../src/policies/proxy-interfaces.js';
import { at, policy, sel, SVC } from '../../helpers/policies.js';

/** Groups policies by kind, as a caller hands them over. */
function byKind(...policies: PolicyResource[]): Record<string, PolicyResource[]> {
  const out: Record<string, PolicyResource[]> = {};
  for (const p of policies) (out[p.type] ??= []).push(p);
  return out;
}

/** Items as `type name: Kind=a,b; Kind=c` lines: the whole answer in a form a failure shows at a glance. */
function summary(items: SidecarItem[]): string[] {
  return items.map(
    (i) =>
      `${i.type} ${i.name}: ` +
      Object.entries(i.matchedPolicies)
        .map(([kind, ps]) => `${kind}=${ps.map((p) => p.name).join(',')}`)
        .join('; '),
  );
}

const match = (networking: Networking, ...policies: PolicyResource[]) =>
  summary(matchSidecar(networking, byKind(...policies)));

describe('matchSidecar: dataplane attachment (selectors against the proxy)', () => {
  // kumahq/kuma 2.0.0 pkg/core/policy/dataplane_matcher_test.go, SelectDataplanePolicy()
  const twoInbounds: Networking = {
    address: '192.168.0.1',
    inbound: [
      { port: 8080, tags: { [SVC]: 'example', app: 'example' } },
      { port: 8081, tags: { [SVC]: 'example', app: 'example', version: '1.0', env: 'prod' } },
    ],
  };

  it('a selector matches the proxy through any of its inbounds; the most tags win (single best)', () => {
    const last = policy('ProxyTemplate', 'last', { selectors: sel({ app: 'example', version: '1.0' }) });
    const first = policy('ProxyTemplate', 'first', {
      selectors: sel({ app: 'example' }, { app: 'example', version: '1.0', env: 'prod' }),
    });
    expect(match(twoInbounds, last, first)).toEqual(['dataplane : ProxyTemplate=first']);
  });

  it('a gateway proxy matches through its gateway tags', () => {
    const gateway: Networking = {
      address: '192.168.0.1',
      gateway: { tags: { [SVC]: 'edge', app: 'example', version: '1.0', env: 'prod' } },
    };
    const trace = policy('TrafficTrace', 'first', {
      selectors: sel({ app: 'example' }),
      creationTime: at(1),
    });
    expect(match(gateway, trace)).toEqual(['dataplane : TrafficTrace=first']);
  });

  it('same rank: the later creation wins; each kind keeps its single best', () => {
    const oneInbound: Networking = {
      address: '10.0.0.1',
      inbound: [{ port: 80, tags: { [SVC]: 'web', app: 'example', version: '1.0', env: 'prod' } }],
    };
    const b = policy('ProxyTemplate', 'b', { selectors: sel({ app: 'example' }), creationTime: at(1) });
    const a = policy('ProxyTemplate', 'a', { selectors: sel({ app: 'example' }), creationTime: at(0) });
    const trace = policy('TrafficTrace', 't', { selectors: sel({ [SVC]: '*' }) });
    expect(match(oneInbound, a, b, trace)).toEqual(['dataplane : ProxyTemplate=b; TrafficTrace=t']);
  });

  it('leaves the item out when no selector matches', () => {
    const none = policy('ProxyTemplate', 'last', { selectors: sel({ app: 'other' }) });
    expect(match(twoInbounds, none)).toEqual([]);
  });
});

describe('matchSidecar: inbound attachment (destinations against the inbound)', () => {
  // kumahq/kuma 2.0.0 pkg/core/permissions/matcher_test.go, "2 inbounds dataplane with additional
  // service, 2 policies" (the mesh's metrics inbound is not modelled here).
  const twoInbounds: Networking = {
    address: '192.168.0.1',
    inbound: [
      { port: 8080, servicePort: 8081, tags: { [SVC]: 'web', version: '0.1', region: 'eu' } },
      { port: 8081, servicePort: 8082, tags: { [SVC]: 'web-api', version: '0.1.2', region: 'us' } },
    ],
  };

  it('TrafficPermission: the single best destination per inbound, named <address>:<port>:<servicePort>', () => {
    const more = policy('TrafficPermission', 'more-specific-kong-to-web', {
      sources: sel({ [SVC]: 'kong' }),
      destinations: sel({ [SVC]: 'web', version: '0.1' }),
    });
    const less = policy('TrafficPermission', 'less-specific-kong-to-web', {
      sources: sel({ [SVC]: 'kong' }),
      destinations: sel({ [SVC]: 'web' }),
    });
    expect(match(twoInbounds, less, more)).toEqual([
      'inbound 192.168.0.1:8080:8081: TrafficPermission=more-specific-kong-to-web',
    ]);
  });

  // kumahq/kuma 2.0.0 pkg/core/xds/inspect/attachments_test.go, "group by inbounds": an inbound's own
  // address names it; api/mesh/v1alpha1/dataplane_helpers.go ToInboundInterface: servicePort defaults to port.
  it('names an inbound by its own address when set, and servicePort defaults to port', () => {
    const networking: Networking = {
      address: '10.0.0.9',
      inbound: [
        { port: 80, servicePort: 81, address: '192.168.0.2', tags: { [SVC]: 'web-api' } },
        { port: 90, tags: { [SVC]: 'web-admin' } },
      ],
    };
    const all = policy('TrafficPermission', 'all', {
      sources: sel({ [SVC]: '*' }),
      destinations: sel({ [SVC]: '*' }),
    });
    const items = matchSidecar(networking, byKind(all));
    expect(items.map((i) => [i.name, i.service])).toEqual([
      ['10.0.0.9:90:90', 'web-admin'],
      ['192.168.0.2:80:81', 'web-api'],
    ]);
  });

  // kumahq/kuma 2.0.0 pkg/core/faultinjections/matcher_test.go
  const fiSources = sel({ service: '*', 'mesh.io/protocol': 'http' });
  const fi = (name: string, destination: Record<string, string>) =>
    policy('FaultInjection', name, {
      sources: fiSources,
      destinations: sel(destination),
      creationTime: at(1),
    });

  it('FaultInjection: all that match, best first (equal ranks and times: by name)', () => {
    const networking: Networking = {
      address: '1.2.3.4',
      inbound: [
        {
          port: 8080,
          tags: { [SVC]: 'web', service: 'web', version: '0.1', region: 'eu', 'mesh.io/protocol': 'http' },
        },
      ],
    };
    const policies = [
      fi('fi4', { region: 'us', 'mesh.io/protocol': 'http' }),
      fi('fi3', { version: '0.1', region: 'eu', 'mesh.io/protocol': 'http' }),
      fi('fi2', { service: 'web', 'mesh.io/protocol': 'http' }),
      fi('fi1', { service: '*', 'mesh.io/protocol': 'http' }),
    ];
    expect(match(networking, ...policies)).toEqual(['inbound 1.2.3.4:8080:8080: FaultInjection=fi1,fi2,fi3']);
  });

  it('FaultInjection: applies only to the inbound its destinations match', () => {
    const networking: Networking = {
      address: '1.2.3.4',
      inbound: [
        { port: 8080, tags: { [SVC]: 'web', service: 'web', 'mesh.io/protocol': 'http' } },
        { port: 8081, tags: { [SVC]: 'web-api', service: 'web-api', 'mesh.io/protocol': 'http' } },
      ],
    };
    expect(match(networking, fi('fi1', { service: 'web-api', 'mesh.io/protocol': 'http' }))).toEqual([
      'inbound 1.2.3.4:8081:8081: FaultInjection=fi1',
    ]);
  });

  // kumahq/kuma 2.0.0 pkg/core/ratelimits/matcher_test.go, "match and sort 3 policies inbound": ordered by
  // source rank (the reference lists rl2 once per source; whole resources list it once).
  it('RateLimit: all that match, ordered by their best source', () => {
    const networking: Networking = {
      address: '1.2.3.4',
      inbound: [
        { port: 8080, tags: { [SVC]: 'backend', version: '0.1', region: 'eu', 'mesh.io/protocol': 'http' } },
      ],
    };
    const destinations = sel({ [SVC]: 'backend', 'mesh.io/protocol': 'http' });
    const rl1 = policy('RateLimit', 'rl1', {
      sources: sel({ [SVC]: '*' }),
      destinations,
      creationTime: at(1),
    });
    const rl2 = policy('RateLimit', 'rl2', {
      sources: sel({ [SVC]: 'frontend' }, { [SVC]: 'something_else' }),
      destinations,
      creationTime: at(1),
    });
    const rl3 = policy('RateLimit', 'rl3', {
      sources: sel({ [SVC]: 'frontend', 'mesh.io/zone': 'eu' }),
      destinations,
      creationTime: at(1),
    });
    expect(match(networking, rl1, rl2, rl3)).toEqual(['inbound 1.2.3.4:8080:8080: RateLimit=rl3,rl2,rl1']);
  });

  it('single best for TrafficPermission, every match for FaultInjection, on the same inbound', () => {
    const networking: Networking = {
      address: '1.2.3.4',
      inbound: [{ port: 80, tags: { [SVC]: 'web', v: '1', 'mesh.io/protocol': 'http' } }],
    };
    const tp1 = policy('TrafficPermission', 'tp1', {
      sources: sel({ [SVC]: '*' }),
      destinations: sel({ [SVC]: 'web' }),
    });
    const tp2 = policy('TrafficPermission', 'tp2', {
      sources: sel({ [SVC]: '*' }),
      destinations: sel({ [SVC]: 'web', v: '1' }),
    });
    // FaultInjection destinations name the protocol (Kuma's rule).
    const fi1 = policy('FaultInjection', 'fi1', {
      sources: sel({ [SVC]: '*' }),
      destinations: sel({ [SVC]: 'web', 'mesh.io/protocol': 'http' }),
    });
    const fi2 = policy('FaultInjection', 'fi2', {
      sources: sel({ [SVC]: 'a', v: '*' }),
      destinations: sel({ [SVC]: 'web', v: '1', 'mesh.io/protocol': 'http' }),
    });
    expect(match(networking, tp1, tp2, fi1, fi2)).toEqual([
      'inbound 1.2.3.4:80:80: TrafficPermission=tp2; FaultInjection=fi2,fi1',
    ]);
  });
});

describe('matchSidecar: outbound attachment (sources against the proxy, destinations against the service)', () => {
  // kumahq/kuma 2.0.0 pkg/xds/topology/timeouts_test.go
  const frontend: Networking = {
    address: '192.168.0.1',
    inbound: [{ port: 80, tags: { [SVC]: 'frontend', version: 'v1' } }],
    outbound: [
      { port: 10001, tags: { [SVC]: 'backend' } },
      { port: 10002, tags: { [SVC]: 'web' } },
      { port: 10003, tags: { [SVC]: 'redis' } },
      { port: 10004, tags: { [SVC]: 'db' } },
    ],
  };

  it('Timeout: applies to the outbound of the service its destinations name, named 127.0.0.1:<port>', () => {
    const toRedis = policy('Timeout', 'timeouts-redis', {
      sources: sel({ [SVC]: 'frontend', version: 'v1' }),
      destinations: sel({ [SVC]: 'redis' }),
    });
    expect(match(frontend, toRedis)).toEqual(['outbound 127.0.0.1:10003: Timeout=timeouts-redis']);
  });

  it('Timeout: all sources to all destinations reaches every outbound', () => {
    const all = policy('Timeout', 'all', { sources: sel({ [SVC]: '*' }), destinations: sel({ [SVC]: '*' }) });
    expect(match(frontend, all)).toEqual([
      'outbound 127.0.0.1:10001: Timeout=all',
      'outbound 127.0.0.1:10002: Timeout=all',
      'outbound 127.0.0.1:10003: Timeout=all',
      'outbound 127.0.0.1:10004: Timeout=all',
    ]);
  });

  it('does not apply when no source matches the proxy', () => {
    const other = policy('Timeout', 'other', {
      sources: sel({ [SVC]: 'web' }),
      destinations: sel({ [SVC]: '*' }),
    });
    expect(match(frontend, other)).toEqual([]);
  });

  // Outbound destinations see `{mesh.io/service}` only (connection_matcher.go, SelectConnectionPolicies):
  // another tag of the outbound does not make a destination match.
  it('matches destinations against the service tag only, and names an outbound by its address', () => {
    const networking: Networking = {
      address: '10.0.0.1',
      inbound: [{ port: 80, tags: { [SVC]: 'frontend' } }],
      outbound: [
        { port: 8080, address: '240.0.0.1', tags: { [SVC]: 'backend', version: 'v2' } },
        { port: 8080, address: 'fd00::1', service: 'web' },
      ],
    };
    const byVersion = policy('TrafficRoute', 'by-version', {
      sources: sel({ [SVC]: '*' }),
      destinations: sel({ [SVC]: 'backend', version: 'v2' }),
    });
    const web = policy('TrafficRoute', 'web', {
      sources: sel({ [SVC]: '*' }),
      destinations: sel({ [SVC]: 'web' }),
    });
    expect(match(networking, byVersion, web)).toEqual(['outbound [fd00::1]:8080: TrafficRoute=web']);
  });

  // kumahq/kuma 2.0.0 pkg/core/ratelimits/matcher_test.go, "match and sort 3 policies outbound"; the
  // reference's proxy has no inbound there, so its assertion loop checks nothing; here an inbound of
  // frontend in zone eu makes every source match.
  it('RateLimit: the single best on an outbound, by source+destination rank', () => {
    const networking: Networking = {
      address: '10.0.0.1',
      inbound: [{ port: 80, tags: { [SVC]: 'frontend', 'mesh.io/zone': 'eu' } }],
      outbound: [{ port: 8080, tags: { [SVC]: 'backend' } }],
    };
    const destinations = sel({ [SVC]: 'backend' });
    const rl1 = policy('RateLimit', 'rl1', { sources: sel({ [SVC]: '*' }), destinations });
    const rl2 = policy('RateLimit', 'rl2', {
      sources: sel({ [SVC]: 'frontend' }, { [SVC]: 'x' }),
      destinations,
    });
    const rl3 = policy('RateLimit', 'rl3', {
      sources: sel({ [SVC]: 'frontend', 'mesh.io/zone': 'eu' }),
      destinations,
    });
    expect(match(networking, rl1, rl2, rl3)).toEqual(['outbound 127.0.0.1:8080: RateLimit=rl3']);
  });
});

describe('matchSidecar: service attachment', () => {
  // kumahq/kuma 2.0.0 pkg/core/logs/matcher_test.go
  const kong: Networking = {
    address: '127.0.0.1',
    inbound: [
      { port: 8080, servicePort: 8081, tags: { [SVC]: 'kong' } },
      { port: 8090, servicePort: 8091, tags: { [SVC]: 'kong-admin' } },
    ],
    outbound: [
      { port: 9091, service: 'backend' },
      { port: 9092, service: 'web' },
    ],
  };

  it('TrafficLog: the best per outbound service, and for pass_through', () => {
    const lr1 = policy('TrafficLog', 'lr-1', {
      sources: sel({ [SVC]: 'kong' }),
      destinations: sel({ [SVC]: 'backend' }),
    });
    const lr3 = policy('TrafficLog', 'lr-3', {
      sources: sel({ [SVC]: '*' }),
      destinations: sel({ [SVC]: '*' }),
    });
    const items = matchSidecar(kong, byKind(lr1, lr3));
    expect(summary(items)).toEqual([
      'service backend: TrafficLog=lr-1',
      'service pass_through: TrafficLog=lr-3',
      'service web: TrafficLog=lr-3',
    ]);
    expect(items.map((i) => i.service)).toEqual(['backend', 'pass_through', 'web']);
  });

  it('TrafficLog: a source that matches no inbound gives no service item', () => {
    const lr = policy('TrafficLog', 'lr-1', {
      sources: sel({ [SVC]: 'web' }),
      destinations: sel({ [SVC]: 'backend' }),
    });
    expect(match(kong, lr)).toEqual([]);
  });

  // kumahq/kuma 2.0.0 pkg/xds/topology/healthchecks_test.go, BuildHealthCheckMap()
  it('HealthCheck: one per service the routes reach, which may be more than the outbounds; never pass_through', () => {
    const backend: Networking = {
      address: '192.168.0.1',
      inbound: [{ port: 80, tags: { [SVC]: 'backend' } }],
      outbound: [{ port: 10001, tags: { [SVC]: 'redis' } }],
    };
    const anySource = sel({ [SVC]: '*' });
    const elastic = policy('HealthCheck', 'healthcheck-elastic', {
      sources: anySource,
      destinations: sel({ [SVC]: 'elastic' }),
    });
    const redis = policy('HealthCheck', 'healthcheck-redis', {
      sources: anySource,
      destinations: sel({ [SVC]: 'redis' }),
    });
    const everywhere = policy('HealthCheck', 'everywhere', {
      sources: sel({ x: '*' }),
      destinations: sel({ [SVC]: '*' }),
    });
    expect(match(backend, elastic, redis, everywhere)).toEqual([
      'service redis: HealthCheck=healthcheck-redis',
    ]);

    const split = policy('TrafficRoute', 'split', {
      sources: anySource,
      destinations: sel({ [SVC]: '*' }),
      conf: {
        split: [
          { weight: 50, destination: { [SVC]: '*' } },
          { weight: 50, destination: { [SVC]: 'elastic' } },
        ],
      },
    });
    expect(match(backend, elastic, redis, split)).toEqual([
      'outbound 127.0.0.1:10001: TrafficRoute=split',
      'service elastic: HealthCheck=healthcheck-elastic',
      'service redis: HealthCheck=healthcheck-redis',
    ]);
  });

  it('HealthCheck: on equal aggregate ranks the later creation wins', () => {
    const backend: Networking = {
      address: '192.168.0.1',
      inbound: [{ port: 80, tags: { [SVC]: 'backend', region: 'eu' } }],
      outbound: [{ port: 10001, tags: { [SVC]: 'redis' } }],
    };
    const two = policy('HealthCheck', 'equally-specific-2', {
      sources: sel({ [SVC]: '*' }),
      destinations: sel({ [SVC]: 'redis' }),
      creationTime: at(1),
    });
    const one = policy('HealthCheck', 'equally-specific-1', {
      sources: sel({ [SVC]: 'backend' }),
      destinations: sel({ [SVC]: '*' }),
      creationTime: at(0),
    });
    expect(match(backend, one, two)).toEqual(['service redis: HealthCheck=equally-specific-2']);
  });

  it('a source by 2 tags wins over a source by 1 tag, an exact one over a wildcard one', () => {
    const backend: Networking = {
      address: '192.168.0.1',
      inbound: [{ port: 80, tags: { [SVC]: 'backend', region: 'eu' } }],
      outbound: [{ port: 10001, tags: { [SVC]: 'redis' } }],
    };
    const dest = sel({ [SVC]: 'redis' });
    const two = policy('Retry', 'two-tags', {
      sources: sel({ [SVC]: 'backend', region: '*' }),
      destinations: dest,
    });
    const one = policy('Retry', 'one-tag', {
      sources: sel({ [SVC]: 'backend' }),
      destinations: dest,
      creationTime: at(9),
    });
    const exact = policy('CircuitBreaker', 'exact', {
      sources: sel({ [SVC]: 'backend' }),
      destinations: dest,
    });
    const wild = policy('CircuitBreaker', 'wild', {
      sources: sel({ [SVC]: '*' }),
      destinations: dest,
      creationTime: at(9),
    });
    expect(match(backend, one, two, wild, exact)).toEqual([
      'service redis: CircuitBreaker=exact; Retry=two-tags',
    ]);
  });
});

describe('matchSidecar: the whole view', () => {
  it('sorts items by type then name, keeps the caller objects, and leaves out items without policies', () => {
    const networking: Networking = {
      address: '10.0.0.1',
      inbound: [
        { port: 81, tags: { [SVC]: 'web' } },
        { port: 80, tags: { [SVC]: 'web' } },
        { port: 82, tags: { [SVC]: 'other' } },
      ],
      outbound: [{ port: 9000, tags: { [SVC]: 'redis' } }],
    };
    const tp = policy('TrafficPermission', 'tp', {
      sources: sel({ [SVC]: '*' }),
      destinations: sel({ [SVC]: 'web' }),
    });
    const tl = policy('TrafficLog', 'tl', {
      sources: sel({ [SVC]: '*' }),
      destinations: sel({ [SVC]: 'redis' }),
    });
    const tt = policy('TrafficTrace', 'tt', { selectors: sel({ [SVC]: 'other' }) });
    const to = policy('Timeout', 'to', { sources: sel({ [SVC]: 'web' }), destinations: sel({ [SVC]: '*' }) });
    const items = matchSidecar(networking, byKind(tp, tl, tt, to));
    expect(summary(items)).toEqual([
      'dataplane : TrafficTrace=tt',
      'inbound 10.0.0.1:80:80: TrafficPermission=tp',
      'inbound 10.0.0.1:81:81: TrafficPermission=tp',
      'outbound 127.0.0.1:9000: Timeout=to',
      'service redis: TrafficLog=tl',
    ]);
    expect(items[0]).toEqual({
      type: 'dataplane',
      name: '',
      service: '',
      matchedPolicies: { TrafficTrace: [tt] },
    });
    expect(items[1].matchedPolicies.TrafficPermission[0]).toBe(tp);
  });

  it('ignores kinds it does not attach, and a proxy without candidates has no items', () => {
    const networking: Networking = { address: '10.0.0.1', inbound: [{ port: 80, tags: { [SVC]: 'web' } }] };
    const stray = policy('MeshGateway', 'gw', { selectors: sel({ [SVC]: '*' }) });
    expect(match(networking, stray)).toEqual([]);
    expect(matchSidecar(networking, {})).toEqual([]);
  });
});

describe('matchSidecar: VirtualOutbound and targetRef kinds on the dataplane item', () => {
  const proxy: Networking = {
    address: '10.0.0.1',
    inbound: [{ port: 80, tags: { [SVC]: 'web', version: 'v1' } }],
  };
  const targetRef = (type: string, name: string, ref: Record<string, unknown>) =>
    ({ type, name, creationTime: at(0), spec: { targetRef: ref } }) as unknown as PolicyResource;

  it('VirtualOutbound: every one whose selectors match, best first', () => {
    const wide = policy('VirtualOutbound', 'wide', { selectors: sel({ [SVC]: '*' }) });
    const exact = policy('VirtualOutbound', 'exact', { selectors: sel({ [SVC]: 'web', version: 'v1' }) });
    const other = policy('VirtualOutbound', 'other', { selectors: sel({ [SVC]: 'db' }) });
    expect(match(proxy, wide, other, exact)).toEqual(['dataplane : VirtualOutbound=exact,wide']);
  });

  it('targetRef kinds: every one that selects an inbound, least specific first, then by name', () => {
    const mesh = targetRef('MeshTrace', 'zz-mesh', { kind: 'Mesh' });
    const service = targetRef('MeshTrace', 'a-service', { kind: 'MeshService', name: 'web' });
    const subset = targetRef('MeshTrace', 'b-subset', { kind: 'MeshSubset', tags: { version: 'v1' } });
    const elsewhere = targetRef('MeshTrace', 'c', { kind: 'MeshService', name: 'db' });
    const mtp = targetRef('MeshTrafficPermission', 'allow', { kind: 'Mesh' });
    expect(match(proxy, service, elsewhere, subset, mesh, mtp)).toEqual([
      'dataplane : MeshTrace=zz-mesh,b-subset,a-service; MeshTrafficPermission=allow',
    ]);
  });

  it('targetRef kinds: a proxy without inbounds is selected by none, even with kind Mesh', () => {
    const outboundOnly: Networking = { address: '10.0.0.2', outbound: [{ port: 1, tags: { [SVC]: 'db' } }] };
    expect(match(outboundOnly, targetRef('MeshAccessLog', 'all', { kind: 'Mesh' }))).toEqual([]);
  });
});
