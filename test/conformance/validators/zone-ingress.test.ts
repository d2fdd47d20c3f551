import { describe } from 'vitest';
import { zoneIngress } from '../../../src/resources/kinds/zone-ingress.js';
import { kumaCases, type KumaCase } from './kuma-cases.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/zone_ingress_validator_test.go, entry by entry.
const cases: KumaCase[] = [
  {
    name: 'with advertised address and port',
    yaml: `
type: ZoneIngress
name: zi-1
networking:
  address: 192.168.0.1
  advertisedAddress: 10.0.0.1
  port: 10001
  advertisedPort: 1234
availableServices:
  - tags:
      mesh.io/service: backend
      version: "1"
      region: us
  - tags:
      mesh.io/service: web
      version: v2
      region: eu`,
  },
  {
    name: 'with advertised ipv6 address and port',
    yaml: `
type: ZoneIngress
name: zi-1
networking:
  address: 192.168.0.1
  advertisedAddress: ::ffff:0a00:0001
  port: 10001
  advertisedPort: 1234
availableServices:
  - tags:
      mesh.io/service: backend
      version: "1"
      region: us
  - tags:
      mesh.io/service: web
      version: v2
      region: eu`,
  },
  {
    name: 'without advertised address and port',
    yaml: `
type: ZoneIngress
name: zi-1
networking:
  address: 192.168.0.1
  port: 10001
availableServices: []`,
  },
  {
    name: 'with admin port equal to port but different network interfaces',
    yaml: `
type: ZoneIngress
name: zi-1
networking:
  admin:
    port: 10001
  address: 192.168.0.1
  advertisedAddress: 10.0.0.1
  port: 10001
  advertisedPort: 1234
availableServices:
  - tags:
      mesh.io/service: backend
      version: "1"
      region: us
  - tags:
      mesh.io/service: web
      version: v2
      region: eu`,
  },
  {
    name: 'no port defined',
    yaml: `
type: ZoneIngress
name: zi-1
networking:
  address: 192.168.0.1
  advertisedAddress: 10.0.0.1
  advertisedPort: 1234
availableServices:
  - tags:
      mesh.io/service: backend
      version: "1"
      region: us
  - tags:
      mesh.io/service: web
      version: v2
      region: eu`,
    causes: [
      // A missing port is "cannot be empty" here; Kuma reads it as 0, out of the range.
      ['networking.port', 'cannot be empty'],
    ],
  },
  {
    name: 'invalid advertised address, port and available service',
    yaml: `
type: ZoneIngress
name: zi-1
networking:
  address: 192.168.0.1
  advertisedAddress: "!@#"
  port: 10001
  advertisedPort: 100000
availableServices:
  - tags:
      mesh.io/service: backend
      version: "1"
      region: us
  - tags:
      mesh.io/service: web
      version: v2
      region: eu
  - tags:
      version: v2
      region: eu
  - tags:
      mesh.io/service: ""
  - tags:
      version: ""`,
    causes: [
      // differs on purpose: Kuma names `networking.advertisedAddress.address` and `availableServices[i]`,
      // fields that do not exist; the causes are on the fields the body has.
      ['networking.advertisedAddress', 'IP address or domain name'],
      ['networking.advertisedPort', 'range'],
      ['availableServices[2].tags', 'mandatory tag "mesh.io/service"'],
      ['availableServices[3].tags["mesh.io/service"]', 'non-empty'],
      ['availableServices[4].tags.version', 'non-empty'],
      ['availableServices[4].tags', 'mandatory tag "mesh.io/service"'],
    ],
  },
  {
    name: 'admin port equal to port',
    yaml: `
type: ZoneIngress
name: zi-1
networking:
  admin:
    port: 10001
  address: 127.0.0.1
  advertisedAddress: 10.0.0.1
  port: 10001
  advertisedPort: 1234
availableServices:
  - tags:
      mesh.io/service: backend
      version: "1"
      region: us
  - tags:
      mesh.io/service: web
      version: v2
      region: eu`,
    causes: [['networking.admin.port', 'differ from port']],
  },
];

describe('Kuma 2.0.0 validator conformance: ZoneIngress', () => {
  kumaCases(zoneIngress, cases);
});
