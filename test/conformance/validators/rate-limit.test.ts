import { describe } from 'vitest';
import { rateLimit } from '../../../src/resources/kinds/rate-limit.js';
import { accepts, refuses } from './conformance.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/rate_limit_validator_test.go: each Entry is one case of the same name, `kuma.io/` spelled
// `mesh.io/`; refusals list the reference's violations (field, Kuma's message). Fields are compared
// exactly; ./conformance.ts says which words of ours stand for each of Kuma's messages.
describe('Kuma 2.0.0 validator conformance: RateLimit', () => {
  describe('should pass validation', () => {
    accepts(
      rateLimit,
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
  http:
    requests: 10
    interval: 10s
    onRateLimit:
      status: 423
      headers:
        - key: "x-mesh-rate-limit"
          value: "true"
          append: false
        - key: "x-kuma-rate-limit"
          value: "true"
          append: true
`,
    );
    accepts(
      rateLimit,
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
  http:
    requests: 10
    interval: 10s
    onRateLimit:
      status: 423
      headers:
        - key: "x-kuma-rate-limit"
          value: "true"
          append: true
`,
    );
  });
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      rateLimit,
      'empty spec',
      `

`,
      [
        ['sources', 'must have at least one element'],
        ['destinations', 'must have at least one element'],
        ['conf', 'must have conf'],
      ],
    );
    refuses(
      rateLimit,
      'selectors without tags',
      `
sources:
- match: {}
destinations:
- match: {}
conf:
  http:
    requests: 10
    interval: 10s
`,
      [
        ['sources[0].match', 'must have at least one tag'],
        ['destinations[0].match', 'must have at least one tag'],
      ],
    );
    refuses(
      rateLimit,
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
conf:
  http:
    requests: 10
    interval: 10s
`,
      [
        ['sources[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['sources[0].match.region', 'tag value must be non-empty'],
        ['destinations[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['destinations[0].match.region', 'tag value must be non-empty'],
      ],
    );
    refuses(
      rateLimit,
      'multiple selectors',
      `
sources:
- match:
    mesh.io/service:
    region:
- match: {}
destinations:
- match:
    mesh.io/service:
    region:
- match: {}
conf:
  http:
    requests: 10
    interval: 10s
`,
      [
        ['sources[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['sources[0].match.region', 'tag value must be non-empty'],
        ['sources[1].match', 'must have at least one tag'],
        ['destinations[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['destinations[0].match.region', 'tag value must be non-empty'],
        ['destinations[1].match', 'must have at least one tag'],
      ],
    );
    refuses(
      rateLimit,
      'http',
      `
sources:
- match:
    mesh.io/service: '*'
destinations:
- match:
    mesh.io/service: '*'
conf:
  http:
    onRateLimit:
      headers:
        - key: ""
          value: ""
`,
      [
        ['conf.http.requests', 'requests must be set'],
        ['conf.http.interval', 'interval must be set'],
        // differs on purpose: Kuma names both causes `conf.http.onRateLimit.header["0"]`, a path with
        // no such field; ours name the entry's own fields.
        ['conf.http.onRateLimit.headers[0].key', 'key must be set'],
        ['conf.http.onRateLimit.headers[0].value', 'value must be set'],
      ],
    );
  });
});
