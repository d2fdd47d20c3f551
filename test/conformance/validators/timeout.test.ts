import { describe } from 'vitest';
import { timeout } from '../../../src/resources/kinds/timeout.js';
import { accepts, refuses } from './conformance.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/timeout_validator_test.go: each Entry is one case of the same name, `kuma.io/` spelled
// `mesh.io/`; refusals list the reference's violations (field, Kuma's message). Fields are compared
// exactly; ./conformance.ts says which words of ours stand for each of Kuma's messages.
describe('Kuma 2.0.0 validator conformance: Timeout', () => {
  describe('should pass validation', () => {
    accepts(
      timeout,
      'full policy',
      `
sources:
- match:
   mesh.io/service: frontend
   mesh.io/protocol: http
destinations:
- match:
   mesh.io/service: backend
conf:
  connectTimeout: 5s
  tcp:
    idleTimeout: 50s
  http:
    requestTimeout: 15s
    idleTimeout: 1h
  grpc:
    streamIdleTimeout: 40s
    maxStreamDuration: 30m
`,
    );
  });
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      timeout,
      'spec: empty',
      `

`,
      [
        ['sources', 'must have at least one element'],
        ['destinations', 'must have at least one element'],
        ['conf', 'has to be defined'],
      ],
    );
    refuses(
      timeout,
      'conf.*: empty',
      `
sources:
- match:
   mesh.io/service: frontend
   mesh.io/protocol: http
destinations:
- match:
   mesh.io/service: backend
conf:
  connectTimeout: 5s
  tcp: {}
  http: {}
  grpc: {}
`,
      [
        ['conf.tcp', 'at least one timeout in section has to be defined'],
        ['conf.http', 'at least one timeout in section has to be defined'],
        ['conf.grpc', 'at least one timeout in section has to be defined'],
      ],
    );
  });
});
