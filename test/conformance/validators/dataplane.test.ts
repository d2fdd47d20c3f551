import { describe } from 'vitest';
import { dataplane } from '../../../src/resources/kinds/dataplane.js';
import { kumaCases, type KumaCase } from './kuma-cases.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/dataplane_validator_test.go, entry by entry. Where Kuma's
// YAML leaves a value empty (`version:`), Kuma's proto decoding reads it as ""; the YAML here writes
// "" (a JSON null is a wrong type for us, not an empty string).
const cases: KumaCase[] = [
  {
    name: 'dataplane with inbounds',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 8080
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      tags:
        mesh.io/service: redis`,
  },
  {
    name: 'dataplane with full inbounds and outbounds',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 8080
      servicePort: 7777
      address: 127.0.0.1
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      address: 127.0.0.1
      tags:
        mesh.io/service: redis`,
  },
  {
    name: 'dataplane with full inbounds and outbounds ipv6',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 0:0:0:0:0:FFFF:C0A8:0001
  inbound:
    - port: 8080
      servicePort: 7777
      address: ::1
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      address: ::1
      tags:
        mesh.io/service: redis`,
  },
  {
    name: 'dataplane with legacy outbounds',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 8080
      servicePort: 7777
      address: 127.0.0.1
      tags:
        mesh.io/service: backend
  outbound:
    - port: 3333
      address: 127.0.0.1
      service: redis`,
  },
  {
    name: 'dataplane with gateway',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  gateway:
    tags:
      mesh.io/service: backend
      kuam.io/protocol: tcp
      version: "1"
  outbound:
    - port: 3333
      service: redis`,
  },
  {
    name: 'dataplane with valid tags',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  gateway:
    tags:
      mesh.io/service: backend
      version: "1"
      mesh.io/valid: abc.0123-789.under_score:90
  outbound:
    - port: 3333
      tags:
        mesh.io/service: redis`,
  },
  {
    name: 'dataplane domain name in the address',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: example.com
  inbound:
    - port: 8080
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      tags:
        mesh.io/service: redis`,
  },
  {
    name: 'dataplane with probes',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 8080
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      tags:
        mesh.io/service: redis
probes:
  port: 9000
  endpoints:
   - inboundPort: 8088
     inboundPath: /healthz
     path: /8080/healthz`,
  },
  {
    name: 'dataplane with service probes',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 8080
      serviceProbe:
        interval: 1s
        unhealthyThreshold: 5
        tcp: {}
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      tags:
        mesh.io/service: redis`,
  },
  {
    name: 'dataplane with admin port',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 8080
      servicePort: 7777
      address: 127.0.0.1
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      address: 127.0.0.1
      tags:
        mesh.io/service: redis`,
  },
  {
    name: 'dataplane with admin port equal to inbound and outbound but different network interfaces',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  admin:
    port: 8080
  inbound:
    - port: 8080
      servicePort: 7777
      address: 192.168.0.1
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      address: 192.168.0.1
      tags:
        mesh.io/service: redis`,
  },
  {
    name: 'dataplane with metrics backend defined and unique aggregate entries',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  admin:
    port: 8080
  inbound:
    - port: 8080
      servicePort: 7777
      address: 192.168.0.1
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      address: 192.168.0.1
      tags:
        mesh.io/service: redis
metrics:
  type: prometheus
  conf:
    aggregate:
    - name: app
      port: 123
      path: "/stats"
    - name: sidecar
      port: 999
      path: "/metrics"`,
  },
  {
    name: 'dataplane with metrics backend type defined',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  admin:
    port: 8080
  inbound:
    - port: 8080
      servicePort: 7777
      address: 192.168.0.1
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      address: 192.168.0.1
      tags:
        mesh.io/service: redis
metrics:
  type: prometheus`,
  },
  {
    name: "networking.address: can't use 0.0.0.0",
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 0.0.0.0
  inbound:
    - port: 8080
      tags:
        mesh.io/service: backend`,
    causes: [['networking.address', '0.0.0.0']],
  },
  {
    name: "networking.address: can't use ::",
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: "::"
  inbound:
    - port: 8080
      tags:
        mesh.io/service: backend`,
    causes: [['networking.address', '0.0.0.0']],
  },
  {
    name: 'networking: not enough inbound interfaces and no gateway',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking', 'at least one inbound']],
  },
  {
    name: 'missing networking',
    yaml: `
type: Dataplane
name: dp-1
mesh: default`,
    causes: [['networking', 'cannot be empty']],
  },
  {
    name: 'networking empty',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking: {}`,
    causes: [
      ['networking', 'at least one inbound'],
      ['networking.address', 'cannot be empty'],
    ],
  },
  {
    name: 'networking.address: empty',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  inbound:
    - port: 8080
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      tags:
        mesh.io/service: redis`,
    causes: [['networking.address', 'cannot be empty']],
  },
  {
    name: 'networking.address: invalid format',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: ..>_<..
  inbound:
    - port: 8080
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      tags:
        mesh.io/service: redis`,
    causes: [['networking.address', 'IP address or domain name']],
  },
  {
    name: 'networking: both inbounds and gateway are defined',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 8080
      servicePort: 7777
      tags:
        mesh.io/service: backend
        version: "1"
  gateway:
    tags:
      mesh.io/service: kong
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking.inbound', 'delegated gateway']],
  },
  {
    name: 'networking: builtin gateway must not have inbounds',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  gateway:
    type: BUILTIN
    tags:
      mesh.io/service: kong
  inbound:
    - port: 3333
      service: redis
      tags:
        mesh.io/service: kong`,
    causes: [
      ['networking.inbound', 'builtin gateway'],
      // differs on purpose: an inbound has no `service` field; Kuma's decoding drops it, we refuse
      // unknown fields (decisions §3).
      ['networking.inbound[0].service', 'unknown field'],
    ],
  },
  {
    name: 'networking: builtin gateway must not have outbounds',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  gateway:
    type: BUILTIN
    tags:
      mesh.io/service: kong
  outbound:
    - port: 3333
      service: redis
      tags:
        mesh.io/service: kong`,
    causes: [['networking.outbound', 'builtin gateway']],
  },
  {
    name: 'networking: builtin gateway must not have probes',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  gateway:
    type: BUILTIN
    tags:
      mesh.io/service: kong
probes:
  port: 0
  endpoints:
   - inboundPort: 8088
     inboundPath: /healthz
     path: /8080/healthz`,
    causes: [
      // differs on purpose: Kuma names `networking.probes`, a field that does not exist; the cause is
      // on `probes`, where the field is. And every field's own shape is checked whatever the proxy
      // kind, so the port 0 that Kuma skips for a builtin gateway is a cause too.
      ['probes', 'builtin gateway'],
      ['probes.port', 'range'],
    ],
  },
  {
    name: 'networking: builtin gateway must have a service tag',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  gateway:
    type: BUILTIN
    tags:
      foo: bar`,
    causes: [['networking.gateway.tags', 'mandatory tag "mesh.io/service"']],
  },
  {
    name: 'networking.inbound: port of the range',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - tags:
        mesh.io/service: backend
        version: "1"
    - port: 65536
      tags:
        mesh.io/service: sub-backend
  outbound:
    - port: 3333
      service: redis`,
    causes: [
      // A missing port is "cannot be empty" here; Kuma reads it as 0, out of the range.
      ['networking.inbound[0].port', 'cannot be empty'],
      ['networking.inbound[1].port', 'range'],
    ],
  },
  {
    name: 'networking.inbound: servicePort out of the range',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      servicePort: 65536
      tags:
        mesh.io/service: backend
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking.inbound[0].servicePort', 'range']],
  },
  {
    name: 'networking.inbound: invalid address',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      address: invalid-address
      tags:
        mesh.io/service: backend
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking.inbound[0].address', 'IP address']],
  },
  {
    name: 'networking.inbound: empty service tag',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      tags:
        version: "v1"
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking.inbound[0].tags["mesh.io/service"]', 'tag has to exist']],
  },
  {
    name: 'networking.inbound: empty tag value',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      tags:
        mesh.io/service: backend
        version: ""
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking.inbound[0].tags.version', 'non-empty']],
  },
  {
    name: 'networking.inbound: `protocol` tag with an empty value',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      tags:
        mesh.io/service: backend
        mesh.io/protocol: ""
  outbound:
    - port: 3333
      service: redis`,
    causes: [
      ['networking.inbound[0].tags["mesh.io/protocol"]', 'allowed values'],
      ['networking.inbound[0].tags["mesh.io/protocol"]', 'non-empty'],
    ],
  },
  {
    name: 'networking.inbound: `protocol` tag with unsupported value',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      tags:
        mesh.io/service: backend
        mesh.io/protocol: not-yet-supported-protocol
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking.inbound[0].tags["mesh.io/protocol"]', 'allowed values']],
  },
  {
    name: 'networking.gateway: empty service tag',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  gateway:
    tags:
      version: "v1"
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking.gateway.tags', 'mandatory tag "mesh.io/service"']],
  },
  {
    name: 'networking.gateway: empty tag value',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  gateway:
    tags:
      mesh.io/service: backend
      version: ""
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking.gateway.tags.version', 'non-empty']],
  },
  {
    name: 'networking.gateway: protocol http',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  gateway:
    tags:
      mesh.io/service: backend
      mesh.io/protocol: http
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking.gateway.tags["mesh.io/protocol"]', 'only tcp']],
  },
  {
    name: 'networking.outbound: empty service tag',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      tags:
        mesh.io/service: backend
        version: "v1"
  outbound:
    - port: 3333`,
    causes: [['networking.outbound[0].tags', 'mandatory tag "mesh.io/service"']],
  },
  {
    name: 'networking.outbound: empty service tag',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      tags:
        mesh.io/service: backend
        version: "v1"
  outbound:
    - port: 3333
      tags:
        version: v1`,
    causes: [['networking.outbound[0].tags', 'mandatory tag "mesh.io/service"']],
  },
  {
    name: 'networking.outbound: port out of the range',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      tags:
        mesh.io/service: backend
        version: "v1"
  outbound:
    - service: redis
    - port: 65536
      service: elastic`,
    causes: [
      // A missing port is "cannot be empty" here; Kuma reads it as 0, out of the range.
      ['networking.outbound[0].port', 'cannot be empty'],
      ['networking.outbound[1].port', 'range'],
    ],
  },
  {
    name: 'networking.outbound: invalid address',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      tags:
        mesh.io/service: backend
        version: "v1"
  outbound:
    - port: 3333
      address: invalid
      service: elastic`,
    causes: [['networking.outbound[0].address', 'IP address']],
  },
  {
    name: 'networking.outbound: invalid address',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      tags:
        mesh.io/service: backend
        version: "v1"
  outbound:
    - port: 3333
      address: invalid
      service: elastic`,
    causes: [['networking.outbound[0].address', 'IP address']],
  },
  {
    name: 'networking.inbound: tag name with invalid characters',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      tags:
        mesh.io/service: backend
        version: "v1"
        inv@lidT/gN%me: value
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking.inbound[0].tags["inv@lidT/gN%me"]', 'tag name']],
  },
  {
    name: 'networking.inbound: tag value with invalid characters',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 1234
      tags:
        mesh.io/service: backend
        version: "v1"
        invalidTagValue: inv@lid+t@g
  outbound:
    - port: 3333
      service: redis`,
    causes: [['networking.inbound[0].tags.invalidTagValue', 'tag value']],
  },
  {
    name: 'inbound service address',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 10001
      serviceAddress: 192.168.0.2
      servicePort: 5050
      address: 1.1.1.1
      tags:
        mesh.io/service: backend`,
  },
  {
    name: 'inbound service address invalid',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 10001
      serviceAddress: INVALID
      tags:
        mesh.io/service: backend`,
    causes: [['networking.inbound[0].serviceAddress', 'IP address']],
  },
  {
    name: 'inbound service address overlap address',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 10001
      serviceAddress: 192.168.0.1
      tags:
        mesh.io/service: backend`,
    causes: [['networking.inbound[0].serviceAddress', 'differ']],
  },
  {
    name: 'inbound service address overlap inbound address',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 10001
      address: 192.168.0.2
      serviceAddress: 192.168.0.2
      tags:
        mesh.io/service: backend`,
    causes: [['networking.inbound[0].serviceAddress', 'differ']],
  },
  {
    name: 'inbound service address different inbound address and port',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 10001
      address: 192.168.0.2
      serviceAddress: 192.168.0.2
      servicePort: 10002
      tags:
        mesh.io/service: backend`,
  },
  {
    name: 'dataplane with virtual probe',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 8080
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      tags:
        mesh.io/service: redis
probes:
  port: 0
  endpoints:
   - inboundPort: 8088
     inboundPath: /healthz
     path: /8080/healthz
   - inboundPort: 99999999
     inboundPath: healthz
     path: 8080/healthz
   - inboundPort: 1000
     inboundPath: ""
     path: ""`,
    causes: [
      ['probes.port', 'range'],
      ['probes.endpoints[1].inboundPort', 'range'],
      ['probes.endpoints[1].inboundPath', 'URL path'],
      ['probes.endpoints[1].path', 'URL path'],
      ['probes.endpoints[2].inboundPath', 'URL path'],
      ['probes.endpoints[2].path', 'URL path'],
    ],
  },
  {
    name: 'dataplane with service probe',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 8080
      serviceProbe:
        timeout: 1s
        interval: "0"
        healthyThreshold: 5
        unhealthyThreshold: 0
        tcp: {}
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      tags:
        mesh.io/service: redis`,
    causes: [
      ['networking.inbound[0].serviceProbe.interval', 'positive'],
      ['networking.inbound[0].serviceProbe.unhealthyThreshold', 'positive'],
    ],
  },
  {
    name: 'dataplane with admin port equal to inbound',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  admin:
    port: 8080
  inbound:
    - port: 8080
      servicePort: 7777
      address: 127.0.0.1
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      address: 127.0.0.1
      tags:
        mesh.io/service: redis`,
    causes: [['networking.admin.port', 'differ from inbound']],
  },
  {
    name: 'dataplane with admin port equal to outbound',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  admin:
    port: 3333
  inbound:
    - port: 8080
      servicePort: 7777
      address: 127.0.0.1
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      address: 127.0.0.1
      tags:
        mesh.io/service: redis`,
    causes: [['networking.admin.port', 'differ from outbound']],
  },
  {
    name: 'dataplane with duplicate metrics entry',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 8080
      servicePort: 7777
      address: 192.168.0.1
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      address: 192.168.0.1
      tags:
        mesh.io/service: redis
metrics:
  type: prometheus
  conf:
    aggregate:
    - name: app
      port: 123
      path: "/stats"
    - name: app
      port: 999
      path: "/metrics"
    - name: duplicate-app
      port: 12366
      path: "/duplicate"
    - name: duplicate-app
      port: 12345
      path: "/other"  `,
    causes: [
      ['metrics.conf.aggregate[1].name', 'duplicate'],
      ['metrics.conf.aggregate[3].name', 'duplicate'],
    ],
  },
  {
    name: 'dataplane with not supported metrics type',
    yaml: `
type: Dataplane
name: dp-1
mesh: default
networking:
  address: 192.168.0.1
  inbound:
    - port: 8080
      servicePort: 7777
      address: 192.168.0.1
      tags:
        mesh.io/service: backend
        version: "1"
  outbound:
    - port: 3333
      address: 192.168.0.1
      tags:
        mesh.io/service: redis
metrics:
  type: custom-backend`,
    causes: [['metrics.type', 'prometheus']],
  },
];

describe('Kuma 2.0.0 validator conformance: Dataplane', () => {
  kumaCases(dataplane, cases);
});
