import { describe, expect, it } from 'vitest';
import { dataplane } from '../../../src/resources/kinds/dataplane.js';
import { expectCauses, expectValid } from './helpers.js';

const SVC = 'mesh.io/service';
const inbound = (extra: Record<string, unknown> = {}) => ({
  port: 8080,
  tags: { [SVC]: 'backend' },
  ...extra,
});
const dp = (networking: Record<string, unknown>) => ({ networking: { address: '10.0.0.1', ...networking } });

describe('Dataplane', () => {
  it('accepts a sidecar with every field', () => {
    const spec = {
      networking: {
        address: '10.0.0.1',
        advertisedAddress: '192.168.0.1',
        admin: { port: 9901 },
        inbound: [
          inbound({
            servicePort: 18080,
            address: '10.0.0.2',
            serviceAddress: '127.0.0.1',
            tags: { [SVC]: 'backend', 'mesh.io/protocol': 'http', version: 'v1' },
            health: { ready: true },
          }),
          inbound({ port: 8081 }),
        ],
        outbound: [
          { port: 10001, tags: { [SVC]: 'redis' } },
          { port: 10002, address: '127.0.0.1', service: 'web' },
        ],
        transparentProxying: { redirectPortInbound: 15006, redirectPortOutbound: 15001 },
      },
    };
    expect(expectValid(dataplane, spec)).toEqual(spec);
  });

  it('accepts a Prometheus override of the mesh metrics backend (Kuma 2.0 `metrics`), and checks it', () => {
    const metrics = { type: 'prometheus', conf: { port: 8765, path: '/stats', tags: { team: 'a' } } };
    expect(expectValid(dataplane, { ...dp({ inbound: [inbound()] }), metrics })).toMatchObject({ metrics });
    expectValid(dataplane, { ...dp({ inbound: [inbound()] }), metrics: { name: 'p', type: 'prometheus' } });
    expectCauses(
      dataplane,
      { ...dp({ inbound: [inbound()] }), metrics: { type: 'prometheus', conf: { port: 0 } } },
      [['metrics.conf.port', 'must be in the range 1-65535']],
    );
  });

  it('accepts a gateway proxy and IPv6 addresses', () => {
    expectValid(dataplane, dp({ gateway: { tags: { [SVC]: 'edge' }, type: 'BUILTIN' } }));
    expectValid(dataplane, dp({ address: 'fd00::1', inbound: [inbound({ address: '::1' })] }));
  });

  it('requires the service tag on every inbound, with Kuma’s exact path', () => {
    expectCauses(dataplane, dp({ inbound: [inbound({ tags: { version: 'v1' } })] }), [
      ['networking.inbound[0].tags["mesh.io/service"]', 'tag has to exist'],
    ]);
  });

  it('rejects wrong types, out-of-range ports and bad addresses on the field', () => {
    expectCauses(dataplane, dp({ inbound: [inbound({ port: 'abc' })] }), [
      ['networking.inbound[0].port', 'must be an integer'],
    ]);
    expectCauses(dataplane, dp({ inbound: [inbound({ port: 70000, servicePort: 0 })] }), [
      ['networking.inbound[0].port', 'must be in the range 1-65535'],
      ['networking.inbound[0].servicePort', 'must be in the range 1-65535'],
    ]);
    expectCauses(dataplane, dp({ address: 'bad address', inbound: [inbound({ port: 80.5 })] }), [
      ['networking.address', 'must be a valid IP address or domain name'],
      ['networking.inbound[0].port', 'must be an integer'],
    ]);
    // As in Kuma: a domain name is an address too, and the unspecified address is not one.
    expectValid(dataplane, dp({ address: 'backend.local', inbound: [inbound()] }));
    expectCauses(dataplane, dp({ address: '0.0.0.0', inbound: [inbound()] }), [
      ['networking.address', 'must not be 0.0.0.0 or ::'],
    ]);
  });

  it('requires networking, its address and inbound port and tags', () => {
    expectCauses(dataplane, {}, [['networking', 'cannot be empty']]);
    expectCauses(dataplane, { networking: { inbound: [{}] } }, [
      ['networking.address', 'cannot be empty'],
      ['networking.inbound[0].port', 'cannot be empty'],
      // Kuma reports absent tags as a missing service tag.
      ['networking.inbound[0].tags["mesh.io/service"]', 'tag has to exist'],
    ]);
  });

  it('checks tag keys and values', () => {
    expectCauses(dataplane, dp({ inbound: [inbound({ tags: { [SVC]: 'a b', 'bad key': 'x' } })] }), [
      [
        'networking.inbound[0].tags["mesh.io/service"]',
        'tag value must consist of letters, digits, dots, dashes, colons and underscores',
      ],
      [
        'networking.inbound[0].tags["bad key"]',
        'tag name must consist of letters, digits, dots, dashes, colons, slashes and underscores',
      ],
    ]);
    // As in Kuma, a concrete tag value has no slash (a key may).
    expectCauses(dataplane, dp({ inbound: [inbound({ tags: { [SVC]: 'a/b' } })] }), [
      'networking.inbound[0].tags["mesh.io/service"]',
    ]);
    // A selector wildcard is not a concrete tag value.
    expectCauses(dataplane, dp({ inbound: [inbound({ tags: { [SVC]: '*' } })] }), [
      'networking.inbound[0].tags["mesh.io/service"]',
    ]);
  });

  it('has either inbounds or a gateway, not both (cause on networking)', () => {
    expectCauses(dataplane, dp({}), [
      ['networking', 'has to contain at least one inbound interface or gateway'],
    ]);
    expectCauses(dataplane, dp({ inbound: [] }), ['networking']);
    // As in Kuma: the cause is on the inbounds, which the gateway's kind does not allow.
    expectCauses(dataplane, dp({ inbound: [inbound()], gateway: { tags: { [SVC]: 'edge' } } }), [
      ['networking.inbound', 'inbound cannot be defined for delegated gateways'],
    ]);
  });

  it('checks the gateway', () => {
    expectCauses(dataplane, dp({ gateway: { tags: { app: 'edge' }, type: 'EXTERNAL' } }), [
      ['networking.gateway.tags', 'mandatory tag "mesh.io/service" is missing'],
      ['networking.gateway.type', 'must be one of "BUILTIN", "DELEGATED"'],
    ]);
  });

  it('requires unique (address, port) inbounds; the address defaults to the data plane’s', () => {
    expectCauses(
      dataplane,
      dp({ inbound: [inbound(), inbound({ port: 8081 }), inbound({ address: '10.0.0.1' })] }),
      [['networking.inbound[2].port', 'port and address already used by inbound[0]']],
    );
    expectValid(dataplane, dp({ inbound: [inbound(), inbound({ address: '10.0.0.2' })] }));
  });

  it('has outbounds that name their service by tags or by service (Kuma allows both; tags win)', () => {
    expectCauses(dataplane, dp({ inbound: [inbound()], outbound: [{ port: 10001 }] }), [
      ['networking.outbound[0].tags', 'mandatory tag "mesh.io/service" is missing'],
    ]);
    expectValid(
      dataplane,
      dp({ inbound: [inbound()], outbound: [{ port: 10001, service: 'a', tags: { [SVC]: 'a' } }] }),
    );
    expectValid(dataplane, dp({ inbound: [inbound()], outbound: [{ port: 10001, service: 'a', tags: {} }] }));
    expectCauses(
      dataplane,
      dp({ inbound: [inbound()], outbound: [{ port: 10001, service: 'a', tags: { version: 'v1' } }] }),
      ['networking.outbound[0].tags'],
    );
  });

  it('rejects unknown fields and bad nested shapes', () => {
    expectCauses(
      dataplane,
      dp({
        inbound: [inbound({ health: { ready: 'yes' }, foo: 1 })],
        admin: { port: 9901, host: 'x' },
        transparentProxying: { redirectPortInbound: -1 },
        probes: {},
      }),
      [
        ['networking.inbound[0].health.ready', 'must be a boolean'],
        ['networking.inbound[0].foo', 'unknown field'],
        ['networking.admin.host', 'unknown field'],
        ['networking.transparentProxying.redirectPortInbound', 'must be in the range 1-65535'],
        ['networking.probes', 'unknown field'],
      ],
    );
  });

  it('lists every violation, including cross-field ones next to field errors', () => {
    expectCauses(
      dataplane,
      dp({ address: 'x y', inbound: [inbound({ port: 'abc' })], gateway: { tags: {} } }),
      ['networking.address', 'networking.inbound[0].port', 'networking.gateway.tags', 'networking.inbound'],
    );
  });
});

