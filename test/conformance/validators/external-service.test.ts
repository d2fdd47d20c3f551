import { describe } from 'vitest';
import { externalService } from '../../../src/resources/kinds/external-service.js';
import { kumaCases, type KumaCase } from './kuma-cases.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/external_service_validator_test.go, entry by entry. Where Kuma's
// YAML leaves a value empty (`version:`), Kuma's proto decoding reads it as ""; the YAML here writes
// "" (a JSON null is a wrong type for us, not an empty string). Kuma may give one field several
// causes (an address that is not host:port); the fields are compared as a set.
const cases: KumaCase[] = [
  {
    name: 'external service',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: 192.168.0.1:8080
tags:
  mesh.io/service: backend
  version: "1"`,
  },
  {
    name: 'external service with valid tags',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: 192.168.0.1:8080
tags:
  mesh.io/service: backend
  mesh.io/valid: abc.0123-789.under_score:90`,
  },
  {
    name: 'external service with a domain name in the address',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: example.com:8080
tags:
  mesh.io/service: backend
  version: "1"`,
  },
  {
    name: 'external service with IPv6 in the address',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: "[fd00:a123::1]:8080"
tags:
  mesh.io/service: backend
  version: "1"`,
  },
  {
    name: 'no networking',
    yaml: `
type: ExternalService
name: es-1
mesh: default
tags:
  mesh.io/service: backend
  version: "1"`,
    causes: [['networking', 'cannot be empty']],
  },
  {
    name: 'networking.address: empty',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: ""
tags:
  mesh.io/service: backend
  version: "1"`,
    causes: [['networking.address', 'cannot be empty']],
  },
  {
    name: 'networking.address: invalid format',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: ..>_<..:8080
tags:
  mesh.io/service: backend
  version: "1"`,
    causes: [['networking.address', 'IP address or domain name']],
  },
  {
    name: 'networking.address: invalid format using scheme',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: http://example.com:8080
tags:
  mesh.io/service: backend
  version: "1"`,
    causes: [
      ['networking.address', 'host:port'],
      ['networking.address', 'IP address or domain name'],
      ['networking.address', 'host:port'],
      ['networking.address', 'range'],
    ],
  },
  {
    name: 'networking.address: invalid format IPv6',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: fd00:1234::1:8080
tags:
  mesh.io/service: backend
  version: "1"`,
    causes: [
      ['networking.address', 'host:port'],
      ['networking.address', 'IP address or domain name'],
      ['networking.address', 'host:port'],
      ['networking.address', 'range'],
    ],
  },
  {
    name: 'networking: port out of range',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: 192.168.0.1:65536
tags:
  mesh.io/service: backend
  version: "1"`,
    causes: [['networking.address', 'range']],
  },
  {
    name: 'tls: empty SNI',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: 192.168.0.1:8080
  tls:
    serverName: ""
tags:
  mesh.io/service: backend
  version: "1"`,
    causes: [['networking.tls.serverName', 'cannot be empty']],
  },
  {
    name: 'tags: empty service tag',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: 192.168.0.1:8080
tags:
  version: "1"`,
    causes: [['tags', 'mandatory tag "mesh.io/service"']],
  },
  {
    name: 'tags: empty tag value',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: 192.168.0.1:8080
tags:
  mesh.io/service: backend
  version: ""`,
    causes: [['tags.version', 'non-empty']],
  },
  {
    name: 'tags: `protocol` tag with an empty value',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: 192.168.0.1:8080
tags:
  mesh.io/service: backend
  mesh.io/protocol: ""`,
    causes: [
      ['tags["mesh.io/protocol"]', 'allowed values'],
      ['tags["mesh.io/protocol"]', 'non-empty'],
    ],
  },
  {
    name: 'tags: `protocol` tag with unsupported value',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: 192.168.0.1:8080
tags:
  mesh.io/service: backend
  mesh.io/protocol: not-yet-supported-protocol`,
    causes: [['tags["mesh.io/protocol"]', 'allowed values']],
  },
  {
    name: 'tags: tag name with invalid characters',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: 192.168.0.1:8080
tags:
  mesh.io/service: backend
  version: "v1"
  inv@lidT/gN%me: value`,
    causes: [['tags["inv@lidT/gN%me"]', 'tag name']],
  },
  {
    name: 'tags: tag value with invalid characters',
    yaml: `
type: ExternalService
name: es-1
mesh: default
networking:
  address: 192.168.0.1:8080
tags:
  mesh.io/service: backend
  version: "v1"
  invalidTagValue: inv@lid+t@g`,
    causes: [['tags.invalidTagValue', 'tag value']],
  },
  {
    name: 'tls: empty inline cert',
    yaml: `
type: ExternalService
name: es-1
mesh: default
tags:
  mesh.io/service: backend
networking:
  address: 192.168.0.1:8080
  tls:
    enabled: true
    caCert:
      inline: ""
    clientCert:
      inlineString: ""
    clientKey:
      secret: ""`,
    causes: [
      ['networking.tls.caCert', 'data source'],
      ['networking.tls.clientCert', 'data source'],
      ['networking.tls.clientKey', 'data source'],
    ],
  },
];

describe('Kuma 2.0.0 validator conformance: ExternalService', () => {
  kumaCases(externalService, cases);
});
