import { describe } from 'vitest';
import { zone } from '../../../src/resources/kinds/zone.js';
import { kumaCases, type KumaCase } from './kuma-cases.js';

// Kuma 2.0.0 has no validator test for Zone: pkg/core/resources/apis/system/zz_generated.resources.go
// gives Zone no checks of its own beyond its proto (`enabled`, a bool), and location_validator.go
// only says where a Zone may be written (a Global control plane; "not hooked" on Universal, as its
// comment says). These cases are written from that code. Where a Zone may be written is a matter
// of the API's modes here (docs/multi-zone.md), not of the body, so no case below is about it.
const cases: KumaCase[] = [
  { name: 'zone without fields', yaml: 'type: Zone\nname: zone-1' },
  { name: 'zone enabled', yaml: 'type: Zone\nname: zone-1\nenabled: true' },
  { name: 'zone disabled', yaml: 'type: Zone\nname: zone-1\nenabled: false' },
  {
    // Kuma's decoding refuses a string for a BoolValue too.
    name: 'zone enabled not a bool',
    yaml: 'type: Zone\nname: zone-1\nenabled: "yes"',
    causes: [['enabled', 'boolean']],
  },
  {
    // differs on purpose: unknown fields are refused (decisions §3); Kuma's decoding drops them.
    name: 'zone with an unknown field',
    yaml: 'type: Zone\nname: zone-1\naddress: grpcs://zone-1:5685',
    causes: [['address', 'unknown field']],
  },
];

describe('Kuma 2.0.0 validator conformance: Zone', () => {
  kumaCases(zone, cases);
});
