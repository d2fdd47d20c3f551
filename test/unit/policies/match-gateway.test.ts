import { describe, expect, it } from 'vitest';
import { hostnameMatches } from '../../../src/policies/gateway-hosts.js';
import {
  DESTINATION_KINDS,
  gatewayAttachments,
  gatewayReach,
  matchGateway,
  routeAttachments,
  routeBackends,
  selectGateway,
  unselectedGatewayView,
  type GatewayView,
} from '../../../src/policies/match-gateway.js';
import type { PolicyResource } from '../../../src/policies/policy-resource.js';
import type { Networking } from '../../../src/policies/proxy-interfaces.js';
import { tagSelectorMatches } from '../../../src/policies/tag-selector.js';
import { at, backend, httpRoute, meshGateway, policy, sel, SVC, tcpRoute } from '../../helpers/policies.js';

/** Groups policies by kind, as a caller hands them over. */
function byKind(...policies: PolicyResource[]): Record<string, PolicyResource[]> {
  const out: Record<string, PolicyResource[]> = {};
  for (const p of policies) (out[p.type] ??= []).push(p);
  return out;
}

/** A built-in gateway proxy of service `service` with extra tags. */
const builtin = (service: string, tags: Record<string, string> = {}): Networking => ({
  address: '10.0.0.1',
  gateway: { tags: { [SVC]: service, ...tags }, type: 'BUILTIN' },
});

/**
 * The view as lines `port PROTO host: route -> svc{Kind=name,...} ...`, destinations named by their
 * service (plus other tags as `svc/k=v`): the whole answer in a form a failure shows at a glance.
 */
function summary(view: GatewayView): string[] {
  const lines: string[] = [];
  for (const l of view.listeners)
    for (const h of l.hosts) {
      const routes = h.routes.map(
        (r) =>
          `${r.route} -> ` +
          r.destinations
            .map((d) => {
              const name = Object.entries(d.tags)
                .map(([k, v]) => (k === SVC ? v : `${k}=${v}`))
                .join('/');
              const ps = Object.entries(d.policies).map(([k, p]) => `${k}=${p.name}`);
              return ps.length > 0 ? `${name}{${ps.join(',')}}` : name;
            })
            .join(' '),
      );
      lines.push(`${l.port} ${l.protocol} ${h.hostName}: ${routes.join(' | ')}`);
    }
  return lines;
}

const edge = meshGateway('edge', {
  selectors: sel({ [SVC]: 'edge' }),
  listeners: [{ port: 80, protocol: 'HTTP' }],
});

describe('selectGateway: the best MeshGateway whose selectors match the proxy', () => {
  const proxy = builtin('edge', { zone: 'east' });

  it('the selector with more tags wins, then more exact values', () => {
    const one = meshGateway('one', { selectors: sel({ [SVC]: 'edge' }), listeners: [] });
    const two = meshGateway('two', { selectors: sel({ [SVC]: 'edge', zone: 'east' }), listeners: [] });
    const wild = meshGateway('wild', { selectors: sel({ [SVC]: 'edge', zone: '*' }), listeners: [] });
    expect(selectGateway(proxy, [one, two, wild])?.name).toBe('two');
    expect(selectGateway(proxy, [one, wild])?.name).toBe('wild');
  });

  it('same rank: the later creation wins, then the name sorting first', () => {
    const a = meshGateway('a', { selectors: sel({ [SVC]: 'edge' }), listeners: [] });
    const b = meshGateway('b', { selectors: sel({ [SVC]: 'edge' }), listeners: [], creationTime: at(5) });
    const c = meshGateway('c', { selectors: sel({ [SVC]: 'edge' }), listeners: [] });
    expect(selectGateway(proxy, [a, b, c])?.name).toBe('b');
    expect(selectGateway(proxy, [c, a])?.name).toBe('a');
  });

  it('none: no gateway selects it, a delegated gateway, a sidecar', () => {
    const other = meshGateway('other', { selectors: sel({ [SVC]: 'other' }), listeners: [] });
    const any = meshGateway('any', { selectors: sel({ [SVC]: '*' }), listeners: [] });
    expect(selectGateway(proxy, [other])).toBeUndefined();
    expect(selectGateway(proxy, [])).toBeUndefined();
    expect(
      selectGateway({ address: '10.0.0.1', gateway: { tags: { [SVC]: 'edge' } } }, [any]),
    ).toBeUndefined();
    const sidecar: Networking = { address: '10.0.0.1', inbound: [{ port: 80, tags: { [SVC]: 'edge' } }] };
    expect(selectGateway(sidecar, [any])).toBeUndefined();
  });

  it('the answer for a proxy no gateway selects keeps the reference shape', () => {
    expect(unselectedGatewayView()).toEqual({
      kind: 'MeshGatewayDataplane',
      gateway: { mesh: '', name: '' },
      listeners: [],
    });
  });
});

