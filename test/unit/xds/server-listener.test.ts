import { describe, expect, it } from 'vitest';
import type { Networking } from '../../../src/policies/proxy-interfaces.js';
import type { TargetRefPolicy } from '../../../src/policies/target-ref-match.js';
import { decodeAny, encodeAny } from '../../../src/xds/encode-any.js';
import {
  buildServerListener,
  listeningAddress,
  SERVER_LISTENER_TEMPLATE,
  type ServerListenerInput,
} from '../../../src/xds/proxyless/server-listener.js';
import { HTTP_CONNECTION_MANAGER, LISTENER, RBAC, ROUTER } from '../../../src/xds/type-urls.js';
import { entry, policy, sel, SVC, targetRefPolicy } from '../../helpers/policies.js';

const nameFor = (address: string) => SERVER_LISTENER_TEMPLATE.replace('%s', address);
const server: Networking = { address: '10.0.0.1', inbound: [{ port: 50051, tags: { [SVC]: 'greeter' } }] };
const web: Networking = { address: '10.0.1.1', inbound: [{ port: 8080, tags: { [SVC]: 'web', team: 'a' } }] };
const batch: Networking = {
  address: '10.0.2.1',
  inbound: [{ port: 8080, address: 'fd00::2', tags: { [SVC]: 'batch', team: 'b' } }],
};
const callers = [server, web, batch];
const tp = (name: string, source: Record<string, string>, destination: Record<string, string>) =>
  policy('TrafficPermission', name, { sources: sel(source), destinations: sel(destination) });
const mtp = (name: string, targetRef: TargetRefPolicy['spec']['targetRef'], ...from: unknown[]) =>
  targetRefPolicy('MeshTrafficPermission', name, { targetRef, from });
const build = (input: Partial<ServerListenerInput>, name = nameFor('10.0.0.1:50051')) =>
  buildServerListener(name, {
    server,
    callers,
    trafficPermissions: [],
    meshTrafficPermissions: [],
    ...input,
  });
type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any
const hcmOf = (l: Json): Json => l.filter_chains[0].filters[0].typed_config;
/** The RBAC rules of a built Listener. */
const rulesOf = (l: Json): Json => hcmOf(l).http_filters[0].typed_config.rules;
/** The allowed addresses, from the principals. */
const allowedOf = (l: Json): string[] =>
  Object.values(rulesOf(l).policies as Record<string, Json>).flatMap((p) =>
    (p.principals as Json[]).map(
      (pr) => `${pr.direct_remote_ip.address_prefix}/${pr.direct_remote_ip.prefix_len.value}`,
    ),
  );

