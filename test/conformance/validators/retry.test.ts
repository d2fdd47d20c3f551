import { describe } from 'vitest';
import { retry } from '../../../src/resources/kinds/retry.js';
import { accepts, refuses } from './conformance.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/retry_validator_test.go: each Entry is one case of the same name, `kuma.io/` spelled
// `mesh.io/`; refusals list the reference's violations (field, Kuma's message). Fields are compared
// exactly; ./conformance.ts says which words of ours stand for each of Kuma's messages.
describe('Kuma 2.0.0 validator conformance: Retry', () => {
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      retry,
      'empty spec',
      `

`,
      [
        ['sources', 'must have at least one element'],
        ['destinations', 'must have at least one element'],
        ['conf', 'has to be defined'],
      ],
    );
    refuses(
      retry,
      'selectors without tags',
      `
sources:
- match: {}
destinations:
- match: {}
`,
      [
        ['sources[0].match', 'must have at least one tag'],
        ['sources[0].match', 'mandatory tag "mesh.io/service" is missing'],
        ['destinations[0].match', 'must consist of exactly one tag "mesh.io/service"'],
        ['destinations[0].match', 'mandatory tag "mesh.io/service" is missing'],
        ['conf', 'has to be defined'],
      ],
    );
    refuses(
      retry,
      'selectors with empty tags values',
      `
sources:
- match:
    mesh.io/service:
    region:
destinations:
- match:
    mesh.io/service:
    region:
`,
      [
        ['sources[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['sources[0].match.region', 'tag value must be non-empty'],
        ['destinations[0].match', 'must consist of exactly one tag "mesh.io/service"'],
        ['destinations[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['destinations[0].match.region', 'tag "region" is not allowed'],
        ['destinations[0].match.region', 'tag value must be non-empty'],
        ['conf', 'has to be defined'],
      ],
    );
    refuses(
      retry,
      'empty conf',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf: {}
`,
      [['conf', 'missing protocol [grpc|http|tcp] configuration']],
    );
    refuses(
      retry,
      'empty conf.http',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
    http: {}
`,
      [['conf.http', 'field cannot be empty']],
    );
    refuses(
      retry,
      'invalid conf.http',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
    http:
        numRetries: 0
        perTryTimeout: "0"
        backOff: {}
        retriableMethods:
        - NONE
`,
      [
        ['conf.http.numRetries', 'has to be greater than 0 when defined'],
        ['conf.http.perTryTimeout', 'has to be greater than 0 when defined'],
        ['conf.http.backOff.baseInterval', 'has to be defined'],
        ['conf.http.retriableMethods[0]', 'field cannot be empty'],
      ],
    );
    refuses(
      retry,
      'invalid conf.http retries not specified',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
    http:
        retryOn:
        - all_5xx
        - retriable_status_codes
`,
      [['conf.http.retryOn[1]', 'retriableStatusCodes cannot be empty when this option is specified']],
    );
    refuses(
      retry,
      'empty conf.grpc',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
    grpc: {}
`,
      [['conf.grpc', 'field cannot be empty']],
    );
    refuses(
      retry,
      'invalid conf.grpc',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
    grpc:
        numRetries: 0
        backOff: {}
        perTryTimeout: "0"
        retryOn:
        - cancelled
        - resource_exhausted
        - cancelled
        - cancelled
        - resource_exhausted
        - internal
        - internal
        - internal
`,
      [
        ['conf.grpc.retryOn', 'repeated value "cancelled" at indexes [0, 2, 3]'],
        ['conf.grpc.retryOn', 'repeated value "internal" at indexes [5, 6, 7]'],
        ['conf.grpc.retryOn', 'repeated value "resource_exhausted" at indexes [1, 4]'],
        ['conf.grpc.numRetries', 'has to be greater than 0 when defined'],
        ['conf.grpc.perTryTimeout', 'has to be greater than 0 when defined'],
        ['conf.grpc.backOff.baseInterval', 'has to be defined'],
      ],
    );
    refuses(
      retry,
      'conf.grpc.backOff.baseInterval equal 0',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
    grpc:
        backOff:
            baseInterval: "0"
`,
      [['conf.grpc.backOff.baseInterval', 'has to be greater than 0']],
    );
    refuses(
      retry,
      'conf.grpc.backOff.maxInterval equal 0s',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
    grpc:
        backOff:
            baseInterval: 20ms
            maxInterval: 0s
`,
      [['conf.grpc.backOff.maxInterval', 'has to be greater than 0 when defined']],
    );
    refuses(
      retry,
      'empty conf.tcp',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
    tcp: {}
`,
      [['conf.tcp.maxConnectAttempts', 'has to be greater than 0']],
    );
  });
  describe('should validate all fields and return no errors if all are valid', () => {
    accepts(
      retry,
      'all protocols configuration provided',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
    http:
        numRetries: 3
        perTryTimeout: 200ms
        backOff:
            baseInterval: 30ms
            maxInterval: 1.2s
        retriableStatusCodes: [501, 502]
    grpc:
        numRetries: 3
        perTryTimeout: 200ms
        backOff:
            baseInterval: 58ms
            maxInterval: 1s
        retryOn:
        - cancelled
        - unavailable
    tcp:
        maxConnectAttempts: 5
`,
    );
  });
});
