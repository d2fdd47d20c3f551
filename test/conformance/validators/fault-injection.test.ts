import { describe } from 'vitest';
import { faultInjection } from '../../../src/resources/kinds/fault-injection.js';
import { accepts, refuses } from './conformance.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/fault_injection_validator_test.go: each Entry is one case of the same name, `kuma.io/` spelled
// `mesh.io/`; refusals list the reference's violations (field, Kuma's message). Fields are compared
// exactly; ./conformance.ts says which words of ours stand for each of Kuma's messages.
describe('Kuma 2.0.0 validator conformance: FaultInjection', () => {
  describe('should pass validation', () => {
    accepts(
      faultInjection,
      'full example',
      `
sources:
- match:
    service: frontend
    mesh.io/protocol: http
destinations:
- match:
    service: backend
    mesh.io/protocol: http
    region: eu
    mesh.io/valid: abcd.123-456.under_score_.:80
conf:
  delay:
    percentage: 50
    value: 10ms
  abort:
    percentage: 40
    httpStatus: 500
  responseBandwidth:
    percentage: 40
    limit: 50kbps
`,
    );
    accepts(
      faultInjection,
      'http2',
      `
sources:
- match:
    service: frontend
destinations:
- match:
    service: backend
    mesh.io/protocol: http2
conf:
  delay:
    percentage: 50
    value: 10ms
`,
    );
    accepts(
      faultInjection,
      'match any',
      `
sources:
- match:
    service: frontend
    mesh.io/protocol: http
destinations:
- match:
    service: backend
    mesh.io/protocol: grpc
    region: "*"
conf:
  delay:
    percentage: 50
    value: 10ms
  abort:
    percentage: 40
    httpStatus: 500
  responseBandwidth:
    percentage: 40
    limit: 50kbps
`,
    );
  });
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      faultInjection,
      'spec: empty',
      `

`,
      [
        ['sources', 'must have at least one element'],
        ['destinations', 'must have at least one element'],
        ['conf', 'must have at least one of the faults configured'],
      ],
    );
    refuses(
      faultInjection,
      'conf.*: empty',
      `
sources:
- match:
   service: frontend
   mesh.io/protocol: http
destinations:
- match:
   service: backend
   mesh.io/protocol: http
   region: eu
conf:
  delay: {}
  abort: {}
  responseBandwidth: {}
`,
      [['conf', 'must have at least one of the faults configured']],
    );
    refuses(
      faultInjection,
      'conf.*.percentage: empty',
      `
sources:
- match:
   service: frontend
   mesh.io/protocol: http
destinations:
- match:
   service: backend
   mesh.io/protocol: http
   region: eu
conf:
  delay:
    value: 50ms
  abort:
    httpStatus: 500
  responseBandwidth:
    limit: 50kbps
`,
      [
        ['conf.delay.percentage', 'cannot be empty'],
        ['conf.abort.percentage', 'cannot be empty'],
        ['conf.responseBandwidth.percentage', 'cannot be empty'],
      ],
    );
    refuses(
      faultInjection,
      'conf.* main value: empty',
      `
sources:
- match:
   service: frontend
   mesh.io/protocol: http
destinations:
- match:
   service: backend
   mesh.io/protocol: http
   region: eu
conf:
  delay:
    percentage: 30
  abort:
    percentage: 30
  responseBandwidth:
    percentage: 30
`,
      [
        ['conf.delay.value', 'cannot be empty'],
        ['conf.abort.httpStatus', 'cannot be empty'],
        ['conf.responseBandwidth.limit', 'cannot be empty'],
      ],
    );
    refuses(
      faultInjection,
      'conf.abort: wrong format',
      `
sources:
- match:
   service: frontend
   mesh.io/protocol: http
destinations:
- match:
   service: backend
   mesh.io/protocol: http
   region: eu
conf:
  abort:
    httpStatus: 600
    percentage: 100
`,
      [['conf.abort.httpStatus', 'http status code is incorrect']],
    );
    refuses(
      faultInjection,
      'conf.responseBandwidth: wrong format',
      `
sources:
- match:
   service: frontend
   mesh.io/protocol: http
destinations:
- match:
   service: backend
   mesh.io/protocol: http
   region: eu
conf:
  responseBandwidth:
    limit: 50mb
    percentage: 101
`,
      [
        ['conf.responseBandwidth.percentage', 'has to be in [0.0 - 100.0] range'],
        ['conf.responseBandwidth.limit', 'has to be in kbps/mbps/gbps units'],
      ],
    );
    refuses(
      faultInjection,
      'mesh.io/protocol: not specified',
      `
sources:
- match:
    service: frontend
destinations:
- match:
    service: backend
    region: eu
conf:
  responseBandwidth:
    limit: 50mbps
    percentage: 100
`,
      [['destinations[0].match', 'protocol must be specified']],
    );
    refuses(
      faultInjection,
      'mesh.io/protocol: wrong protocol',
      `
sources:
- match:
    service: frontend
destinations:
- match:
    service: backend
    region: eu
    mesh.io/protocol: tcp
conf:
  responseBandwidth:
    limit: 50mbps
    percentage: 100
`,
      [['destinations[0].match["mesh.io/protocol"]', 'must be one of the [http, http2, grpc]']],
    );
    refuses(
      faultInjection,
      'tag value: invalid character set',
      `
sources:
- match:
    service: frontend
    mesh.io/protocol: http
    invalidTag: v@/u^e
destinations:
- match:
    service: backend
    mesh.io/protocol: http
    invalidTag: v@/u^e#!
conf:
  responseBandwidth:
    limit: 50mbps
    percentage: 100
`,
      [
        [
          'sources[0].match.invalidTag',
          'tag value must consist of alphanumeric characters, dots, dashes, slashes and underscores or be "*"',
        ],
        [
          'destinations[0].match.invalidTag',
          'tag value must consist of alphanumeric characters, dots, dashes, slashes and underscores or be "*"',
        ],
      ],
    );
    refuses(
      faultInjection,
      'tag name: invalid character set',
      `
sources:
- match:
    service: frontend
    mesh.io/protocol: http
    inv@lidT@g#: value
destinations:
- match:
    service: backend
    mesh.io/protocol: http
    inv@lidT@g#: value
conf:
  responseBandwidth:
    limit: 50mbps
    percentage: 100
`,
      [
        [
          'sources[0].match["inv@lidT@g#"]',
          'tag name must consist of alphanumeric characters, dots, dashes, slashes and underscores',
        ],
        [
          'destinations[0].match["inv@lidT@g#"]',
          'tag name must consist of alphanumeric characters, dots, dashes, slashes and underscores',
        ],
      ],
    );
  });
});
