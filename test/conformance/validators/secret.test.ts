import { describe } from 'vitest';
import { globalSecret, secret } from '../../../src/resources/kinds/secret.js';
import { kumaCases, type KumaCase } from './kuma-cases.js';

// Kuma 2.0.0 has no validator test for Secret and GlobalSecret: their Validate() checks nothing
// (pkg/core/resources/apis/system/global_secret.go, zz_generated.resources.go); the proto field
// `data` is a BytesValue, base64 on the wire, which Kuma's decoding refuses when it is not base64.
// pkg/core/resources/apis/system/validators.go holds only ValidateDataSource, which is
// ExternalService's (see external-service.test.ts). These cases are written from that code.
const cases = (type: string): KumaCase[] => [
  { name: 'secret with data', yaml: `type: ${type}\nname: s-1\nmesh: default\ndata: c2VjcmV0` },
  {
    name: 'secret with data that is not base64',
    yaml: `type: ${type}\nname: s-1\nmesh: default\ndata: "not base64!"`,
    causes: [['data', 'base64']],
  },
  {
    // differs on purpose: Kuma accepts a secret without data; a secret here always holds bytes (the
    // signing keys and certificates read from secrets are never empty).
    name: 'secret without data',
    yaml: `type: ${type}\nname: s-1\nmesh: default`,
    causes: [['data', 'cannot be empty']],
  },
  {
    // differs on purpose: as above, for empty data.
    name: 'secret with empty data',
    yaml: `type: ${type}\nname: s-1\nmesh: default\ndata: ""`,
    causes: [['data', 'cannot be empty']],
  },
  {
    // differs on purpose: unknown fields are refused (decisions §3); Kuma's decoding drops them.
    name: 'secret with an unknown field',
    yaml: `type: ${type}\nname: s-1\nmesh: default\ndata: c2VjcmV0\nvalue: x`,
    causes: [['value', 'unknown field']],
  },
];

describe('Kuma 2.0.0 validator conformance: Secret', () => {
  kumaCases(secret, cases('Secret'));
});

describe('Kuma 2.0.0 validator conformance: GlobalSecret', () => {
  kumaCases(globalSecret, cases('Secret'));
});
