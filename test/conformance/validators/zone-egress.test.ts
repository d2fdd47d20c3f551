import { describe } from 'vitest';
import { zoneEgress } from '../../../src/resources/kinds/zone-egress.js';
import { kumaCases, type KumaCase } from './kuma-cases.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/zone_egress_validator_test.go, entry by entry.
const cases: KumaCase[] = [
  {
    name: 'with address and port',
    yaml: `
type: ZoneEgress
name: ze-1
networking:
  address: 192.168.0.1
  port: 10001`,
  },
  {
    name: 'with admin port equal to port but different network interfaces',
    yaml: `
type: ZoneEgress
name: ze-1
networking:
  admin:
    port: 10001
  address: 192.168.0.1
  port: 10001`,
  },
  {
    name: 'no port defined',
    yaml: `
type: ZoneEgress
name: ze-1
networking:
  address: 192.168.0.1`,
    causes: [
      // A missing port is "cannot be empty" here; Kuma reads it as 0, out of the range.
      ['networking.port', 'cannot be empty'],
    ],
  },
  {
    name: 'admin port equal to port',
    yaml: `
type: ZoneEgress
name: ze-1
networking:
  admin:
    port: 10001
  address: 127.0.0.1
  port: 10001`,
    causes: [['networking.admin.port', 'differ from port']],
  },
];

describe('Kuma 2.0.0 validator conformance: ZoneEgress', () => {
  kumaCases(zoneEgress, cases);
});
