import { describe, expect, it } from 'vitest';
import { meshAccessLog } from '../../../src/resources/kinds/mesh-access-log.js';
import { meshTrace } from '../../../src/resources/kinds/mesh-trace.js';
import { meshTrafficPermission } from '../../../src/resources/kinds/mesh-traffic-permission.js';
import { registry } from '../../../src/resources/registry.js';
import { TARGET_REF_KINDS } from '../../../src/resources/target-ref.js';
import { expectCauses, expectValid } from './helpers.js';

// Valid and invalid cases of Kuma 2.0's validator tests (pkg/plugins/policies/*/api/v1alpha1/validator_test.go
// and pkg/plugins/policies/matchers/validators/validator_test.go at tag 2.0.0), worded in the API's terms.

const mesh = { kind: 'Mesh' };
const allow = (targetRef: Record<string, unknown>, action = 'ALLOW') => ({ targetRef, default: { action } });
const mtp = (targetRef: unknown, from: unknown) => ({ spec: { targetRef, from } });

describe('targetRef (extra-policies.md; Kuma 2.0 ValidateTargetRef)', () => {
  it('sorts its kinds as Kuma 2.0 does', () => {
    expect(TARGET_REF_KINDS).toEqual([
      'Mesh',
      'MeshSubset',
      'MeshService',
      'MeshServiceSubset',
      'MeshGatewayRoute',
    ]);
  });

  it('accepts each kind with the fields it takes', () => {
    for (const top of [
      { kind: 'Mesh' },
      { kind: 'MeshSubset', tags: { 'kuma.io/zone': 'us-east' } },
      { kind: 'MeshSubset' },
      { kind: 'MeshService', name: 'backend' },
      { kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v1' } },
      { kind: 'MeshServiceSubset', name: 'backend' },
      { kind: 'MeshServiceSubset', name: 'backend', tags: {} },
      { kind: 'MeshGatewayRoute', name: 'backend-gateway-route' },
    ]) {
      expectValid(meshTrafficPermission, mtp(top, [allow(mesh)]));
    }
  });

  it('needs a kind, and refuses kinds that do not exist', () => {
    // A missing enum is worded as a wrong one, as for every kind.
    expectCauses(meshTrafficPermission, mtp({}, [allow(mesh)]), [
      [
        'spec.targetRef.kind',
        'must be one of "Mesh", "MeshSubset", "MeshService", "MeshServiceSubset", "MeshGatewayRoute"',
      ],
    ]);
    expectCauses(meshTrafficPermission, mtp({ kind: 'MeshHTTPRoute', name: 'r' }, [allow(mesh)]), [
      [
        'spec.targetRef.kind',
        'must be one of "Mesh", "MeshSubset", "MeshService", "MeshServiceSubset", "MeshGatewayRoute"',
      ],
    ]);
  });

  it('refuses the fields a kind does not take, and requires name where it is needed', () => {
    const cases: Array<[Record<string, unknown>, Array<[string, string]>]> = [
      [
        { kind: 'Mesh', mesh: 'mesh-1', tags: { tag1: 'value1' } },
        [
          ['spec.targetRef.mesh', 'cannot be set with kind Mesh'],
          ['spec.targetRef.tags', 'cannot be set with kind Mesh'],
        ],
      ],
      [{ kind: 'Mesh', name: 'mesh-1' }, [['spec.targetRef.name', 'cannot be set with kind Mesh']]],
      [
        { kind: 'MeshSubset', name: 'mesh-1' },
        [['spec.targetRef.name', 'cannot be set with kind MeshSubset']],
      ],
      [
        { kind: 'MeshService', name: 'backend', mesh: 'mesh-1' },
        [['spec.targetRef.mesh', 'cannot be set with kind MeshService']],
      ],
      [
        { kind: 'MeshService', tags: { tag1: 'value1' } },
        [
          ['spec.targetRef.name', 'must be set with kind MeshService'],
          ['spec.targetRef.tags', 'cannot be set with kind MeshService'],
        ],
      ],
      [
        { kind: 'MeshServiceSubset', tags: {} },
        [['spec.targetRef.name', 'must be set with kind MeshServiceSubset']],
      ],
      [
        { kind: 'MeshServiceSubset', name: 'backend', mesh: 'mesh-1', tags: { version: 'v1' } },
        [['spec.targetRef.mesh', 'cannot be set with kind MeshServiceSubset']],
      ],
      [
        { kind: 'MeshGatewayRoute', mesh: 'mesh-1', tags: { tag1: 'value1' } },
        [
          ['spec.targetRef.name', 'must be set with kind MeshGatewayRoute'],
          ['spec.targetRef.mesh', 'cannot be set with kind MeshGatewayRoute'],
        ],
      ],
    ];
    for (const [top, causes] of cases) expectCauses(meshTrafficPermission, mtp(top, [allow(mesh)]), causes);
  });

  it('checks names and tags, and refuses unknown fields', () => {
    expectCauses(
      meshTrafficPermission,
      mtp(
        { kind: 'MeshServiceSubset', name: 'bad name', tags: { 'bad key': 'v', k: 'bad value' }, port: 1 },
        [allow(mesh)],
      ),
      [
        ['spec.targetRef.name', 'must be a service name: non-empty and of [a-zA-Z0-9._:/-]'],
        'spec.targetRef.tags["bad key"]',
        'spec.targetRef.tags.k',
        ['spec.targetRef.port', 'unknown field'],
      ],
    );
    expectCauses(meshTrafficPermission, mtp({ kind: 'MeshGatewayRoute', name: 'Route_1' }, [allow(mesh)]), [
      ['spec.targetRef.name', 'must be 1 to 253 characters of [0-9a-z._-], starting with a letter or digit'],
    ]);
  });
});

describe('MeshTrafficPermission', () => {
  it('accepts the reference examples', () => {
    expectValid(
      meshTrafficPermission,
      mtp(mesh, [
        allow(mesh),
        allow({ kind: 'MeshSubset', tags: { 'kuma.io/zone': 'us-east', env: 'dev' } }, 'DENY'),
        allow({ kind: 'MeshService', name: 'backend' }),
        allow({ kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v1' } }, 'DENY'),
        allow(mesh, 'ALLOW_WITH_SHADOW_DENY'),
      ]),
    );
    expectValid(
      meshTrafficPermission,
      mtp({ kind: 'MeshSubset', tags: { env: 'prod' } }, [allow(mesh, 'DENY')]),
    );
    expectValid(meshTrafficPermission, mtp({ kind: 'MeshService', name: 'backend' }, [allow(mesh, 'DENY')]));
    expectValid(
      meshTrafficPermission,
      mtp({ kind: 'MeshServiceSubset', name: 'backend', tags: { version: 'v2' } }, [allow(mesh, 'DENY')]),
    );
    expectValid(
      meshTrafficPermission,
      mtp({ kind: 'MeshGatewayRoute', name: 'backend-gateway-route' }, [allow(mesh, 'DENY')]),
    );
  });

  it('keeps the fields under spec and echoes them', () => {
    const spec = mtp(mesh, [allow(mesh)]);
    expect(expectValid(meshTrafficPermission, spec)).toEqual(spec);
    expectCauses(meshTrafficPermission, { targetRef: mesh, from: [allow(mesh)] }, [
      ['spec', 'cannot be empty'],
      ['targetRef', 'unknown field'],
      ['from', 'unknown field'],
    ]);
  });

  it('needs a targetRef and at least one from item', () => {
    expectCauses(meshTrafficPermission, { spec: {} }, [
      ['spec.targetRef', 'cannot be empty'],
      ['spec.from', 'cannot be empty'],
    ]);
    expectCauses(meshTrafficPermission, mtp({ kind: 'MeshService', name: 'backend' }, []), [
      ['spec.from', 'must have at least one element'],
    ]);
  });

  it('refuses MeshGatewayRoute in from', () => {
    expectCauses(
      meshTrafficPermission,
      mtp({ kind: 'MeshService', name: 'backend' }, [allow({ kind: 'MeshGatewayRoute', name: 'mgr-1' })]),
      [
        [
          'spec.from[0].targetRef.kind',
          'must be one of "Mesh", "MeshSubset", "MeshService", "MeshServiceSubset"',
        ],
      ],
    );
  });

  it('needs a default with a known action', () => {
    expectCauses(meshTrafficPermission, mtp(mesh, [{ targetRef: mesh }]), [
      ['spec.from[0].default', 'cannot be empty'],
    ]);
    expectCauses(meshTrafficPermission, mtp(mesh, [{ targetRef: mesh, default: {} }]), [
      ['spec.from[0].default.action', 'must be one of "ALLOW", "DENY", "ALLOW_WITH_SHADOW_DENY"'],
    ]);
    expectCauses(meshTrafficPermission, mtp(mesh, [allow(mesh, 'allow')]), [
      ['spec.from[0].default.action', 'must be one of "ALLOW", "DENY", "ALLOW_WITH_SHADOW_DENY"'],
    ]);
  });
});

const web = { kind: 'MeshService', name: 'web-frontend' };
const logs = (backends: unknown[]) => ({ backends });
const fromMesh = (backends: unknown[]) => ({
  spec: { targetRef: web, from: [{ targetRef: mesh, default: logs(backends) }] },
});

describe('MeshAccessLog', () => {
  it('accepts the reference examples', () => {
    expectValid(meshAccessLog, {
      spec: {
        targetRef: web,
        from: [
          {
            targetRef: mesh,
            default: logs([
              {
                tcp: {
                  format: { json: [{ key: 'start_time', value: '%START_TIME%' }] },
                  address: '127.0.0.1:5000',
                },
              },
            ]),
          },
        ],
        to: [
          {
            targetRef: { kind: 'MeshService', name: 'web-backend' },
            default: logs([
              { file: { format: { plain: '{"start_time": "%START_TIME%"}' }, path: '/tmp/logs.txt' } },
            ]),
          },
        ],
      },
    });
    expectValid(meshAccessLog, fromMesh([{ file: { path: '/tmp/logs.txt' } }]));
    expectValid(meshAccessLog, fromMesh([]));
    // Kuma's formats end with a newline.
    expectValid(
      meshAccessLog,
      fromMesh([{ file: { path: '/tmp/l', format: { plain: '[%START_TIME%]\n' } } }]),
    );
  });

  it('needs at least one of to and from', () => {
    expectCauses(meshAccessLog, { spec: { targetRef: mesh } }, [
      ['spec', 'requires at least one of "to", "from"'],
    ]);
    expectCauses(meshAccessLog, { spec: { targetRef: mesh, to: [], from: [] } }, [
      ['spec', 'requires at least one of "to", "from"'],
    ]);
  });

  it('allows Mesh in from, and Mesh or MeshService in to (Kuma 2.0)', () => {
    const item = (targetRef: unknown) => ({ targetRef, default: logs([]) });
    expectCauses(
      meshAccessLog,
      {
        spec: {
          targetRef: mesh,
          from: [item({ kind: 'MeshService', name: 'a' })],
          to: [item({ kind: 'MeshSubset' }), item({ kind: 'MeshService', name: 'b' }), item(mesh)],
        },
      },
      [
        ['spec.from[0].targetRef.kind', 'must be "Mesh"'],
        ['spec.to[0].targetRef.kind', 'must be one of "Mesh", "MeshService"'],
      ],
    );
  });

  it('refuses to on a MeshGatewayRoute', () => {
    expectCauses(
      meshAccessLog,
      {
        spec: {
          targetRef: { kind: 'MeshGatewayRoute', name: 'some-mesh-gateway-route' },
          to: [{ targetRef: mesh, default: logs([{ file: { path: '/tmp/logs.txt' } }]) }],
        },
      },
      [['spec.to', 'cannot be set when targetRef.kind is MeshGatewayRoute: a gateway route has no outbound']],
    );
  });

  it('needs default.backends', () => {
    expectCauses(meshAccessLog, { spec: { targetRef: mesh, to: [{ targetRef: mesh }] } }, [
      ['spec.to[0].default', 'cannot be empty'],
    ]);
    expectCauses(meshAccessLog, { spec: { targetRef: mesh, from: [{ targetRef: mesh, default: {} }] } }, [
      ['spec.from[0].default.backends', 'cannot be empty'],
    ]);
  });

  it('checks backends: exactly one of tcp and file, a valid path and address', () => {
    const at = 'spec.from[0].default.backends';
    expectCauses(
      meshAccessLog,
      fromMesh([
        { file: { format: { plain: 'x' } } },
        { file: { path: '#not_valid' } },
        { tcp: { address: 'not_valid_url' } },
        { tcp: { address: '127.0.0.1:5000' }, file: { path: '/tmp/logs.txt' } },
        {},
        { tcp: { address: 'http://logs.com:99999' } },
      ]),
      [
        [`${at}[0].file.path`, 'cannot be empty'],
        [`${at}[1].file.path`, 'must be an absolute file path'],
        [`${at}[2].tcp.address`, 'must be an address: host, host:port or a URL'],
        [`${at}[3]`, 'only one of "tcp", "file" can be set, got "tcp", "file"'],
        [`${at}[4]`, 'requires one of "tcp", "file"'],
        [`${at}[5].tcp.address`, 'must be an address: host, host:port or a URL'],
      ],
    );
  });

  it('takes the addresses Kuma 2.0 takes (a URL, a host, host:port) and a format of neither kind', () => {
    expectValid(
      meshAccessLog,
      fromMesh([
        { tcp: { address: 'http://logs.com' } },
        { tcp: { address: 'logs.com' } },
        { tcp: { address: '[::1]:5000', format: {} } },
        { file: { path: '/tmp/logs.txt', format: {} } },
      ]),
    );
  });

  it('checks formats: at most one of plain and json, json pairs non-empty and valid JSON', () => {
    const at = 'spec.from[0].default.backends';
    const file = (format: unknown) => ({ file: { path: '/tmp/logs.txt', format } });
    expectCauses(
      meshAccessLog,
      fromMesh([
        file({ json: [{ value: '%START_TIME%' }] }),
        file({ json: [{ key: 'start_time' }] }),
        file({ json: [{ key: '"', value: '%START_TIME%' }] }),
        { tcp: { address: '127.0.0.1:5000', format: { plain: 'x', json: [{ key: 'k', value: 'v' }] } } },
        file({ json: [] }),
        { tcp: { address: 'logs.com:5000', format: { json: [] } } },
      ]),
      [
        [`${at}[0].file.format.json[0].key`, 'cannot be empty'],
        [`${at}[1].file.format.json[0].value`, 'cannot be empty'],
        [`${at}[2].file.format.json[0]`, 'key and value must form a valid JSON object {"<key>": "<value>"}'],
        [`${at}[3].tcp.format`, 'only one of "plain", "json" can be set, got "plain", "json"'],
        [`${at}[4].file.format.json`, 'must have at least one element'],
        [`${at}[5].tcp.format.json`, 'must have at least one element'],
      ],
    );
  });
});

const trace = (
  conf: Record<string, unknown>,
  targetRef: unknown = { kind: 'MeshService', name: 'backend' },
) => ({
  spec: { targetRef, default: conf },
});
const datadog = (url: string) => trace({ backends: [{ datadog: { url } }] });
const DATADOG_URL = 'spec.default.backends[0].datadog.url';

describe('MeshTrace', () => {
  const tags = [
    { name: 'team', literal: 'core' },
    { name: 'env', header: { name: 'x-env', default: 'prod' } },
    { name: 'version', header: { name: 'x-version' } },
  ];
  const sampling = { overall: 80, random: 60, client: 40 };

  it('accepts the reference examples', () => {
    expectValid(
      meshTrace,
      trace({
        backends: [
          {
            zipkin: {
              url: 'http://jaeger-collector.mesh-observability:9411/api/v2/spans',
              apiVersion: 'httpJson',
              traceId128bit: true,
              sharedSpanContext: false,
            },
          },
        ],
        tags,
        sampling,
      }),
    );
    expectValid(meshTrace, trace({ backends: [], tags, sampling }));
    expectValid(
      meshTrace,
      trace({ backends: [{ datadog: { url: 'http://intake.datadoghq.eu:8126', splitService: true } }] }),
    );
    expectValid(meshTrace, trace({ backends: [] }, mesh));
    expectValid(meshTrace, trace({ backends: [] }, { kind: 'MeshSubset', tags: { env: 'prod' } }));
    expectValid(
      meshTrace,
      trace({ backends: [] }, { kind: 'MeshServiceSubset', name: 'b', tags: { v: '1' } }),
    );
  });

  it('needs default.backends', () => {
    expectCauses(meshTrace, { spec: { targetRef: mesh } }, [['spec.default', 'cannot be empty']]);
    expectCauses(meshTrace, trace({}), [['spec.default.backends', 'cannot be empty']]);
  });

  it('takes MeshGatewayRoute at the top, as Kuma 2.0 does', () => {
    expectValid(meshTrace, trace({ backends: [] }, { kind: 'MeshGatewayRoute', name: 'r' }));
  });

  it('takes at most one backend, of exactly one type', () => {
    const zipkin = { zipkin: { url: 'http://jaeger-collector1.mesh-observability:9411/api/v2/spans' } };
    expectCauses(meshTrace, trace({ backends: [zipkin, zipkin] }), [
      ['spec.default.backends', 'must have at most one element'],
    ]);
    expectCauses(meshTrace, trace({ backends: [{ unknown: {} }] }), [
      ['spec.default.backends[0]', 'requires one of "zipkin", "datadog"'],
      ['spec.default.backends[0].unknown', 'unknown field'],
    ]);
  });

  it('checks zipkin', () => {
    const zipkin = (z: Record<string, unknown>) => trace({ backends: [{ zipkin: z }] });
    expectCauses(meshTrace, zipkin({}), [['spec.default.backends[0].zipkin.url', 'cannot be empty']]);
    expectCauses(meshTrace, zipkin({ url: 'not_valid_url' }), [
      ['spec.default.backends[0].zipkin.url', 'must be a valid URL'],
    ]);
    expectCauses(
      meshTrace,
      zipkin({ url: 'http://jaeger:9411/api/v2/spans', apiVersion: 'invalid_api_version' }),
      [['spec.default.backends[0].zipkin.apiVersion', 'must be one of "httpJson", "httpProto"']],
    );
  });

  it('checks the datadog url: http, a port, nothing else', () => {
    expectCauses(meshTrace, datadog('not_valid_url'), [[DATADOG_URL, 'must be a valid URL']]);
    expectCauses(meshTrace, datadog('http://intake.datadoghq.eu'), [[DATADOG_URL, 'port must be set']]);
    expectCauses(meshTrace, datadog('http://intake.datadoghq.eu:999999'), [
      [DATADOG_URL, 'port must be in the range 1-65535'],
    ]);
    expectCauses(meshTrace, datadog('sql://intake.datadoghq.eu:8126'), [
      [DATADOG_URL, 'scheme must be http'],
    ]);
    expectCauses(meshTrace, datadog('http://intake.datadoghq.eu:8126/some/path'), [
      [DATADOG_URL, 'must not have a user, path, query or fragment'],
    ]);
    expectCauses(meshTrace, datadog('https://user@intake.datadoghq.eu'), [
      [DATADOG_URL, 'scheme must be http'],
      [DATADOG_URL, 'port must be set'],
      [DATADOG_URL, 'must not have a user, path, query or fragment'],
    ]);
  });

  it('checks tags: a name and exactly one of literal and header', () => {
    const dd = [{ datadog: { url: 'http://intake.datadoghq.eu:443' } }];
    expectCauses(
      meshTrace,
      trace({
        backends: dd,
        tags: [{ literal: 'example' }, { header: { default: 'example' } }, { name: 'example' }],
      }),
      [
        ['spec.default.tags[0].name', 'cannot be empty'],
        ['spec.default.tags[1].name', 'cannot be empty'],
        ['spec.default.tags[1].header.name', 'cannot be empty'],
        ['spec.default.tags[2]', 'requires one of "literal", "header"'],
      ],
    );
  });

  it('checks sampling: whole percents 0-100', () => {
    expectCauses(meshTrace, trace({ backends: [], sampling: { overall: 101, client: -1, random: 1.5 } }), [
      ['spec.default.sampling.overall', 'must be in the range 0-100'],
      ['spec.default.sampling.client', 'must be in the range 0-100'],
      ['spec.default.sampling.random', 'must be an integer'],
    ]);
  });
});

describe('the targetRef kinds in the registry', () => {
  it('are mesh-scoped policies that flow down, named and placed as Kuma 2.0 names them', () => {
    const row = (kind: string) => {
      const d = registry.get(kind);
      return [
        d.path,
        d.catalogue?.displayName,
        d.catalogue?.singularDisplayName,
        d.scope,
        d.sync,
        d.isPolicy,
      ];
    };
    expect(row('MeshTrafficPermission')).toEqual([
      'meshtrafficpermissions',
      'Mesh Traffic Permissions',
      'Mesh Traffic Permission',
      'mesh',
      'down',
      true,
    ]);
    expect(row('MeshAccessLog')).toEqual([
      'meshaccesslogs',
      'Mesh Access Logs',
      'Mesh Access Log',
      'mesh',
      'down',
      true,
    ]);
    expect(row('MeshTrace')).toEqual(['meshtraces', 'Mesh Traces', 'Mesh Trace', 'mesh', 'down', true]);
  });
});
