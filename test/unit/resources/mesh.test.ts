import { describe, expect, it } from 'vitest';
import { mesh } from '../../../src/resources/kinds/mesh.js';
import { expectCauses, expectValid } from './helpers.js';

const full = {
  mtls: {
    enabledBackend: 'ca-1',
    // Kuma allows one mTLS backend per mesh.
    backends: [
      {
        name: 'ca-1',
        type: 'builtin',
        mode: 'PERMISSIVE',
        dpCert: { rotation: { expiration: '30d' } },
        conf: { caCert: { RSAbits: 2048, expiration: '10h' } },
      },
    ],
  },
  tracing: {
    defaultBackend: 'zipkin-1',
    backends: [
      {
        name: 'zipkin-1',
        type: 'zipkin',
        sampling: 80.5,
        conf: { url: 'http://zipkin.local:9411/api/v2/spans', traceId128bit: true, apiVersion: 'httpJson' },
      },
    ],
  },
  logging: {
    defaultBackend: 'file-1',
    backends: [
      { name: 'file-1', type: 'file', conf: { path: '/tmp/access.log' } },
      {
        name: 'tcp-1',
        type: 'tcp',
        format: '%START_TIME% %UPSTREAM_HOST%',
        conf: { address: '127.0.0.1:5000' },
      },
    ],
  },
  metrics: {
    enabledBackend: 'prom-1',
    backends: [
      {
        name: 'prom-1',
        type: 'prometheus',
        conf: { port: 5670, path: '/metrics', skipMTLS: false, tags: { env: 'prod' } },
      },
    ],
  },
  routing: { localityAwareLoadBalancing: true, zoneEgress: false },
};

