import { describe } from 'vitest';
import { meshGateway } from '../../../src/resources/kinds/mesh-gateway.js';
import { casesOf } from './yaml-cases.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/gateway_validator_test.go: each Entry/ErrorCase is one
// case of the same name with the reference's YAML (`kuma.io/` spelled `mesh.io/`). A refusal lists
// the reference's fields exactly, each with a word of our message (Kuma's message in a comment).
const { accepts, refuses } = casesOf(meshGateway, { underSpec: false });

describe('Kuma 2.0.0 validator conformance: MeshGateway', () => {
  accepts(
    'HTTPS listener',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - hostname: www-1.example.com
    port: 443
    protocol: HTTP
    tags:
      name: https
`,
  );
  accepts(
    'HTTPS listener without tags',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - hostname: www-1.example.com
    port: 443
    protocol: HTTP
`,
  );
  accepts(
    'crossMesh, HTTP, with hostname',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
conf:
  listeners:
  - hostname: www-1.example.com
    port: 443
    crossMesh: true
    protocol: HTTP
`,
  );
  accepts(
    'crossMesh with no hostname',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - protocol: HTTP
    port: 99
    crossMesh: true
    tags:
      name: http
`,
  );
  accepts(
    'listeners with connectionLimits',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - protocol: HTTP
    hostname: one.com
    port: 99
    resources:
      connectionLimit: 2
  - protocol: HTTP
    hostname: two.com
    port: 99
    resources:
      connectionLimit: 2
`,
  );
  refuses(
    "doesn't have any selectors",
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
tags:
  product: edge
conf:
  listeners:
  - port: 443
    protocol: HTTPS
    tls:
      mode: PASSTHROUGH
    tags:
      name: https
`,
    [
      // differs on purpose: `selectors:` is YAML null, which we refuse as a wrong type where Kuma's
      // decoder reads no list; the cause is at the same field.
      ['selectors', 'array'], // Kuma: must have at least one element
    ],
  );
  refuses(
    'has a service tag',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
  mesh.io/service: gateway
conf:
  listeners:
  - port: 443
    protocol: HTTP
    tags:
      name: https
`,
    [
      ['tags["mesh.io/service"]', 'must not be "mesh.io/service"'], // Kuma: tag name must not be \"mesh.io/service\"
    ],
  );
  refuses(
    "doesn't have a configuration spec",
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
`,
    [
      // differs on purpose: `conf:` is YAML null, which we refuse as a wrong type where Kuma's
      // decoder reads no conf; the cause is at the same field.
      ['conf', 'object'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'has an invalid port',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - protocol: HTTP
    tags:
      name: https
`,
    [
      ['conf.listeners[0].port', 'cannot be empty'], // Kuma: port must be in the range [1, 65535]
    ],
  );
  refuses(
    'has an empty protocol',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - port: 99
    tags:
      name: https
`,
    [
      // A missing protocol is worded as a wrong one, as every missing enum is.
      ['conf.listeners[0].protocol', 'must be one of'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'has an empty TLS mode',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - protocol: HTTPS
    port: 99
    tags:
      name: https
    tls:
      options:
`,
    [
      ['conf.listeners[0].tls.mode', 'cannot be empty'], // Kuma: cannot be empty
      // differs on purpose: `options:` is YAML null, refused as a wrong type (Kuma reads no options).
      ['conf.listeners[0].tls.options', 'object'],
    ],
  );
  refuses(
    'has a passthrough TLS secret',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - protocol: HTTPS
    port: 99
    tags:
      name: https
    tls:
      mode: PASSTHROUGH
      certificates:
      - secret: foo
`,
    [
      ['conf.listeners[0].tls.certificates', 'must be empty in PASSTHROUGH mode'], // Kuma: must be empty in TLS passthrough mode
    ],
  );
  refuses(
    'is missing a TLS termination secret',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - protocol: HTTPS
    port: 99
    tags:
      name: https
    tls:
      mode: TERMINATE
`,
    [
      ['conf.listeners[0].tls.certificates', 'TERMINATE mode'], // Kuma: cannot be empty in TLS termination mode
    ],
  );
  refuses(
    'has an invalid wildcard',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - hostname: "*.foo.*.example.com"
    protocol: HTTP
    port: 99
    tags:
      name: https
`,
    [
      ['conf.listeners[0].hostname', 'hostname'], // Kuma: invalid wildcard domain
    ],
  );
  refuses(
    'has an invalid hostname',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - hostname: "foo.example$.com"
    protocol: HTTP
    port: 99
    tags:
      name: https
`,
    [
      ['conf.listeners[0].hostname', 'hostname'], // Kuma: invalid hostname
    ],
  );
  refuses(
    'crossMesh and HTTPS',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
tags:
  product: edge
conf:
  listeners:
  - hostname: "foo.example.com"
    protocol: HTTPS
    port: 99
    crossMesh: true
    tags:
      name: https
`,
    [
      ['conf.listeners[0].protocol', 'not supported with crossMesh'], // Kuma: protocol is not supported with crossMesh
    ],
  );
  refuses(
    'crossMesh and multiple services',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
  - match:
      mesh.io/service: other-gateway
conf:
  listeners:
  - hostname: www-1.example.com
    port: 443
    crossMesh: true
    protocol: HTTP
`,
    [
      ['selectors[1]', 'at most one selector'], // Kuma: there can be at most one selector
    ],
  );
  refuses(
    'protocol conflict',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
conf:
  listeners:
  - hostname: www-1.example.com
    port: 443
    protocol: TCP
  - hostname: www-2.example.com
    port: 443
    protocol: HTTPS
    tls:
      mode: PASSTHROUGH
`,
    [
      ['conf.listeners[0]', 'protocol conflicts'], // Kuma: protocol conflicts with other listeners on this port
      ['conf.listeners[1]', 'protocol conflicts'], // Kuma: protocol conflicts with other listeners on this port
    ],
  );
  refuses(
    'hostname conflict',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
conf:
  listeners:
  - hostname: www-1.example.com
    port: 443
    protocol: TCP
  - hostname: www-1.example.com
    port: 443
    protocol: TCP
`,
    [
      ['conf.listeners[0]', 'multiple listeners for hostname'], // Kuma: multiple listeners for hostname on this port
      ['conf.listeners[1]', 'multiple listeners for hostname'], // Kuma: multiple listeners for hostname on this port
    ],
  );
  refuses(
    'hostname, protocol and resource conflict',
    `
type: MeshGateway
name: gateway
mesh: default
selectors:
  - match:
      mesh.io/service: gateway
conf:
  listeners:
  - hostname: www-1.example.com
    port: 443
    protocol: TCP
    resources:
      connectionLimit: 2
  - hostname: www-1.example.com
    port: 443
    protocol: HTTPS
    tls:
      mode: PASSTHROUGH
    resources:
      connectionLimit: 1
`,
    [
      ['conf.listeners[0]', 'protocol conflicts'], // Kuma: protocol conflicts with other listeners on this port
      ['conf.listeners[1]', 'protocol conflicts'], // Kuma: protocol conflicts with other listeners on this port
      ['conf.listeners[0]', 'multiple listeners for hostname'], // Kuma: multiple listeners for hostname on this port
      ['conf.listeners[1]', 'multiple listeners for hostname'], // Kuma: multiple listeners for hostname on this port
      ['conf.listeners[0].resources.connectionLimit', 'conflicting values'], // Kuma: conflicting values for this port
      ['conf.listeners[1].resources.connectionLimit', 'conflicting values'], // Kuma: conflicting values for this port
    ],
  );
});
