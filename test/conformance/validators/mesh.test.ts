import { describe } from 'vitest';
import { mesh } from '../../../src/resources/kinds/mesh.js';
import { kumaCases, type KumaCase } from './kuma-cases.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/mesh_validator_test.go, entry by entry.
// Where Kuma's YAML leaves a value empty (`name:`), Kuma's proto decoding reads it as ""; the YAML
// here writes "". differs on purpose: Kuma names a backend's `conf` fields `config.*` and a dpCert
// expiration `mtls.dpcert.rotation.expiration`, fields that do not exist; our causes are on the
// fields the body has (`conf.url`, `mtls.backends[0].dpCert.rotation.expiration`).
const cases: KumaCase[] = [
  {
    name: 'should pass validation',
    yaml: `
mtls:
  enabledBackend: builtin-1
  backends:
  - name: builtin-1
    type: builtin
    dpCert:
      rotation:
        expiration: 2y
logging:
  backends:
  - name: file-1
    type: file
    conf:
      path: /path/to/file
  - name: file-2
    format: '%START_TIME% %KUMA_SOURCE_SERVICE%'
    type: file
    conf:
      path: /path/to/file2
  - name: tcp-1
    type: tcp
    conf:
      address: kibana:1234
  - name: tcp-2
    format: '%START_TIME% %KUMA_DESTINATION_SERVICE%'
    type: tcp
    conf:
      address: kibana:1234
  defaultBackend: tcp-1
tracing:
  backends:
  - name: zipkin-us
    sampling: 80.0
    type: zipkin
    conf:
      url: http://zipkin.local:9411/v2/spans
      traceId128bit: true
      apiVersion: httpProto
      sharedSpanContext: true
  - name: zipkin-eu
    type: zipkin
    conf:
      url: http://zipkin.local:9411/v2/spans
  defaultBackend: zipkin-us
metrics:
  enabledBackend: prom-1
  backends:
  - name: prom-1
    type: prometheus
    conf:
      port: 5670
      path: /metrics
      envoy:
        filterRegex: ^server[0-9]+
        usedOnly: true
      aggregate:
      - name: application
        port: 1234
        path: "/stats"
      - name: sidecar
        port: 12345
        path: "/stats/sidecar"
constraints:
  dataplaneProxy:
    requirements:
    - tags:
        k8s.mesh.io/namespace: ns-1
        mesh.io/zone: east
    restrictions:
    - tags:
        k8s.mesh.io/namespace: ns-1
        mesh.io/zone: west
routing:
  zoneEgress: true`,
  },
  {
    name: 'multiple ca backends of the same name',
    yaml: `
mtls:
  enabledBackend: backend-1
  backends:
  - name: backend-1
    type: builtin
  - name: backend-1
    type: builtin`,
    causes: [
      ['mtls.backends', 'at most one'],
      ['mtls.backends[1].name', 'already used'],
    ],
  },
  {
    name: 'enabledBackend of unknown name',
    yaml: `
mtls:
  enabledBackend: backend-2
  backends:
  - name: backend-1
    type: builtin`,
    causes: [['mtls.enabledBackend', 'one of the']],
  },
  {
    name: 'dpCert rotation invalid expiration time',
    yaml: `
mtls:
  enabledBackend: backend-3
  backends:
  - name: backend-3
    type: builtin
    dpCert:
      rotation:
        expiration: 2e`,
    // differs on purpose: on the field itself (Kuma: `mtls.dpcert.rotation.expiration`).
    causes: [['mtls.backends[0].dpCert.rotation.expiration', 'duration']],
  },
  {
    name: 'logging backend with empty name',
    yaml: `
logging:
  backends:
  - name: ""
    type: tcp
    conf: 
      address: kibana:1234`,
    causes: [['logging.backends[0].name', 'cannot be empty']],
  },
  {
    name: 'multiple logging backends of the same name',
    yaml: `
logging:
  backends:
  - name: backend-1
    type: tcp
    conf:
      address: kibana:1234
  - name: backend-1
    type: file
    conf:
      path: /path/to/file
  defaultBackend: backend-1`,
    causes: [['logging.backends[1].name', 'already used']],
  },
  {
    name: 'tcp logging address is empty',
    yaml: `
logging:
  backends:
  - name: backend-1
    type: tcp
    conf:
      address: ""
  defaultBackend: backend-1`,
    causes: [['logging.backends[0].conf.address', 'cannot be empty']],
  },
  {
    name: 'tcp logging address is invalid',
    yaml: `
logging:
  backends:
  - name: backend-1
    type: tcp
    conf:
      address: wrong-format:234:234
  defaultBackend: backend-1`,
    causes: [['logging.backends[0].conf.address', 'host:port']],
  },
  {
    name: 'file logging path is empty',
    yaml: `
logging:
  backends:
  - name: backend-1
    type: file
    conf:
      path: ""
  defaultBackend: backend-1`,
    causes: [['logging.backends[0].conf.path', 'cannot be empty']],
  },
  {
    name: 'invalid access log format',
    yaml: `
logging:
  backends:
  - name: backend-1
    format: "%START_TIME% %sent_bytes%"
    type: file
    conf:
      path: /var/logs
  defaultBackend: backend-1`,
    causes: [['logging.backends[0].format', 'command operator']],
  },
  {
    name: 'default backend has to be set to one of the backends',
    yaml: `
logging:
  backends:
  - name: backend-1
    type: file
    conf:
      path: /path
  defaultBackend: non-existing-backend`,
    causes: [['logging.defaultBackend', 'one of the']],
  },
  {
    name: 'tracing backend with empty name',
    yaml: `
tracing:
  backends:
  - name: ""
    type: zipkin
    conf:
      url: http://zipkin.local:9411/v2/spans`,
    causes: [['tracing.backends[0].name', 'cannot be empty']],
  },
  {
    name: 'multiple tracing backend with the same name',
    yaml: `
tracing:
  backends:
  - name: zipkin-us
    type: zipkin
    conf:
      url: http://zipkin.local:9411/v2/spans
  - name: zipkin-us
    type: zipkin
    conf:
      url: http://zipkin.local:9411/v2/spans`,
    causes: [['tracing.backends[1].name', 'already used']],
  },
  {
    name: 'tracing with invalid sampling',
    yaml: `
tracing:
  backends:
  - name: zipkin-us
    sampling: 100.1
    type: zipkin
    conf:
      url: http://zipkin-us.local:9411/v2/spans`,
    causes: [['tracing.backends[0].sampling', 'range']],
  },
  {
    name: 'tracing with zipkin without url',
    yaml: `
tracing:
  backends:
  - name: zipkin-us
    type: zipkin
    conf:
      url: ""`,
    causes: [['tracing.backends[0].conf.url', 'cannot be empty']],
  },
  {
    name: 'tracing with zipkin with invalid url',
    yaml: `
tracing:
  backends:
  - name: zipkin-us
    type: zipkin
    conf:
      url: invalid-url`,
    causes: [['tracing.backends[0].conf.url', 'URL']],
  },
  {
    name: 'tracing with zipkin with valid url but without port',
    yaml: `
tracing:
  backends:
  - name: zipkin-us
    type: zipkin
    conf:
      url: http://zipkin-us.local/v2/spans`,
    causes: [['tracing.backends[0].conf.url', 'port']],
  },
  {
    name: 'tracing with zipkin with invalid apiVersion',
    yaml: `
tracing:
  backends:
  - name: zipkin-us
    type: zipkin
    conf:
      url: http://zipkin-us.local:9411/v2/spans
      apiVersion: invalid`,
    causes: [['tracing.backends[0].conf.apiVersion', 'httpJsonV1']],
  },
  {
    name: 'default backend has to be set to one of the backends',
    yaml: `
tracing:
  defaultBackend: non-existent
  backends:
  - name: zipkin-us
    type: zipkin
    conf:
      url: http://zipkin.local:9411/v2/spans`,
    causes: [['tracing.defaultBackend', 'one of the']],
  },
  {
    name: 'multiple metrics backends of the same name',
    yaml: `
metrics:
  enabledBackend: backend-1
  backends:
  - name: backend-1
    type: prometheus
  - name: backend-1
    type: prometheus`,
    causes: [['metrics.backends[1].name', 'already used']],
  },
  {
    name: 'enabledBackend of unknown name',
    yaml: `
metrics:
  enabledBackend: backend-2
  backends:
  - name: backend-1
    type: prometheus`,
    causes: [['metrics.enabledBackend', 'one of the']],
  },
  {
    name: 'unknown backend types',
    yaml: `
metrics:
  backends:
  - name: backend-1
    type: xxx
logging:
  backends:
  - name: backend-1
    type: xxx
tracing:
  backends:
  - name: backend-1
    type: xxx`,
    causes: [
      ['logging.backends[0].type', 'tcp'],
      ['tracing.backends[0].type', 'zipkin'],
      ['metrics.backends[0].type', 'prometheus'],
    ],
  },
  {
    name: 'constraints dataplaneProxy with invalid tags',
    yaml: `
constraints:
  dataplaneProxy:
    requirements:
    - {}
    - tags:
        '': ''
    - tags:
        '!@#$': '!@#$'
    restrictions:
    - {}
    - tags:
        '': ''
    - tags:
        '!@#$': '!@#$'`,
    causes: [
      ['constraints.dataplaneProxy.requirements[0].tags', 'at least one tag'],
      ['constraints.dataplaneProxy.requirements[1].tags', 'tag name must be non-empty'],
      ['constraints.dataplaneProxy.requirements[1].tags[""]', 'non-empty'],
      ['constraints.dataplaneProxy.requirements[2].tags["!@#$"]', 'tag name'],
      ['constraints.dataplaneProxy.requirements[2].tags["!@#$"]', 'tag value'],
      ['constraints.dataplaneProxy.restrictions[0].tags', 'at least one tag'],
      ['constraints.dataplaneProxy.restrictions[1].tags', 'tag name must be non-empty'],
      ['constraints.dataplaneProxy.restrictions[1].tags[""]', 'non-empty'],
      ['constraints.dataplaneProxy.restrictions[2].tags["!@#$"]', 'tag name'],
      ['constraints.dataplaneProxy.restrictions[2].tags["!@#$"]', 'tag value'],
    ],
  },
  {
    name: 'multiple errors',
    yaml: `
mtls:
  enabledBackend: invalid-backend
logging:
  backends:
  - name: ""
    type: file
    conf:
      path: /path
  - name: tcp-1
    type: file
    conf:
      address: invalid-address
  - name: tcp-1
    type: tcp
    path:
      address: ""
  defaultBackend: invalid-backend`,
    causes: [
      ['mtls.enabledBackend', 'one of the'],
      ['logging.backends[0].name', 'cannot be empty'],
      ['logging.backends[1].conf.path', 'cannot be empty'],
      // differs on purpose: unknown fields are refused (decisions §3) where Kuma's decoding drops
      // them: a file backend's `conf.address`, a backend's `path`; so the tcp backend has no
      // `conf` at all, and the cause is on `conf` (Kuma: on its address).
      ['logging.backends[1].conf.address', 'unknown field'],
      ['logging.backends[2].path', 'unknown field'],
      ['logging.backends[2].conf', 'cannot be empty'],
      ['logging.backends[2].name', 'already used'],
      ['logging.defaultBackend', 'one of the'],
    ],
  },
  {
    name: 'zoneEgress enabled but mtls not defined',
    yaml: `
routing:
  zoneEgress: true`,
    causes: [['mtls', 'zoneEgress']],
  },
  {
    name: 'zoneEgress enabled but multiple ca backends of the same name',
    yaml: `
mtls:
  enabledBackend: backend-1
  backends:
  - name: backend-1
    type: builtin
  - name: backend-1
    type: builtin
routing:
  zoneEgress: true`,
    causes: [
      ['mtls.backends', 'at most one'],
      ['mtls.backends[1].name', 'already used'],
    ],
  },
  {
    name: 'zoneEgress and mTLS enabled but no enabledBackend provided',
    yaml: `
mtls:
  backends:
  - name: backend-1
    type: builtin
routing:
  zoneEgress: true`,
    causes: [['mtls', 'zoneEgress']],
  },
  {
    name: 'metrics aggregate configuration contains duplicate entries',
    yaml: `
metrics:
  backends:
  - name: backend-1
    type: prometheus
    conf:
      aggregate:
      - name: app
        path: "/stats/"
        port: 123
      - name: app
        path: "/stats" 
      - name: sidecar
        port: 12345
      - name: sidecar  
  - name: backend-2
    type: prometheus
    conf:
      aggregate:
      - name: app
        path: "/stats/"
        port: 123
      - name: app
        path: "/stats" `,
    causes: [
      ['metrics.backends[0].conf.aggregate[1].name', 'duplicate'],
      ['metrics.backends[0].conf.aggregate[3].name', 'duplicate'],
      ['metrics.backends[1].conf.aggregate[1].name', 'duplicate'],
    ],
  },
];

describe('Kuma 2.0.0 validator conformance: Mesh', () => {
  kumaCases(mesh, cases);
});
