import { describe } from 'vitest';
import { healthCheck } from '../../../src/resources/kinds/health-check.js';
import { refuses } from './conformance.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/health_check_validator_test.go: each Entry is one case of the same name, `kuma.io/` spelled
// `mesh.io/`; refusals list the reference's violations (field, Kuma's message). Fields are compared
// exactly; ./conformance.ts says which words of ours stand for each of Kuma's messages.
describe('Kuma 2.0.0 validator conformance: HealthCheck', () => {
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      healthCheck,
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
      healthCheck,
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
      healthCheck,
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
      healthCheck,
      'invalid active checks conf',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
  interval: 0s
  timeout: 0s
  unhealthyThreshold: 0
  healthyThreshold: 0
  initialJitter: 0s
  intervalJitter: 0s
  healthyPanicThreshold: 101
  noTrafficInterval: 0s
  http:
    path: ""
    requestHeadersToAdd:
    - header:
        value: foo
    - append: false
    expectedStatuses:
    - 99
    - 600
`,
      [
        ['conf.interval', 'must have a positive value'],
        ['conf.timeout', 'must have a positive value'],
        ['conf.unhealthyThreshold', 'must have a positive value'],
        ['conf.healthyThreshold', 'must have a positive value'],
        ['conf.initialJitter', 'must have a positive value'],
        ['conf.intervalJitter', 'must have a positive value'],
        ['conf.noTrafficInterval', 'must have a positive value'],
        ['conf.healthyPanicThreshold', 'must be in range [0.0 - 100.0]'],
        ['conf.http.path', 'has to be defined and cannot be empty'],
        ['conf.http.expectedStatuses[0]', 'must be in range [100, 600)'],
        ['conf.http.expectedStatuses[1]', 'must be in range [100, 600)'],
        ['conf.http.requestHeadersToAdd[0].header.key', 'cannot be empty'],
        ['conf.http.requestHeadersToAdd[1].header', 'has to be defined'],
      ],
    );
    refuses(
      healthCheck,
      'invalid active checks http configuration',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
  interval: 3s
  timeout: 10s
  unhealthyThreshold: 3
  healthyThreshold: 1
  http: {}
`,
      [['conf.http.path', 'has to be defined and cannot be empty']],
    );
    refuses(
      healthCheck,
      'http and tcp configuration',
      `
sources:
- match:
    mesh.io/service: web
    region: eu
destinations:
- match:
    mesh.io/service: backend
conf:
  interval: 3s
  timeout: 10s
  unhealthyThreshold: 3
  healthyThreshold: 1
  http: {}
  tcp: {}
`,
      [
        ['conf.http.path', 'has to be defined and cannot be empty'],
        ['conf', 'http and tcp cannot be defined at the same time'],
      ],
    );
  });
});