describe('Mesh', () => {
  it('accepts an empty mesh and a mesh with every section', () => {
    expectValid(mesh, {});
    expect(expectValid(mesh, full)).toEqual(full);
  });

  it('accepts an empty enabledBackend as "none" and sections without backends', () => {
    expectValid(mesh, { mtls: { enabledBackend: '' }, metrics: {}, tracing: { backends: [] } });
  });

  it('requires enabledBackend / defaultBackend to name a backend of the section', () => {
    const bad = {
      mtls: { enabledBackend: 'nope', backends: [{ name: 'ca-1', type: 'builtin' }] },
      tracing: { defaultBackend: 'nope' },
      logging: { ...full.logging, defaultBackend: 'nope' },
      metrics: { ...full.metrics, enabledBackend: 'nope' },
    };
    expectCauses(mesh, bad, [
      ['mtls.enabledBackend', 'has to be set to one of the backends in the mesh'],
      'tracing.defaultBackend',
      'logging.defaultBackend',
      'metrics.enabledBackend',
    ]);
  });

  it('rejects duplicate backend names on the duplicate', () => {
    expectCauses(
      mesh,
      {
        mtls: {
          enabledBackend: 'ca-1',
          backends: [
            { name: 'ca-1', type: 'builtin' },
            { name: 'ca-1', type: 'builtin' },
          ],
        },
      },
      [
        ['mtls.backends', 'must have at most one backend'],
        ['mtls.backends[1].name', '"ca-1" name is already used for another backend'],
      ],
    );
  });

  it('still checks backend references when a backend is invalid', () => {
    expectCauses(
      mesh,
      { mtls: { enabledBackend: 'other', backends: [{ name: 'ca-1', type: 'builtin', foo: 1 }] } },
      [['mtls.backends[0].foo', 'unknown field'], 'mtls.enabledBackend'],
    );
  });

  it('checks the mTLS backend shape by type', () => {
    expectCauses(mesh, { mtls: { backends: [{ name: 'ca-1', type: 'vault' }] } }, [
      ['mtls.backends[0].type', 'must be one of "builtin", "provided"'],
    ]);
    expectCauses(mesh, { mtls: { backends: [{ name: 'ca-1' }] } }, [
      ['mtls.backends[0].type', 'cannot be empty'],
    ]);
    expectCauses(mesh, { mtls: { backends: [{ name: 'ca-1', type: 'provided' }] } }, [
      ['mtls.backends[0].conf', 'cannot be empty'],
    ]);
    expectCauses(
      mesh,
      { mtls: { backends: [{ name: 'ca-1', type: 'provided', conf: { cert: { secret: 'c' }, key: {} } }] } },
      [['mtls.backends[0].conf.key', 'requires one of "secret", "inline", "inlineString", "file"']],
    );
    expectCauses(
      mesh,
      {
        mtls: {
          backends: [
            { name: '', type: 'builtin', conf: { caCert: { RSAbits: 'big', expiration: '10 days' } } },
          ],
        },
      },
      [
        ['mtls.backends[0].name', 'cannot be empty'],
        ['mtls.backends[0].conf.caCert.RSAbits', 'must be an integer'],
        ['mtls.backends[0].conf.caCert.expiration', 'must be a duration such as 300ms, 5s, 1.5s, 10m, 1h30m'],
      ],
    );
    expectCauses(
      mesh,
      { mtls: { backends: [{ name: 'ca-1', type: 'builtin', dpCert: { rotation: { expiration: 5 } } }] } },
      [['mtls.backends[0].dpCert.rotation.expiration', 'must be a string']],
    );
  });

  it('checks tracing backends', () => {
    const zipkin = (extra: Record<string, unknown>) => ({
      tracing: { backends: [{ name: 'z', type: 'zipkin', ...extra }] },
    });
    expectCauses(mesh, zipkin({}), [['tracing.backends[0].conf', 'cannot be empty']]);
    expectCauses(mesh, zipkin({ conf: { url: 'zipkin:9411' } }), [
      ['tracing.backends[0].conf.url', 'must be a valid http or https URL'],
    ]);
    expectCauses(mesh, zipkin({ conf: { url: 'http://zipkin.local/api/v2/spans' } }), [
      ['tracing.backends[0].conf.url', 'port has to be explicitly specified'],
    ]);
    expectCauses(mesh, zipkin({ sampling: 101, conf: { url: 'http://z:9411', traceId128bit: 'yes' } }), [
      ['tracing.backends[0].sampling', 'has to be in the range 0.0-100.0'],
      ['tracing.backends[0].conf.traceId128bit', 'must be a boolean'],
    ]);
    expectCauses(
      mesh,
      { tracing: { backends: [{ name: 'z', type: 'datadog', conf: { url: 'http://z' } }] } },
      [
        ['tracing.backends[0].conf.url', 'unknown field'],
        ['tracing.backends[0].conf.address', 'cannot be empty'],
        ['tracing.backends[0].conf.port', 'cannot be empty'],
      ],
    );
  });

  it('checks logging backends by type', () => {
    const log = (b: Record<string, unknown>) => ({ logging: { backends: [{ name: 'l', ...b }] } });
    expectCauses(mesh, log({ type: 'tcp', conf: { address: 'localhost' } }), [
      ['logging.backends[0].conf.address', 'must be host:port with a port in the range 1-65535'],
    ]);
    expectCauses(mesh, log({ type: 'tcp', conf: { path: '/tmp/x' } }), [
      'logging.backends[0].conf.address',
      ['logging.backends[0].conf.path', 'unknown field'],
    ]);
    expectCauses(mesh, log({ type: 'file', conf: {} }), [
      ['logging.backends[0].conf.path', 'cannot be empty'],
    ]);
    expectCauses(mesh, log({ type: 'syslog', conf: {} }), [
      ['logging.backends[0].type', 'must be one of "file", "tcp"'],
    ]);
  });

  it('checks metrics backends', () => {
    const prom = (conf: Record<string, unknown>) => ({
      metrics: { backends: [{ name: 'p', type: 'prometheus', conf }] },
    });
    expectValid(mesh, { metrics: { backends: [{ name: 'p', type: 'prometheus' }] } });
    expectCauses(mesh, prom({ port: 70000 }), [
      ['metrics.backends[0].conf.port', 'must be in the range 1-65535'],
    ]);
    expectCauses(mesh, prom({ port: 'abc' }), [['metrics.backends[0].conf.port', 'must be an integer']]);
    expectCauses(mesh, prom({ tags: { env: '' } }), [
      ['metrics.backends[0].conf.tags.env', 'tag value must be non-empty and of [a-zA-Z0-9._:/-]'],
    ]);
  });

  it('rejects unknown fields at every level, one cause per field', () => {
    expectCauses(mesh, { foo: 1, mtls: { bar: 2 }, routing: { baz: true } }, [
      ['foo', 'unknown field'],
      ['mtls.bar', 'unknown field'],
      ['routing.baz', 'unknown field'],
    ]);
  });
});