describe('buildServerListener: the Listener of an XdsServer, with the RBAC filter', () => {
  it('has the bound address, one HttpConnectionManager with a non-forwarding route, RBAC then router', () => {
    const { listener } = build({ trafficPermissions: [tp('all', { [SVC]: '*' }, { [SVC]: '*' })] });
    expect(listener).toMatchObject({
      name: 'grpc/server?xds.resource.listening_address=10.0.0.1:50051',
      address: { socket_address: { address: '10.0.0.1', port_value: 50051 } },
    });
    const hcm = hcmOf(listener);
    expect(hcm['@type']).toBe(HTTP_CONNECTION_MANAGER);
    expect(hcm.route_config.virtual_hosts).toEqual([
      { name: 'inbound', domains: ['*'], routes: [{ match: { prefix: '' }, non_forwarding_action: {} }] },
    ]);
    expect(hcm.http_filters.map((f: Json) => [f.name, f.typed_config['@type']])).toEqual([
      ['envoy.filters.http.rbac', RBAC],
      ['envoy.filters.http.router', ROUTER],
    ]);
    expect(rulesOf(listener).action).toBe('ALLOW');
  });

  it('TrafficPermission: the callers its sources select are allowed by address (/32, /128), others not', () => {
    const { listener, notes } = build({
      trafficPermissions: [tp('web-only', { team: 'a' }, { [SVC]: 'greeter' })],
    });
    expect(allowedOf(listener)).toEqual(['10.0.1.1/32']);
    expect(notes).toEqual([]);
    const both = build({ trafficPermissions: [tp('a-and-b', { team: '*' }, { [SVC]: 'greeter' })] });
    expect(allowedOf(both.listener)).toEqual(['10.0.1.1/32', '10.0.2.1/32', 'fd00::2/128']);
  });

  it('TrafficPermission: the best one for the inbound decides, as the policy engine ranks them', () => {
    const { listener } = build({
      trafficPermissions: [
        tp('everyone', { [SVC]: '*' }, { [SVC]: '*' }),
        tp('batch-to-greeter', { [SVC]: 'batch' }, { [SVC]: 'greeter' }),
      ],
    });
    expect(allowedOf(listener)).toEqual(['10.0.2.1/32', 'fd00::2/128']);
    const other = build({ trafficPermissions: [tp('to-web', { [SVC]: '*' }, { [SVC]: 'web' })] });
    expect(allowedOf(other.listener)).toEqual([]);
  });

  it('no permission for the inbound: every call is denied (ALLOW with no policy), and a note says so', () => {
    const { listener, notes } = build({});
    expect(rulesOf(listener)).toEqual({ action: 'ALLOW', policies: {} });
    expect(notes).toEqual([
      'no TrafficPermission or MeshTrafficPermission selects this inbound: every call is denied',
    ]);
  });

  it('no inbound on the listening address: every call is denied and a note says so', () => {
    const trafficPermissions = [tp('all', { [SVC]: '*' }, { [SVC]: '*' })];
    const wrongPort = build({ trafficPermissions }, nameFor('10.0.0.1:6000'));
    expect(rulesOf(wrongPort.listener)).toEqual({ action: 'ALLOW', policies: {} });
    expect(wrongPort.notes).toEqual([
      'no inbound of this Dataplane listens on 10.0.0.1:6000: every call is denied',
    ]);
    const wrongAddress = build({ trafficPermissions }, nameFor('127.0.0.1:50051'));
    expect(rulesOf(wrongAddress.listener).policies).toEqual({});
    const anyAddress = build({ trafficPermissions }, nameFor('0.0.0.0:50051'));
    expect(allowedOf(anyAddress.listener)).toHaveLength(4);
    expect(anyAddress.listener).toMatchObject({ address: { socket_address: { address: '0.0.0.0' } } });
  });

  it('MeshTrafficPermission ALLOW / DENY: the rule of each caller decides; it wins over TrafficPermission', () => {
    const allowWeb = build({
      trafficPermissions: [tp('all', { [SVC]: '*' }, { [SVC]: '*' })],
      meshTrafficPermissions: [
        mtp(
          'greeter',
          { kind: 'MeshService', name: 'greeter' },
          entry({ kind: 'Mesh' }, { action: 'DENY' }),
          entry({ kind: 'MeshService', name: 'web' }, { action: 'ALLOW' }),
        ),
      ],
    });
    expect(allowedOf(allowWeb.listener)).toEqual(['10.0.1.1/32']);
    const denyAll = build({
      meshTrafficPermissions: [mtp('deny', { kind: 'Mesh' }, entry({ kind: 'Mesh' }, { action: 'DENY' }))],
    });
    expect(rulesOf(denyAll.listener).policies).toEqual({});
    const denyBatch = build({
      meshTrafficPermissions: [
        mtp('mesh', { kind: 'Mesh' }, entry({ kind: 'Mesh' }, { action: 'ALLOW' })),
        mtp(
          'greeter',
          { kind: 'MeshService', name: 'greeter' },
          entry({ kind: 'MeshSubset', tags: { team: 'b' } }, { action: 'DENY' }),
        ),
      ],
    });
    expect(allowedOf(denyBatch.listener)).toEqual(['10.0.0.1/32', '10.0.1.1/32']);
  });

  it('MeshTrafficPermission selecting another service does not apply; TrafficPermission then decides', () => {
    const { listener } = build({
      trafficPermissions: [tp('web-only', { [SVC]: 'web' }, { [SVC]: '*' })],
      meshTrafficPermissions: [
        mtp('other', { kind: 'MeshService', name: 'web' }, entry({ kind: 'Mesh' }, { action: 'DENY' })),
      ],
    });
    expect(allowedOf(listener)).toEqual(['10.0.1.1/32']);
  });

  it('ALLOW_WITH_SHADOW_DENY allows, and a note says the shadow deny cannot apply', () => {
    const { listener, notes } = build({
      meshTrafficPermissions: [
        mtp(
          'shadow',
          { kind: 'Mesh' },
          entry({ kind: 'MeshService', name: 'web' }, { action: 'ALLOW_WITH_SHADOW_DENY' }),
        ),
      ],
    });
    expect(allowedOf(listener)).toEqual(['10.0.1.1/32']);
    expect(notes).toEqual([
      'ALLOW_WITH_SHADOW_DENY allows: a proxyless gRPC server has no shadow rules to log a deny',
    ]);
  });

  it('a caller at a hostname cannot be a principal: said in the notes', () => {
    const named: Networking = { address: 'web.internal', inbound: [{ port: 1, tags: { [SVC]: 'web' } }] };
    const { listener, notes } = build({
      callers: [named],
      trafficPermissions: [tp('all', { [SVC]: '*' }, { [SVC]: '*' })],
    });
    expect(allowedOf(listener)).toEqual([]);
    expect(notes).toEqual(['caller address web.internal is not an IP: it cannot be allowed']);
  });

  it('a change of permission changes the HttpConnectionManager bytes and stat_prefix (the client compares them)', () => {
    const a = build({ trafficPermissions: [tp('t', { [SVC]: 'web' }, { [SVC]: '*' })] }).listener as Json;
    const b = build({ trafficPermissions: [tp('t', { [SVC]: 'batch' }, { [SVC]: '*' })] }).listener as Json;
    expect(hcmOf(a).stat_prefix).not.toBe(hcmOf(b).stat_prefix);
    expect(encodeAny(LISTENER, a).value.equals(encodeAny(LISTENER, b).value)).toBe(false);
  });

  it('every variant passes encodeAny and decodes back to the same Listener', () => {
    const variants = [
      build({ trafficPermissions: [tp('all', { [SVC]: '*' }, { [SVC]: '*' })] }),
      build({}),
      build({}, nameFor('[::1]:50051')),
      build({
        meshTrafficPermissions: [mtp('m', { kind: 'Mesh' }, entry({ kind: 'Mesh' }, { action: 'ALLOW' }))],
      }),
    ];
    for (const { listener } of variants) {
      const decoded = decodeAny(encodeAny(LISTENER, listener)) as Json;
      expect(decoded.name).toBe(listener.name);
      expect(hcmOf(decoded)).toMatchObject({
        '@type': HTTP_CONNECTION_MANAGER,
        stat_prefix: hcmOf(listener).stat_prefix,
        http_filters: [{ typed_config: { '@type': RBAC } }, { typed_config: { '@type': ROUTER } }],
      });
    }
  });
});

describe('listeningAddress: the ip:port of a server Listener name', () => {
  it('reads IPv4 and bracketed IPv6, refuses hostnames and bad ports', () => {
    expect(listeningAddress(nameFor('127.0.0.1:5000'))).toEqual({ host: '127.0.0.1', port: 5000 });
    expect(listeningAddress(nameFor('[::1]:5000'))).toEqual({ host: '::1', port: 5000 });
    expect(listeningAddress(nameFor('localhost:5000'))).toBeUndefined();
    expect(listeningAddress(nameFor('127.0.0.1:0'))).toBeUndefined();
  });
});