describe('matchGateway: the reference golden case', () => {
  // kumahq/kuma 2.0.0 pkg/api-server/inspect_endpoints_test.go "inspect gateway dataplane",
  // testdata/inspect_gateway_dataplane.json; destinations in route order (the reference sorts them
  // by tags), and our MeshGateway needs tags (the service tag of the proxy here).
  it('one listener, one route of two rules, per-destination policies, the gateway TrafficLog', () => {
    const gateway = meshGateway('gateway', {
      selectors: sel({ [SVC]: 'gateway' }),
      tags: { [SVC]: 'gateway' },
      listeners: [{ port: 80, protocol: 'HTTP' }],
    });
    const route = httpRoute('route-1', {
      selectors: sel({ [SVC]: 'gateway' }),
      rules: [{ backends: [backend('redis')] }, { backends: [backend('backend')] }],
    });
    const any = sel({ [SVC]: '*' });
    const candidates = byKind(
      policy('TrafficLog', 'tl-1', { sources: any, destinations: any }),
      policy('TrafficPermission', 'tp-1', { sources: any, destinations: any }),
      policy('Timeout', 't-1', { sources: any, destinations: sel({ [SVC]: 'redis' }) }),
      policy('HealthCheck', 'hc-1', {
        sources: sel({ [SVC]: 'gateway' }),
        destinations: sel({ [SVC]: 'backend' }),
      }),
    );
    const view = matchGateway(builtin('gateway'), gateway, [route], candidates);
    expect(view.kind).toBe('MeshGatewayDataplane');
    expect(view.gateway).toEqual({ mesh: 'default', name: 'gateway' });
    expect(summary(view)).toEqual(['80 HTTP *: route-1 -> redis{Timeout=t-1} backend{HealthCheck=hc-1}']);
    expect(Object.keys(view.policies ?? {})).toEqual(['TrafficLog']);
    expect(view.policies?.TrafficLog).toBe(candidates.TrafficLog![0]);
    expect(view.listeners[0]!.hosts[0]!.routes[0]!.destinations[0]!.policies.Timeout).toBe(
      candidates.Timeout![0],
    );
  });
});