describe('Dataplane: Kuma 2.0.0 rules beyond its test table', () => {
  it('keeps the admin port off the application port an inbound forwards to on 127.0.0.1', () => {
    const spec = dp({
      address: '10.0.0.1',
      admin: { port: 9901 },
      inbound: [inbound({ port: 8080, servicePort: 9901, serviceAddress: '127.0.0.1' })],
    });
    expectCauses(dataplane, spec, [['networking.admin.port', 'must differ from inbound']]);
    // An inbound on every address clashes too; an outbound without address listens on 127.0.0.1.
    expectCauses(
      dataplane,
      dp({ address: '10.0.0.1', admin: { port: 8080 }, inbound: [inbound({ address: '0.0.0.0' })] }),
      ['networking.admin.port'],
    );
    expectCauses(
      dataplane,
      dp({ admin: { port: 10001 }, inbound: [inbound()], outbound: [{ port: 10001, service: 'db' }] }),
      [['networking.admin.port', 'must differ from outbound']],
    );
  });

  it('lets an application share its inbound’s address on another port', () => {
    expectValid(dataplane, dp({ inbound: [inbound({ serviceAddress: '10.0.0.1', servicePort: 18080 })] }));
    expectCauses(dataplane, dp({ inbound: [inbound({ serviceAddress: '10.0.0.1', servicePort: 8080 })] }), [
      [
        'networking.inbound[0].serviceAddress',
        'serviceAddress and servicePort have to differ from address and port',
      ],
    ]);
  });

  it('accepts Kuma’s sidecar-only fields and checks their shapes', () => {
    expectValid(dataplane, {
      ...dp({
        inbound: [
          inbound({ serviceProbe: { interval: '10s', timeout: '2s', healthyThreshold: 1, tcp: {} } }),
        ],
        transparentProxying: {
          redirectPortInbound: 15006,
          redirectPortInboundV6: 15010,
          redirectPortOutbound: 15001,
          directAccessServices: ['*'],
          reachableServices: ['redis', 'web'],
        },
      }),
      probes: {
        port: 9000,
        endpoints: [{ inboundPort: 8080, inboundPath: '/healthz', path: '/8080/healthz' }],
      },
      metrics: {
        type: 'prometheus',
        conf: { port: 5670, path: '/metrics', envoy: { filterRegex: '^http', usedOnly: true } },
      },
    });
    expectCauses(
      dataplane,
      {
        ...dp({ inbound: [inbound()] }),
        metrics: { type: 'prometheus', conf: { envoy: { filterRegex: '(' } } },
      },
      [['metrics.conf.envoy.filterRegex', 'must be a valid regular expression']],
    );
  });

  it('takes a gateway proxy’s tags with a tcp protocol tag only', () => {
    expectValid(dataplane, dp({ gateway: { tags: { [SVC]: 'edge', 'mesh.io/protocol': 'tcp' } } }));
    expectCauses(
      dataplane,
      dp({ gateway: { type: 'BUILTIN', tags: { [SVC]: 'edge', 'mesh.io/protocol': 'http' } } }),
      [['networking.gateway.tags["mesh.io/protocol"]', 'only tcp is allowed here, got "http"']],
    );
  });
});