describe('Mesh: Kuma 2.0.0 rules beyond its test table', () => {
  const log = (format: string) => ({
    logging: { backends: [{ name: 'l', type: 'file', format, conf: { path: '/tmp/x' } }] },
  });

  it('checks access log command operators as Kuma parses them', () => {
    expectValid(mesh, log('%START_TIME(%s)% %REQ(X-REQUEST-ID?X-ID):10% %DYNAMIC_METADATA(ns:key)%\n'));
    expectValid(
      mesh,
      log('[%START_TIME%] "%REQ(:METHOD)% %REQ(X-ENVOY-ORIGINAL-PATH?:PATH)%" %RESPONSE_CODE%'),
    );
    expectCauses(mesh, log('%REQ%'), [
      [
        'logging.backends[0].format',
        'format string is not valid: command "REQ" requires a header name as its argument, got "%REQ%"',
      ],
    ]);
    expectCauses(mesh, log('%REQ(a?b?c)%'), ['logging.backends[0].format']);
    expectCauses(mesh, log('%FILTER_STATE()%'), ['logging.backends[0].format']);
    expectCauses(mesh, log('%UPSTREAM_HOST(x)%'), ['logging.backends[0].format']);
    expectCauses(mesh, log('100%'), [
      [
        'logging.backends[0].format',
        'format string is not valid: expected a command operator to start at position 4, instead got: "%"',
      ],
    ]);
  });

  it('accepts datadog tracing, constraints and outbound passthrough', () => {
    expectValid(mesh, {
      tracing: {
        backends: [
          { name: 'dd', type: 'datadog', conf: { address: 'datadog.local', port: 8126, splitService: true } },
        ],
      },
      constraints: {
        dataplaneProxy: {
          requirements: [{ tags: { 'mesh.io/zone': '*' } }],
          restrictions: [{ tags: { 'k8s.mesh.io/namespace': 'kube/system' } }],
        },
      },
      networking: { outbound: { passthrough: false } },
    });
  });

  it('requires an enabled mTLS backend when traffic goes through zone egresses', () => {
    expectCauses(mesh, { routing: { zoneEgress: true }, mtls: { enabledBackend: '' } }, [
      ['mtls', 'has to be set when zoneEgress is enabled'],
    ]);
    expectValid(mesh, {
      routing: { zoneEgress: true },
      mtls: { enabledBackend: 'ca', backends: [{ name: 'ca', type: 'builtin' }] },
    });
  });

  it('takes certificate lifetimes in Kuma’s units only', () => {
    const rotation = (expiration: string) => ({
      mtls: { backends: [{ name: 'ca', type: 'builtin', dpCert: { rotation: { expiration } } }] },
    });
    for (const ok of ['0', '1y', '4w', '30d', '24h', '90m', '60s', '500ms']) expectValid(mesh, rotation(ok));
    for (const bad of ['1h30m', '1.5h', '2e', '10']) {
      expectCauses(mesh, rotation(bad), ['mtls.backends[0].dpCert.rotation.expiration']);
    }
  });
});