describe('matchGateway: listeners, hosts and routes', () => {
  const proxy = builtin('edge');

  it('listeners sorted by port; a route attaches by its kind: http on HTTP/HTTPS, tcp on TCP, none on TLS', () => {
    const gw = meshGateway('edge', {
      selectors: sel({ [SVC]: 'edge' }),
      listeners: [
        { port: 9000, protocol: 'TCP' },
        { port: 443, protocol: 'HTTPS' },
        { port: 80, protocol: 'HTTP' },
        { port: 8443, protocol: 'TLS' },
      ],
    });
    const web = httpRoute('web', {
      selectors: sel({ [SVC]: 'edge' }),
      rules: [{ backends: [backend('a')] }],
    });
    const db = tcpRoute('db', { selectors: sel({ [SVC]: 'edge' }), backends: [backend('pg')] });
    expect(summary(matchGateway(proxy, gw, [web, db], {}))).toEqual([
      '80 HTTP *: web -> a',
      '443 HTTPS *: web -> a',
      '8443 TLS *: ',
      '9000 TCP *: db -> pg',
    ]);
  });

  it("a route attaches where its selectors match the listener's merged tags (proxy < gateway < listener)", () => {
    const gw = meshGateway('edge', {
      selectors: sel({ [SVC]: 'edge' }),
      tags: { tier: 'gw' },
      listeners: [
        { port: 80, protocol: 'HTTP', tags: { port: 'http' } },
        { port: 81, protocol: 'HTTP', tags: { port: 'alt', tier: 'listener' } },
      ],
    });
    const tagged = builtin('edge', { tier: 'proxy', zone: 'east' });
    const onHttp = httpRoute('on-http', {
      selectors: sel({ port: 'http' }),
      rules: [{ backends: [backend('a')] }],
    });
    const onGw = httpRoute('on-gw', {
      selectors: sel({ tier: 'gw', zone: 'east' }),
      rules: [{ backends: [backend('b')] }],
    });
    const onProxy = httpRoute('on-proxy', {
      selectors: sel({ tier: 'proxy' }),
      rules: [{ backends: [backend('c')] }],
    });
    const onListener = httpRoute('on-listener', {
      selectors: sel({ tier: 'listener' }, { nothing: 'x' }),
      rules: [{ backends: [backend('d')] }],
    });
    expect(summary(matchGateway(tagged, gw, [onHttp, onGw, onProxy, onListener], {}))).toEqual([
      '80 HTTP *: on-gw -> b | on-http -> a',
      '81 HTTP *: on-listener -> d',
    ]);
  });

  it('an empty listener hostname is the * host; a TCP route without rules attaches with no destinations', () => {
    const gw = meshGateway('edge', {
      selectors: sel({ [SVC]: 'edge' }),
      listeners: [
        { port: 80, protocol: 'HTTP', hostname: '' },
        { port: 9000, protocol: 'TCP' },
      ],
    });
    const web = httpRoute('web', {
      selectors: sel({ [SVC]: 'edge' }),
      rules: [{ backends: [backend('a')] }],
    });
    const bare = {
      ...tcpRoute('bare', { selectors: sel({ [SVC]: 'edge' }), backends: [] }),
      conf: { tcp: {} },
    };
    expect(summary(matchGateway(proxy, gw, [web, bare], {}))).toEqual([
      '80 HTTP *: web -> a',
      '9000 TCP *: bare -> ',
    ]);
  });

  it('listeners sharing a port are one listener with a host per hostname', () => {
    const gw = meshGateway('edge', {
      selectors: sel({ [SVC]: 'edge' }),
      listeners: [
        { port: 80, protocol: 'HTTP', hostname: 'foo.example.com', tags: { host: 'foo' } },
        { port: 80, protocol: 'HTTP', hostname: 'bar.example.com', tags: { host: 'bar' } },
      ],
    });
    const foo = httpRoute('foo', { selectors: sel({ host: 'foo' }), rules: [{ backends: [backend('f')] }] });
    const all = httpRoute('all', {
      selectors: sel({ [SVC]: 'edge' }),
      rules: [{ backends: [backend('x')] }],
    });
    expect(summary(matchGateway(proxy, gw, [foo, all], {}))).toEqual([
      '80 HTTP bar.example.com: all -> x',
      '80 HTTP foo.example.com: all -> x | foo -> f',
    ]);
  });

  it('the * host hands routes with hostnames on to hosts of those names, whatever the route order', () => {
    const gw = meshGateway('edge', {
      selectors: sel({ [SVC]: 'edge' }),
      listeners: [
        { port: 80, protocol: 'HTTP' },
        { port: 80, protocol: 'HTTP', hostname: 'api.example.com' },
      ],
    });
    const s = sel({ [SVC]: 'edge' });
    const plain = httpRoute('plain', { selectors: s, rules: [{ backends: [backend('p')] }] });
    const wild = httpRoute('wild', {
      selectors: s,
      hostnames: ['*.example.com'],
      rules: [{ backends: [backend('w')] }],
    });
    const foo = httpRoute('foo', {
      selectors: s,
      hostnames: ['foo.example.com'],
      rules: [{ backends: [backend('f')] }],
    });
    const other = httpRoute('other', {
      selectors: s,
      hostnames: ['example.org'],
      rules: [{ backends: [backend('o')] }],
    });
    const expected = [
      '80 HTTP *: plain -> p',
      // `*.example.com` covers one label only, never `example.com` or a deeper name; an implicit
      // `*.example.com` host does not take the route of `foo.example.com`.
      '80 HTTP *.example.com: wild -> w',
      // A declared host: its own listener's routes that cover it (not foo), and the handed-on ones.
      '80 HTTP api.example.com: plain -> p | wild -> w',
      '80 HTTP example.org: other -> o',
      '80 HTTP foo.example.com: foo -> f | wild -> w',
    ];
    expect(summary(matchGateway(proxy, gw, [plain, wild, foo, other], {}))).toEqual(expected);
    expect(summary(matchGateway(proxy, gw, [other, foo, wild, plain], {}))).toEqual(expected);
  });

  it('on the * listener, a route naming * stays on the * host; a shared port takes the first protocol', () => {
    const gw = meshGateway('edge', {
      selectors: sel({ [SVC]: 'edge' }),
      listeners: [
        { port: 80, protocol: 'HTTP' },
        { port: 80, protocol: 'TCP', hostname: 'tcp.example.com' },
      ],
    });
    const star = httpRoute('star', {
      selectors: sel({ [SVC]: 'edge' }),
      hostnames: ['*'],
      rules: [{ backends: [backend('s')] }],
    });
    expect(summary(matchGateway(proxy, gw, [star], {}))).toEqual([
      '80 HTTP *: star -> s',
      '80 HTTP tcp.example.com: star -> s',
    ]);
  });

  it('a declared named host keeps only its routes whose hostnames cover it', () => {
    const gw = meshGateway('edge', {
      selectors: sel({ [SVC]: 'edge' }),
      listeners: [{ port: 80, protocol: 'HTTP', hostname: '*.example.com' }],
    });
    const s = sel({ [SVC]: 'edge' });
    const routes = [
      httpRoute('exact', {
        selectors: s,
        hostnames: ['foo.example.com'],
        rules: [{ backends: [backend('a')] }],
      }),
      httpRoute('elsewhere', {
        selectors: s,
        hostnames: ['foo.example.org'],
        rules: [{ backends: [backend('b')] }],
      }),
      httpRoute('deeper', {
        selectors: s,
        hostnames: ['*.a.example.com'],
        rules: [{ backends: [backend('c')] }],
      }),
      httpRoute('star', { selectors: s, hostnames: ['*'], rules: [{ backends: [backend('d')] }] }),
    ];
    expect(summary(matchGateway(proxy, gw, routes, {}))).toEqual([
      '80 HTTP *.example.com: exact -> a | star -> d',
    ]);
  });

  it('every backend of a route is a destination, mirrors included, once each, in route order', () => {
    const route = httpRoute('r', {
      selectors: sel({ [SVC]: 'edge' }),
      rules: [
        { backends: [backend('a'), backend('b', { version: 'v2' })], mirrors: [backend('shadow')] },
        { backends: [backend('a'), backend('c')], mirrors: [backend('b', { version: 'v2' }), backend('m2')] },
      ],
    });
    expect(summary(matchGateway(proxy, edge, [route], {}))).toEqual([
      '80 HTTP *: r -> a b/version=v2 shadow c m2',
    ]);
    expect(routeBackends(route)).toHaveLength(5);
  });

  it('a redirect-only route stays, with no destinations', () => {
    const redirect = httpRoute('redirect', {
      selectors: sel({ [SVC]: 'edge' }),
      rules: [{ redirect: true }],
    });
    expect(summary(matchGateway(proxy, edge, [redirect], {}))).toEqual(['80 HTTP *: redirect -> ']);
  });
});

