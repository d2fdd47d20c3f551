import { describe, expect, it } from 'vitest';
import type { SidecarItem } from '../../../src/policies/match-sidecar.js';
import type { PolicyResource } from '../../../src/policies/policy-resource.js';
import type { Networking } from '../../../src/policies/proxy-interfaces.js';
import { resolveOutboundRoutes, resolveRouteWildcards } from '../../../src/policies/route-wildcards.js';
import { policy, sel, SVC } from '../../helpers/policies.js';

const route = (name: string, conf: unknown) =>
  policy('TrafficRoute', name, { sources: sel({ [SVC]: '*' }), destinations: sel({ [SVC]: '*' }), conf });

// kumahq/kuma 2.0.0 pkg/xds/topology/router_test.go, BuildRouteMap() and GetRoutes()
describe('resolveRouteWildcards (Kuma 2.0 resolveTrafficRouteWildcards)', () => {
  const routeAllDefault = route('route-all-default', {
    split: [{ weight: 100, destination: { [SVC]: '*' } }],
  });

  it('the default route: `*` becomes the service of each outbound (redis, elastic)', () => {
    expect(resolveRouteWildcards(routeAllDefault, { [SVC]: 'redis' })).toEqual({
      ...routeAllDefault,
      conf: { split: [{ weight: 100, destination: { [SVC]: 'redis' } }] },
    });
    expect(resolveRouteWildcards(routeAllDefault, { [SVC]: 'elastic' })).toEqual({
      ...routeAllDefault,
      conf: { split: [{ weight: 100, destination: { [SVC]: 'elastic' } }] },
    });
    // The stored route is not touched: the next outbound resolves it afresh.
    expect(routeAllDefault.conf).toEqual({ split: [{ weight: 100, destination: { [SVC]: '*' } }] });
  });

  it('a route without wildcards whose destinations name every outbound tag is returned as it is', () => {
    const toElasticV1 = route('everything-to-elastic-v1', {
      split: [{ weight: 100, destination: { [SVC]: 'elastic', version: 'v1' } }],
    });
    expect(resolveRouteWildcards(toElasticV1, { [SVC]: 'elastic' })).toBe(toElasticV1);
    const routeRedis = route('route-to-redis', {
      split: [
        { weight: 10, destination: { [SVC]: 'redis', version: 'v1' } },
        { weight: 90, destination: { [SVC]: 'redis', version: 'v2' } },
      ],
    });
    expect(resolveRouteWildcards(routeRedis, { [SVC]: 'redis' })).toBe(routeRedis);
  });

  it('drops every `*` tag, then adds each outbound tag the destination does not name', () => {
    const r = route('r', {
      destination: { [SVC]: '*', region: '*', version: 'v1' },
      loadBalancer: { roundRobin: {} },
    });
    expect(resolveRouteWildcards(r, { [SVC]: 'backend', region: 'eu', version: 'v2' }).conf).toEqual({
      destination: { version: 'v1', [SVC]: 'backend', region: 'eu' },
      loadBalancer: { roundRobin: {} },
    });
    // A tag the outbound lacks is dropped, not kept as `*`.
    expect(resolveRouteWildcards(r, { [SVC]: 'backend' }).conf).toEqual({
      destination: { version: 'v1', [SVC]: 'backend' },
      loadBalancer: { roundRobin: {} },
    });
    // Outbound tags fill in a destination without wildcards too.
    const plain = route('plain', { destination: { [SVC]: 'db' } });
    expect(resolveRouteWildcards(plain, { [SVC]: 'backend', env: 'prod' }).conf).toEqual({
      destination: { [SVC]: 'db', env: 'prod' },
    });
  });

  it('resolves the destinations of `conf.http` routes and their splits as well', () => {
    const r = route('r', {
      http: [
        { match: { path: { prefix: '/a' } }, destination: { [SVC]: '*', version: 'v2' } },
        { match: { path: { prefix: '/b' } }, split: [{ weight: 1, destination: { [SVC]: '*' } }] },
      ],
      destination: { [SVC]: '*' },
    });
    expect(resolveRouteWildcards(r, { [SVC]: 'web' }).conf).toEqual({
      http: [
        { match: { path: { prefix: '/a' } }, destination: { version: 'v2', [SVC]: 'web' } },
        { match: { path: { prefix: '/b' } }, split: [{ weight: 1, destination: { [SVC]: 'web' } }] },
      ],
      destination: { [SVC]: 'web' },
    });
  });
});

describe('resolveOutboundRoutes: the TrafficRoute of each outbound item, resolved for that outbound', () => {
  const routeAll = route('route-all', { destination: { [SVC]: '*' } });
  const other = policy('Timeout', 't', { conf: {} });
  const networking: Networking = {
    address: '10.0.0.1',
    inbound: [{ port: 80, tags: { [SVC]: 'web' } }],
    outbound: [
      { port: 10001, tags: { [SVC]: 'backend', version: 'v2' } },
      { port: 10002, address: '10.0.0.9', service: 'db' },
    ],
  };
  const item = (type: SidecarItem['type'], name: string, matched: Record<string, PolicyResource[]>) => ({
    type,
    name,
    service: '',
    matchedPolicies: matched,
  });

  it('outbounds by name: their own tags, or the legacy service as the service tag; other items as they are', () => {
    const inbound = item('inbound', '10.0.0.1:80:80', { TrafficPermission: [other] });
    const items = [
      inbound,
      item('outbound', '10.0.0.9:10002', { Timeout: [other], TrafficRoute: [routeAll] }),
      item('outbound', '127.0.0.1:10001', { TrafficRoute: [routeAll] }),
    ];
    const resolved = resolveOutboundRoutes(items, networking);
    expect(resolved[0]).toBe(inbound);
    expect(resolved[1].matchedPolicies.Timeout[0]).toBe(other);
    expect(
      resolved.slice(1).map((i) => (i.matchedPolicies.TrafficRoute[0] as { conf?: unknown }).conf),
    ).toEqual([{ destination: { [SVC]: 'db' } }, { destination: { [SVC]: 'backend', version: 'v2' } }]);
    expect(items[2].matchedPolicies.TrafficRoute[0]).toBe(routeAll);
  });
});
