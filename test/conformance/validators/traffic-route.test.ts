import { describe } from 'vitest';
import { trafficRoute } from '../../../src/resources/kinds/traffic-route.js';
import { accepts, refuses } from './conformance.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/traffic_route_validator_test.go: each Entry is one case of the same name, `kuma.io/` spelled
// `mesh.io/`; refusals list the reference's violations (field, Kuma's message). Fields are compared
// exactly; ./conformance.ts says which words of ours stand for each of Kuma's messages.
describe('Kuma 2.0.0 validator conformance: TrafficRoute', () => {
  describe('should pass validation', () => {
    accepts(
      trafficRoute,
      'example with split',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  loadBalancer:
    roundRobin: {}
  split:
  - weight: 100
    destination:
      mesh.io/service: offers
  - weight: 0
    destination:
      mesh.io/service: backend
`,
    );
    accepts(
      trafficRoute,
      'example with destination',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  loadBalancer:
    leastRequest: {}
  destination:
    mesh.io/service: offers
`,
    );
    // differs on purpose: Kuma's YAML reader drops unknown fields, so its example's `host` written
    // under `path` (not beside it) passes; we refuse an unknown field (the rest is accepted).
    refuses(
      trafficRoute,
      'example with http',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  loadBalancer:
    ringHash:
      hashFunction: XX_HASH
  http:
  - match:
      path:
        prefix: "/offers"
      method:
        exact: "GET"
      headers:
        x-custom-header:
          regex: "^xyz$"
    modify:
      path:
        regex:
          pattern: "^/service/([^/]+)(/.*)$"
          substitution: "\\\\2/instance/\\\\1"
        host:
          fromPath:
            pattern: "^/(.+)/.+$"
            substitution: "\\\\1"
    destination:
      mesh.io/service: offers
  destination:
    mesh.io/service: backend
`,
      [['conf.http[0].modify.path.host', 'unknown field']],
    );
    accepts(
      trafficRoute,
      'example with http split',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  http:
  - match:
      path:
        prefix: "/offers"
    modify:
      path:
        rewritePrefix: "/not-offers"
      host:
        value: xyz
      requestHeaders:
        add:
          - name: x-custom-header
            value: xyz
            append: true
        remove:
          - name: x-something
      responseHeaders:
        add:
          - name: x-custom-header
            value: xyz
            append: true
        remove:
          - name: x-something
    split:
      - weight: 20
        destination:
          mesh.io/service: offers
  split:
    - weight: 100
      destination:
        mesh.io/service: backend
`,
    );
  });
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      trafficRoute,
      'empty spec',
      `

`,
      [
        ['sources', 'must have at least one element'],
        ['destinations', 'must have at least one element'],
        ['conf', 'cannot be empty'],
      ],
    );
    refuses(
      trafficRoute,
      'selectors without tags',
      `
sources:
- match: {}
destinations:
- match: {}
conf:
  split:
  - destination: {}
`,
      [
        ['sources[0].match', 'must have at least one tag'],
        ['sources[0].match', 'mandatory tag "mesh.io/service" is missing'],
        ['destinations[0].match', 'must consist of exactly one tag "mesh.io/service"'],
        ['destinations[0].match', 'mandatory tag "mesh.io/service" is missing'],
        ['conf.split[0].weight', 'needs to be defined'],
        ['conf.split[0].destination', 'must have at least one tag'],
        ['conf.split[0].destination', 'mandatory tag "mesh.io/service" is missing'],
        ['conf.split', 'there must be at least one split entry with weight above 0'],
      ],
    );
    refuses(
      trafficRoute,
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
  split:
  - weight: 1
    destination:
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
        ['conf.split[0].destination["mesh.io/service"]', 'tag value must be non-empty'],
        ['conf.split[0].destination.region', 'tag value must be non-empty'],
      ],
    );
    refuses(
      trafficRoute,
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
  destination:
    region:
`,
      [
        ['sources[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['sources[0].match.region', 'tag value must be non-empty'],
        ['sources[1].match', 'must have at least one tag'],
        ['sources[1].match', 'mandatory tag "mesh.io/service" is missing'],
        ['destinations[0].match', 'must consist of exactly one tag "mesh.io/service"'],
        ['destinations[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['destinations[0].match.region', 'tag "region" is not allowed'],
        ['destinations[0].match.region', 'tag value must be non-empty'],
        ['destinations[1].match', 'must consist of exactly one tag "mesh.io/service"'],
        ['destinations[1].match', 'mandatory tag "mesh.io/service" is missing'],
        ['conf.destination.region', 'tag value must be non-empty'],
        ['conf.destination', 'mandatory tag "mesh.io/service" is missing'],
      ],
    );
    refuses(
      trafficRoute,
      'wrong ring hash function in the load balancer',
      `
sources:
- match:
    mesh.io/service: '*'
destinations:
- match:
    mesh.io/service: '*'
conf:
  split:
  - weight: 100
    destination:
      mesh.io/service: 'backend'
  loadBalancer:
    ringHash:
      hashFunction: 'INVALID_HASH_FUNCTION'
`,
      [['conf.loadBalancer.ringHash.hashFunction', 'must have a valid hash function']],
    );
    refuses(
      trafficRoute,
      'cannot define both split and destination',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  split:
  - weight: 100
    destination:
      mesh.io/service: offers
  destination:
    mesh.io/service: offers
`,
      [['conf', '"split" cannot be defined at the same time as "destination"']],
    );
    refuses(
      trafficRoute,
      'requires either split or a destination',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf: {}
`,
      [['conf', 'requires either "destination" or "split"']],
    );
    refuses(
      trafficRoute,
      'http - cannot define both split and destination',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  http:
  - match:
      path:
        prefix: "/offers"
    split:
    - weight: 100
      destination:
        mesh.io/service: offers
    destination:
      mesh.io/service: offers
  destination:
    mesh.io/service: offers
`,
      [['conf.http[0]', '"split" cannot be defined at the same time as "destination"']],
    );
    refuses(
      trafficRoute,
      'http - requires either split or destination',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  http:
  - match:
      path:
        prefix: "/offers"
  destination:
    mesh.io/service: offers
`,
      [['conf.http[0]', 'requires either "destination" or "split"']],
    );
    refuses(
      trafficRoute,
      'http - match must be present',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  http:
  - destination:
      mesh.io/service: offers
  destination:
    mesh.io/service: offers
`,
      [
        [
          'conf.http[0].match',
          'must be present and contain at least one of the elements: "method", "path" or "headers"',
        ],
      ],
    );
    refuses(
      trafficRoute,
      'http - invalid match values',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  http:
  - match:
      method: {}
      path: {}
      headers: {}
    destination:
      mesh.io/service: offers
  - match:
      method:
        regex: ""
      path:
        prefix: ""
      headers:
        "": {}
    destination:
      mesh.io/service: offers
  destination:
    mesh.io/service: offers
`,
      [
        ['conf.http[0].match.method', 'cannot be empty. Available options: "exact", "split" or "regex"'],
        ['conf.http[0].match.path', 'cannot be empty. Available options: "exact", "split" or "regex"'],
        ['conf.http[0].match.headers', 'must contain at least one element'],
        ['conf.http[1].match.method.regex', 'cannot be empty'],
        ['conf.http[1].match.path.prefix', 'cannot be empty'],
        ['conf.http[1].match.headers[""]', 'cannot be empty'],
        ['conf.http[1].match.headers[""]', 'cannot be empty. Available options: "exact", "split" or "regex"'],
      ],
    );
    refuses(
      trafficRoute,
      'split with all entries that sums to 0',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  split:
  - weight: 0
    destination:
      mesh.io/service: offers
`,
      [['conf.split', 'there must be at least one split entry with weight above 0']],
    );
    refuses(
      trafficRoute,
      'http - modify empty values',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  http:
  - match:
      path:
        prefix: "/offers"
    modify:
      path:
        rewritePrefix: ""
      host:
        value: ""
      requestHeaders:
        add:
          - name: ""
            value: ""
        remove:
          - name: ""
      responseHeaders:
        add:
          - name: ""
            value: ""
        remove:
          - name: ""
    destination:
      mesh.io/service: offers
  - match:
      path:
        prefix: "/offers1"
    modify:
      path:
        regex:
          pattern: ""
          substitution: ""
      host:
        fromPath:
          pattern: ""
          substitution: ""
    destination:
      mesh.io/service: offers
  - match:
      path:
        prefix: "/offers1"
    modify:
      path: {}
      host: {}
    destination:
      mesh.io/service: offers
  destination:
    mesh.io/service: backend
`,
      [
        ['conf.http[0].modify.path.rewritePrefix', 'cannot be empty'],
        ['conf.http[0].modify.host.value', 'cannot be empty'],
        ['conf.http[0].modify.requestHeaders.add[0].name', 'cannot be empty'],
        ['conf.http[0].modify.requestHeaders.add[0].value', 'cannot be empty'],
        ['conf.http[0].modify.requestHeaders.remove[0].name', 'cannot be empty'],
        ['conf.http[0].modify.responseHeaders.add[0].name', 'cannot be empty'],
        ['conf.http[0].modify.responseHeaders.add[0].value', 'cannot be empty'],
        ['conf.http[0].modify.responseHeaders.remove[0].name', 'cannot be empty'],
        ['conf.http[1].modify.path.regex.pattern', 'cannot be empty'],
        ['conf.http[1].modify.path.regex.substitution', 'cannot be empty'],
        ['conf.http[1].modify.host.fromPath.pattern', 'cannot be empty'],
        ['conf.http[1].modify.host.fromPath.substitution', 'cannot be empty'],
        ['conf.http[2].modify.path', 'either "rewritePrefix" or "regex" has to be set'],
        ['conf.http[2].modify.host', 'either "value" or "fromPath" has to be set'],
      ],
    );
    refuses(
      trafficRoute,
      'http - modify path prefix cannot be used if match path prefix is not used',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  http:
  - match:
      path:
        exact: "/offers"
    modify:
      path:
        rewritePrefix: "/not-offers"
    destination:
      mesh.io/service: offers
  destination:
    mesh.io/service: backend
`,
      [
        [
          'conf.http[0].modify.path.rewritePrefix',
          'can only be set when .http.match.path.prefix is not empty',
        ],
      ],
    );
    refuses(
      trafficRoute,
      'http - not allow some headers to be modified',
      `
sources:
- match:
    mesh.io/service: web
destinations:
- match:
    mesh.io/service: backend
conf:
  http:
  - match:
      path:
        exact: "/offers"
    modify:
      requestHeaders:
        add:
        - name: 'host'
          value: xyz
        - name: 'Host'
          value: xyz
        - name: ':path'
          value: xyz
        remove:
        - name: 'host'
          value: xyz
      responseHeaders:
        add:
        - name: 'host'
          value: xyz
        - name: 'Host'
          value: xyz
        - name: ':path'
          value: xyz
        remove:
        - name: 'host'
          value: xyz
    destination:
      mesh.io/service: offers
  destination:
    mesh.io/service: backend
`,
      [
        [
          'conf.http[0].modify.requestHeaders.add[0].name',
          'host header and HTTP/2 pseudo-headers are not allowed to be modified',
        ],
        [
          'conf.http[0].modify.requestHeaders.add[1].name',
          'host header and HTTP/2 pseudo-headers are not allowed to be modified',
        ],
        [
          'conf.http[0].modify.requestHeaders.add[2].name',
          'host header and HTTP/2 pseudo-headers are not allowed to be modified',
        ],
        [
          'conf.http[0].modify.requestHeaders.remove[0].name',
          'host header and HTTP/2 pseudo-headers are not allowed to be modified',
        ],
        // differs on purpose: a remove entry has a name only; Kuma's YAML reader drops the \`value\`.
        ['conf.http[0].modify.requestHeaders.remove[0].value', 'unknown field'],
        [
          'conf.http[0].modify.responseHeaders.add[0].name',
          'host header and HTTP/2 pseudo-headers are not allowed to be modified',
        ],
        [
          'conf.http[0].modify.responseHeaders.add[1].name',
          'host header and HTTP/2 pseudo-headers are not allowed to be modified',
        ],
        [
          'conf.http[0].modify.responseHeaders.add[2].name',
          'host header and HTTP/2 pseudo-headers are not allowed to be modified',
        ],
        [
          'conf.http[0].modify.responseHeaders.remove[0].name',
          'host header and HTTP/2 pseudo-headers are not allowed to be modified',
        ],
        // differs on purpose: a remove entry has a name only; Kuma's YAML reader drops the \`value\`.
        ['conf.http[0].modify.responseHeaders.remove[0].value', 'unknown field'],
      ],
    );
  });
});
