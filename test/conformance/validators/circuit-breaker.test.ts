import { describe } from 'vitest';
import { circuitBreaker } from '../../../src/resources/kinds/circuit-breaker.js';
import { accepts, refuses } from './conformance.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/circuit_breaker_validator_test.go: each Entry is one case of the same name, `kuma.io/` spelled
// `mesh.io/`; refusals list the reference's violations (field, Kuma's message). Fields are compared
// exactly; ./conformance.ts says which words of ours stand for each of Kuma's messages.
describe('Kuma 2.0.0 validator conformance: CircuitBreaker', () => {
  describe('should pass validation', () => {
    accepts(
      circuitBreaker,
      'full example',
      `
sources:
- match:
    mesh.io/service: frontend
    region: us
destinations:
- match:
    mesh.io/service: backend
conf:
  interval: 1s
  baseEjectionTime: 30s
  maxEjectionPercent: 20
  splitExternalAndLocalErrors: false
  detectors:
    totalErrors:
      consecutive: 20
    gatewayErrors:
      consecutive: 10
    localErrors:
      consecutive: 7
    standardDeviation:
      requestVolume: 10
      minimumHosts: 5
      factor: 1.9
    failure:
      requestVolume: 10
      minimumHosts: 5
      threshold: 85
  thresholds:
    maxConnections: 2
    maxPendingRequests: 2
    maxRetries: 2
    maxRequests: 2
`,
    );
    accepts(
      circuitBreaker,
      'one detector with default values',
      `
sources:
- match:
    mesh.io/service: frontend
    region: us
destinations:
- match:
    mesh.io/service: backend
conf:
    detectors:
      totalErrors: {}
      standardDeviation: {}
`,
    );
    accepts(
      circuitBreaker,
      'only thresholds',
      `
sources:
- match:
    mesh.io/service: frontend
    region: us
destinations:
- match:
    mesh.io/service: backend
conf:
    thresholds:
      maxConnections: 2
`,
    );
  });
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      circuitBreaker,
      'spec: empty',
      `

`,
      [
        ['sources', 'must have at least one element'],
        ['destinations', 'must have at least one element'],
        ['conf', 'must have at least one of the detector or threshold configured'],
      ],
    );
    refuses(
      circuitBreaker,
      'wrong format',
      `
sources:
- match:
    mesh.io/service: frontend
    region: us
destinations:
- match:
    mesh.io/service: backend
    region: eu
conf:
    maxEjectionPercent: 120
    detectors:
      failure:
        threshold: 850
`,
      [
        ['destinations[0].match', 'must consist of exactly one tag "mesh.io/service"'],
        ['destinations[0].match.region', 'tag "region" is not allowed'],
        ['conf.maxEjectionPercent', 'has to be in [0.0 - 100.0] range'],
        ['conf.detectors.failure.threshold', 'has to be in [0.0 - 100.0] range'],
      ],
    );
    refuses(
      circuitBreaker,
      'empty thresholds section',
      `
sources:
- match:
    mesh.io/service: frontend
    region: us
destinations:
- match:
    mesh.io/service: backend
conf:
  detectors:
    totalErrors: {}
    standardDeviation: {}
  thresholds: {}
`,
      [['conf.thresholds', "can't be empty"]],
    );
    refuses(
      circuitBreaker,
      'empty detectors section',
      `
sources:
- match:
    mesh.io/service: frontend
    region: us
destinations:
- match:
    mesh.io/service: backend
conf:
  detectors: {}
  thresholds:
    maxConnections: 2
`,
      [['conf.detectors', "can't be empty"]],
    );
    refuses(
      circuitBreaker,
      'empty detectors and thresholds section',
      `
sources:
- match:
    mesh.io/service: frontend
    region: us
destinations:
- match:
    mesh.io/service: backend
conf:
  detectors: {}
  thresholds: {}
`,
      [['conf', 'must have at least one of the detector or threshold configured']],
    );
  });
});