describe('matchGateway: the best policy of each kind per destination', () => {
  const proxy = builtin('edge');
  const gw = meshGateway('edge', {
    selectors: sel({ [SVC]: 'edge' }),
    listeners: [
      { port: 80, protocol: 'HTTP', tags: { port: 'http' } },
      { port: 81, protocol: 'HTTP' },
    ],
  });
  const route = httpRoute('r', {
    selectors: sel({ [SVC]: 'edge' }),
    rules: [{ backends: [backend('api', { version: 'v1' }), backend('api', { version: 'v2' })] }],
  });
  const view = (...ps: PolicyResource[]) => summary(matchGateway(proxy, gw, [route], byKind(...ps)));
  const any = sel({ [SVC]: '*' });

  it('sources against the listener tags, destinations against the whole tag map, the pair ranked by the sum', () => {
    const base = policy('Retry', 'base', { sources: any, destinations: sel({ [SVC]: '*' }) });
    // A destination tag other than the service; as many tags as `base`, more exact values.
    const v2 = policy('Retry', 'v2', { sources: any, destinations: sel({ version: 'v2' }) });
    // 2 source tags (one from port 80's listener tags) + 1 destination tag: 3 tags, only on port 80.
    const listener = policy('Retry', 'listener', {
      sources: sel({ [SVC]: 'edge', port: 'http' }),
      destinations: sel({ [SVC]: '*' }),
    });
    const exact = policy('Retry', 'exact', {
      sources: any,
      destinations: sel({ [SVC]: 'api', version: 'v1' }),
    });
    expect(view(base, v2, listener, exact)).toEqual([
      '80 HTTP *: r -> api/version=v1{Retry=exact} api/version=v2{Retry=listener}',
      '81 HTTP *: r -> api/version=v1{Retry=exact} api/version=v2{Retry=v2}',
    ]);
  });

  it('same rank: the later creation wins, then the name sorting first', () => {
    const mk = (name: string, seconds: number) =>
      policy('Timeout', name, { sources: any, destinations: any, creationTime: at(seconds) });
    expect(view(mk('b', 1), mk('later', 2), mk('a', 1))[0]).toContain('{Timeout=later}');
    expect(view(mk('b', 1), mk('a', 1))[0]).toContain('{Timeout=a}');
  });

  it('each connection kind separately; kinds that do not attach to route destinations never appear', () => {
    const ps = ['CircuitBreaker', 'FaultInjection', 'HealthCheck', 'RateLimit', 'Retry', 'Timeout'].map((k) =>
      policy(k, k.toLowerCase(), { sources: any, destinations: sel({ version: 'v1' }) }),
    );
    const others = ['TrafficPermission', 'TrafficRoute', 'ProxyTemplate'].map((k) =>
      policy(k, 'x', { sources: any, destinations: any, selectors: any }),
    );
    expect(view(...ps, ...others)[1]).toBe(
      '81 HTTP *: r -> api/version=v1{CircuitBreaker=circuitbreaker,FaultInjection=faultinjection,' +
        'HealthCheck=healthcheck,RateLimit=ratelimit,Retry=retry,Timeout=timeout} api/version=v2',
    );
  });

  it('a policy whose sources match no listener applies nowhere', () => {
    const p = policy('Timeout', 't', { sources: sel({ [SVC]: 'web' }), destinations: any });
    expect(view(p)).toEqual([
      '80 HTTP *: r -> api/version=v1 api/version=v2',
      '81 HTTP *: r -> api/version=v1 api/version=v2',
    ]);
  });

  it('TrafficLog (for pass_through) and TrafficTrace (selectors) configure the whole gateway', () => {
    const log = policy('TrafficLog', 'log', { sources: sel({ [SVC]: 'edge' }), destinations: any });
    const narrow = policy('TrafficLog', 'narrow', { sources: any, destinations: sel({ [SVC]: 'api' }) });
    const trace = policy('TrafficTrace', 'trace', { selectors: sel({ [SVC]: 'edge' }) });
    const result = matchGateway(proxy, gw, [route], byKind(log, narrow, trace));
    expect(result.policies).toEqual({ TrafficLog: log, TrafficTrace: trace });
    // The destination is the implicit pass_through service: naming it exactly ranks higher.
    const passThrough = policy('TrafficLog', 'pt', {
      sources: sel({ [SVC]: 'edge' }),
      destinations: sel({ [SVC]: 'pass_through' }),
    });
    expect(matchGateway(proxy, gw, [route], byKind(log, passThrough)).policies).toEqual({
      TrafficLog: passThrough,
    });
    expect(matchGateway(proxy, gw, [route], byKind(narrow))).not.toHaveProperty('policies');
  });
});

