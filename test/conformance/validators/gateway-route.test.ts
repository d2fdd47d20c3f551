import { describe } from 'vitest';
import { meshGatewayRoute } from '../../../src/resources/kinds/mesh-gateway-route.js';
import { casesOf } from './yaml-cases.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/gateway_route_validator_test.go: each Entry/ErrorCase is
// one case of the same name with the reference's YAML (`kuma.io/` spelled `mesh.io/`). The
// reference writes protobuf's snake_case names (`query_parameters`, `request_header`,
// `status_code`), which its decoder also reads; our bodies and field paths use the JSON names
// (`queryParameters`, `requestHeader`, `statusCode`). A refusal lists the reference's fields
// exactly, each with a word of our message (Kuma's message in a comment).
//
// differs on purpose, in every case with a cause on a path match: Kuma names the match
// (`matches[0].value`), we name the field, `matches[0].path.value`.
const { accepts, refuses } = casesOf(meshGatewayRoute, { underSpec: false });

describe('Kuma 2.0.0 validator conformance: MeshGatewayRoute', () => {
  accepts(
    'HTTP route',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    hostnames:
    - foo.example.com
    rules:
    - matches:
      - method: GET
        path:
          match: EXACT
          value: /
        headers:
        - match: EXACT
          name: x-foo
          value: "my great foo"
        - match: REGEX
          name: x-count
          value: "[0-9]+"
        queryParameters:
        - match: EXACT
          name: customer
          value: kong
      filters:
      - requestHeader:
          set:
          - name: x-foo
            value: foo
          - name: x-foo
            value: foo
          add:
          - name: x-added
            value: added
          - name: x-added
            value: added
          remove:
          - x-deleted
      - mirror:
         percentage: 1.12
         backend:
           destination:
             mesh.io/service: target
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-1
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
  );
  accepts(
    'HTTP redirect',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    hostnames:
    - foo.example.com
    rules:
    - matches:
      - method: GET
        path:
          match: EXACT
          value: /
        headers:
        - match: EXACT
          name: x-foo
          value: "my great foo"
        - match: REGEX
          name: x-count
          value: "[0-9]+"
        queryParameters:
        - match: EXACT
          name: customer
          value: kong
      filters:
      - redirect:
         scheme: http
         hostname: foo.example.com
         port: 80
         statusCode: 307
`,
  );
  refuses(
    'missing conf',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
`,
    [
      ['conf', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'missing HTTP rules',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules: []
`,
    [
      ['conf.http.rules', 'at least one element'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'missing HTTP rule matches',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].matches', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'missing HTTP rule backends',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          match: EXACT
          value: /
`,
    [
      ['conf.http.rules[0].backends', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'backends with no service',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          match: EXACT
          value: /
      backends:
      - weight: 5
        destination:
          phoney: target-2
`,
    [
      // differs on purpose: the cause is on the destination map that lacks the tag; Kuma names the
      // backend that holds it.
      ['conf.http.rules[0].backends[0].destination', 'mandatory tag "mesh.io/service" is missing'], // Kuma: mandatory tag "mesh.io/service" is missing
    ],
  );
  refuses(
    'rule with missing match',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - {}
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].matches[0]', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'match with empty path',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          match: REGEX
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].matches[0].path.value', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'match with relative path',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: some/path
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].matches[0].path.value', 'must be an absolute path'], // Kuma: must be an absolute path
    ],
  );
  refuses(
    'match with empty header name',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - headers:
        - value: value
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].matches[0].headers[0].name', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'match with empty header value',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - headers:
        - name: value
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].matches[0].headers[0].value', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'match with empty query name',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - queryParameters:
        - value: value
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].matches[0].queryParameters[0].name', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'match with empty query value',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - queryParameters:
        - name: value
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].matches[0].queryParameters[0].value', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'empty request header filter',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - requestHeader: {}
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].filters[0].requestHeader', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'empty request header filter set',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - requestHeader:
          set:
          - name: x-foo
          add:
          - name: x-foo
            value: foo
          remove:
          - foo
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].filters[0].requestHeader.set[0].value', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'empty request header filter add',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - requestHeader:
          set:
          - name: x-foo
            value: foo
          add:
          - value: foo
          remove:
          - foo
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].filters[0].requestHeader.add[0].name', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'empty request header filter remove',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - requestHeader:
          set:
          - name: x-foo
            value: foo
          add:
          - name: x-foo
            value: foo
          remove:
          - ""
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].filters[0].requestHeader.remove[0]', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'empty mirror filter backend',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - mirror:
          percentage: 0.0
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].filters[0].mirror.backend', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'mirror filter invalid percentage',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - mirror:
          percentage: -1.0
          backend:
            destination:
              mesh.io/service: target-2
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].filters[0].mirror.percentage', 'greater than or equal to 0'], // Kuma: has to be in [0.0 - 100.0] range
    ],
  );
  refuses(
    'redirect filter with empty scheme',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - redirect:
          hostname: example.com
          statusCode: 301
`,
    [
      ['conf.http.rules[0].filters[0].redirect.scheme', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'redirect filter with empty hostname',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - redirect:
          scheme: https
          statusCode: 301
`,
    [
      ['conf.http.rules[0].filters[0].redirect.hostname', 'cannot be empty'], // Kuma: cannot be empty
    ],
  );
  refuses(
    'redirect filter with invalid port',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - redirect:
          scheme: https
          hostname: example.com
          port: 128555
          statusCode: 301
`,
    [
      ['conf.http.rules[0].filters[0].redirect.port', 'in the range 1-65535'], // Kuma: port must be in the range [1, 65535]
    ],
  );
  refuses(
    'redirect filter with invalid status',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - redirect:
          scheme: https
          hostname: example.com
          statusCode: 500
`,
    [
      ['conf.http.rules[0].filters[0].redirect.statusCode', 'in the range 300-308'], // Kuma: must be in the range [300, 308]
    ],
  );
  refuses(
    'redirect filter with backend routes',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - redirect:
          scheme: https
          hostname: example.com
          statusCode: 300
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].backends', 'must be empty when a redirect filter is given'], // Kuma: must be empty when using redirect filters
    ],
  );
  refuses(
    'redirect prevents other filters',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /
      filters:
      - redirect:
          scheme: https
          hostname: example.com
          statusCode: 300
      - mirror:
        backends:
        - weight: 5
          destination:
            mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].filters', 'redirect filter must be the only filter'], // Kuma: redirects cannot be used with other filters
      // differs on purpose: the second filter is `{mirror: null, backends: [...]}` (`backends` is
      // indented under the filter); we refuse the null as a wrong type and the unknown field, where
      // Kuma's decoder drops both.
      ['conf.http.rules[0].filters[1].mirror', 'object'],
      ['conf.http.rules[0].filters[1].backends', 'unknown field'],
    ],
  );
  refuses(
    'prefix without leading slash and with trailing slash',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          match: PREFIX
          value: prefix/
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].matches[0].path.value', 'trailing slash'], // Kuma: does not need a trailing slash because only a `/`-separated prefix or an entire path is matched
      ['conf.http.rules[0].matches[0].path.value', 'must be an absolute path'], // Kuma: must be an absolute path
    ],
  );
  refuses(
    'prefix match replacement without prefix match filter',
    `
type: MeshGatewayRoute
name: route
mesh: default
selectors:
- match:
    mesh.io/service: gateway
conf:
  http:
    rules:
    - matches:
      - path:
          value: /exact_path
      filters:
      - rewrite:
          replacePrefixMatch: "/"
      backends:
      - weight: 5
        destination:
          mesh.io/service: target-2
`,
    [
      ['conf.http.rules[0].filters[0].rewrite.replacePrefixMatch', 'without a match on a path prefix'], // Kuma: cannot be used without a match on path prefix
    ],
  );
});