describe('gatewayAttachments and routeAttachments', () => {
  const proxy = builtin('edge');
  const gw = meshGateway('edge', {
    selectors: sel({ [SVC]: 'edge' }),
    listeners: [
      { port: 80, protocol: 'HTTP', hostname: 'foo.example.com' },
      { port: 80, protocol: 'HTTP', hostname: 'bar.example.com' },
      { port: 9000, protocol: 'TCP' },
    ],
  });
  const s = sel({ [SVC]: 'edge' });
  const routes = [
    httpRoute('foo', {
      selectors: s,
      hostnames: ['foo.example.com'],
      rules: [{ backends: [backend('a'), backend('b')] }],
    }),
    httpRoute('both', { selectors: s, rules: [{ backends: [backend('b')] }] }),
    httpRoute('redirect', { selectors: s, hostnames: ['bar.example.com'], rules: [{ redirect: true }] }),
    tcpRoute('db', { selectors: s, backends: [backend('pg')] }),
  ];
  const any = sel({ [SVC]: '*' });
  const toB = policy('Timeout', 'to-b', { sources: any, destinations: sel({ [SVC]: 'b' }) });
  const toAll = policy('Timeout', 'to-all', { sources: any, destinations: any });
  const log = policy('TrafficLog', 'log', { sources: any, destinations: any });
  const view = matchGateway(proxy, gw, routes, byKind(toB, toAll, log));

  it('a policy: only the destinations where it is the best of its kind', () => {
    expect(gatewayAttachments(view, 'Timeout', 'to-b')).toEqual([
      {
        port: 80,
        protocol: 'HTTP',
        hosts: [
          { hostName: 'bar.example.com', routes: [{ route: 'both', destinations: [{ [SVC]: 'b' }] }] },
          {
            hostName: 'foo.example.com',
            routes: [
              { route: 'both', destinations: [{ [SVC]: 'b' }] },
              { route: 'foo', destinations: [{ [SVC]: 'b' }] },
            ],
          },
        ],
      },
    ]);
    expect(gatewayAttachments(view, 'Timeout', 'to-all')).toEqual([
      {
        port: 80,
        protocol: 'HTTP',
        hosts: [{ hostName: 'foo.example.com', routes: [{ route: 'foo', destinations: [{ [SVC]: 'a' }] }] }],
      },
      {
        port: 9000,
        protocol: 'TCP',
        hosts: [{ hostName: '*', routes: [{ route: 'db', destinations: [{ [SVC]: 'pg' }] }] }],
      },
    ]);
  });

  it('a whole-gateway policy: no listeners; a policy that applies nowhere (or another kind of that name): undefined', () => {
    expect(gatewayAttachments(view, 'TrafficLog', 'log')).toEqual([]);
    expect(gatewayAttachments(view, 'Timeout', 'missing')).toBeUndefined();
    expect(gatewayAttachments(view, 'Retry', 'to-b')).toBeUndefined();
    const newer = policy('Timeout', 'to-b2', {
      sources: any,
      destinations: sel({ [SVC]: 'b' }),
      creationTime: at(9),
    });
    const lost = matchGateway(proxy, gw, routes, byKind(toAll, toB, newer));
    expect(gatewayAttachments(lost, 'Timeout', 'to-b')).toBeUndefined();
  });

  it('a route: every host that serves it with all its destinations; a redirect route with none', () => {
    expect(routeAttachments(view, 'foo')).toEqual([
      {
        port: 80,
        protocol: 'HTTP',
        hosts: [
          {
            hostName: 'foo.example.com',
            routes: [{ route: 'foo', destinations: [{ [SVC]: 'a' }, { [SVC]: 'b' }] }],
          },
        ],
      },
    ]);
    expect(routeAttachments(view, 'both')?.[0]?.hosts.map((h) => h.hostName)).toEqual([
      'bar.example.com',
      'foo.example.com',
    ]);
    expect(routeAttachments(view, 'redirect')).toEqual([
      {
        port: 80,
        protocol: 'HTTP',
        hosts: [{ hostName: 'bar.example.com', routes: [{ route: 'redirect', destinations: [] }] }],
      },
    ]);
    expect(routeAttachments(view, 'missing')).toBeUndefined();
  });
});

describe('hostnameMatches', () => {
  // kumahq/kuma 2.0.0 pkg/plugins/runtime/gateway/hostname_match_test.go
  it.each([
    ['foo.example.com', 'foo.example.com'],
    ['*.example.com', 'foo.example.com'],
    ['foo.example.com', '*.example.com'],
    ['*.example.com', '*.example.com'],
    ['foo.example.com', '*'],
  ])('%s matches %s', (host, name) => expect(hostnameMatches(host, name)).toBe(true));
  it.each([
    ['foo.example.com', 'bar.example.com'],
    ['*.example.com', 'foo.examples.com'],
    ['foo.example.com', '*.examples.com'],
    ['*.example.com', '*.examples.com'],
    ['a.foo.example.com', '*.example.com'],
    ['example.com', '*.example.com'],
  ])('%s does not match %s', (host, name) => expect(hostnameMatches(host, name)).toBe(false));
});

describe('gatewayReach', () => {
  const fields = {
    sources: sel({ [SVC]: 'src' }),
    destinations: sel({ [SVC]: 'dst' }),
    selectors: sel({ [SVC]: 'sel' }),
  };
  const reach = (type: string) =>
    gatewayReach(policy(type, 'p', fields))?.map((s) => JSON.stringify(s.match));

  it('names the list that must match the proxy, per kind', () => {
    expect(reach('MeshGateway')).toEqual(['{"mesh.io/service":"sel"}']);
    expect(reach('TrafficTrace')).toEqual(['{"mesh.io/service":"sel"}']);
    expect(reach('TrafficLog')).toEqual(['{"mesh.io/service":"src"}']);
    for (const kind of [...DESTINATION_KINDS, 'MeshGatewayRoute']) expect(reach(kind)).toEqual(['{}']);
    for (const kind of ['TrafficPermission', 'TrafficRoute', 'ProxyTemplate', 'MeshTrace'])
      expect(reach(kind)).toBeUndefined();
  });

  // The contract a view relies on: a gateway proxy none of whose tag sets the reach selectors match
  // shows nothing of the policy. Checked over a small grid of proxies, gateways, routes and policies.
  it('never misses a gateway proxy whose view includes the policy', () => {
    const proxies = ['a', 'b'].flatMap((svc) => ['east', 'west'].map((zone) => builtin(svc, { zone })));
    const gateways = [
      meshGateway('gw-a', {
        selectors: sel({ [SVC]: 'a' }),
        tags: { [SVC]: 'gw-a' },
        listeners: [
          { port: 80, protocol: 'HTTP', tags: { port: 'http' } },
          { port: 90, protocol: 'TCP' },
        ],
      }),
      meshGateway('gw-b', {
        selectors: sel({ [SVC]: 'b', zone: '*' }),
        listeners: [{ port: 80, protocol: 'HTTP' }],
      }),
    ];
    const baseRoutes = [
      httpRoute('web', {
        selectors: sel({ [SVC]: '*' }),
        rules: [{ backends: [backend('x')], mirrors: [backend('y')] }],
      }),
      tcpRoute('db', { selectors: sel({ [SVC]: 'gw-a' }), backends: [backend('x', { v: '1' })] }),
    ];
    const selectors: Array<Record<string, string>> = [
      { [SVC]: 'a' },
      { [SVC]: 'b' },
      { [SVC]: 'gw-a' },
      { [SVC]: 'edge' },
      { port: 'http' },
      { zone: 'east' },
      { [SVC]: '*' },
    ];
    const appears = (view: GatewayView, name: string, type: string) =>
      view.gateway.name === name ||
      view.policies?.[type]?.name === name ||
      view.listeners.some((l) =>
        l.hosts.some((h) =>
          h.routes.some(
            (r) => r.route === name || r.destinations.some((d) => d.policies[type]?.name === name),
          ),
        ),
      );
    let seen = 0;
    const types = [...DESTINATION_KINDS, 'TrafficLog', 'TrafficTrace', 'MeshGateway', 'MeshGatewayRoute'];
    for (const type of types)
      for (const s of selectors)
        for (const d of [{ [SVC]: 'x' }, { [SVC]: '*' }, { v: '1' }] as Array<Record<string, string>>) {
          const p =
            type === 'MeshGateway'
              ? meshGateway('p', {
                  selectors: sel(s),
                  listeners: [{ port: 70, protocol: 'HTTP' }],
                  creationTime: at(9),
                })
              : type === 'MeshGatewayRoute'
                ? httpRoute('p', { selectors: sel(s), rules: [{ backends: [backend('z')] }] })
                : policy(type, 'p', { sources: sel(s), destinations: sel(d), selectors: sel(s) });
          for (const proxy of proxies) {
            const gateway = selectGateway(
              proxy,
              type === 'MeshGateway' ? [...gateways, p as (typeof gateways)[number]] : gateways,
            );
            if (!gateway) continue;
            const routes =
              type === 'MeshGatewayRoute' ? [...baseRoutes, p as (typeof baseRoutes)[number]] : baseRoutes;
            const view = matchGateway(proxy, gateway, routes, byKind(p));
            if (!appears(view, 'p', type)) continue;
            seen++;
            const tagSets = [proxy.gateway!.tags];
            const reachable = (gatewayReach(p) ?? []).some(({ match }) =>
              tagSets.some((tags) => tagSelectorMatches(match, tags)),
            );
            expect(reachable, `${type} ${JSON.stringify(s)}->${JSON.stringify(d)}`).toBe(true);
          }
        }
    // The grid is not vacuous: every kind shows up somewhere.
    expect(seen).toBeGreaterThan(100);
  });
});
