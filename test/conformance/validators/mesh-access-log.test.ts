import { describe } from 'vitest';
import { meshAccessLog } from '../../../src/resources/kinds/mesh-access-log.js';
import { casesOf } from './yaml-cases.js';

// Kuma 2.0.0 pkg/plugins/policies/meshaccesslog/api/v1alpha1/validator_test.go: each Entry is one case of the same name with the
// reference's YAML, the content of our `spec` (`kuma.io/` spelled `mesh.io/`). A refusal lists the
// reference's fields exactly, each with a word of our message (Kuma's message in a comment).
const { accepts, refuses } = casesOf(meshAccessLog, { underSpec: true });

describe('Kuma 2.0.0 validator conformance: MeshAccessLog', () => {
  describe('should pass validation', () => {
    accepts(
      'mesh from/to example',
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - tcp:
            format:
              json:
                - key: "start_time"
                  value: "%START_TIME%"
            address: 127.0.0.1:5000
to:
  - targetRef:
      kind: MeshService
      name: web-backend
    default:
      backends:
        - file:
           format:
             plain: '{"start_time": "%START_TIME%"}'
           path: '/tmp/logs.txt'
`,
    );
    accepts(
      'empty format',
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - file:
            path: '/tmp/logs.txt'
`,
    );
    accepts(
      'empty backend list',
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends: []
`,
    );
  });
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      "empty 'from' and 'to' array",
      `
targetRef:
  kind: Mesh
`,
      [
        ['spec', 'requires at least one of "to", "from"'], // Kuma: at least one of 'from', 'to' has to be defined
      ],
    );
    refuses(
      "empty 'path'",
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - file:
           format:
             plain: '{"start_time": "%START_TIME%"}'
`,
      [
        ['spec.from[0].default.backends[0].file.path', 'cannot be empty'], // Kuma: file backend requires a valid path
      ],
    );
    refuses(
      "invalid 'path'",
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - file:
           format:
             plain: '{"start_time": "%START_TIME%"}'
           path: '#not_valid'
`,
      [
        ['spec.from[0].default.backends[0].file.path', 'file path'], // Kuma: file backend requires a valid path
      ],
    );
    refuses(
      "empty 'key'",
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - file:
           path: '/tmp/logs.txt'
           format:
             json:
                - value: "%START_TIME%"
`,
      [
        ['spec.from[0].default.backends[0].file.format.json[0].key', 'cannot be empty'], // Kuma: key cannot be empty
      ],
    );
    refuses(
      "empty 'value'",
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - file:
           path: '/tmp/logs.txt'
           format:
             json:
                - key: "start_time"
`,
      [
        ['spec.from[0].default.backends[0].file.format.json[0].value', 'cannot be empty'], // Kuma: value cannot be empty
      ],
    );
    refuses(
      "invalid 'key'",
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - file:
           path: '/tmp/logs.txt'
           format:
             json:
                - key: '"'
                  value: "%START_TIME%"
`,
      [
        ['spec.from[0].default.backends[0].file.format.json[0]', 'valid JSON object'], // Kuma: is not a valid JSON object
      ],
    );
    refuses(
      "both 'plain' and 'json' defined",
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - tcp:
            address: 127.0.0.1:5000
            format:
              plain: '{"start_time": "%START_TIME%"}'
              json:
                - key: "start_time"
                  value: "%START_TIME%"
`,
      [
        ['spec.from[0].default.backends[0].tcp.format', 'only one of'], // Kuma: format must have only one type defined: plain, json
      ],
    );
    refuses(
      "both 'tcp' and 'file' defined",
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - tcp:
            address: 127.0.0.1:5000
            format:
              json:
                - key: "start_time"
                  value: "%START_TIME%"
          file:
           format:
             plain: '{"start_time": "%START_TIME%"}'
           path: '/tmp/logs.txt'
`,
      [
        ['spec.from[0].default.backends[0]', 'only one of'], // Kuma: backend must have only one type defined: tcp, file
      ],
    );
    refuses(
      "'to' defined in MeshGatewayRoute",
      `
targetRef:
  kind: MeshGatewayRoute
  name: some-mesh-gateway-route
to:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - file:
           format:
             plain: '{"start_time": "%START_TIME%"}'
           path: '/tmp/logs.txt'
`,
      [
        ['spec.to', 'a gateway route has no outbound'], // Kuma: cannot use \"to\" when \"targetRef\" is \"MeshGatewayRoute\" - there is no outbound
      ],
    );
    refuses(
      "'default' not defined in to",
      `
targetRef:
  kind: Mesh
to:
  - targetRef:
      kind: Mesh
`,
      [
        // differs on purpose: `default` itself is absent, and the cause is on it, as on every absent
        // object of ours; Kuma names the first field it lacks.
        ['spec.to[0].default', 'cannot be empty'], // Kuma (at spec.to[0].default.backends): must be defined
      ],
    );
    refuses(
      "'default' not defined in from",
      `
targetRef:
  kind: Mesh
from:
  - targetRef:
      kind: Mesh
`,
      [
        // differs on purpose: `default` itself is absent, and the cause is on it, as on every absent
        // object of ours; Kuma names the first field it lacks.
        ['spec.from[0].default', 'cannot be empty'], // Kuma (at spec.from[0].default.backends): must be defined
      ],
    );
    refuses(
      "'address' not valid",
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - tcp:
            format:
              json:
                - key: "start_time"
                  value: "%START_TIME%"
            address: not_valid_url
`,
      [
        ['spec.from[0].default.backends[0].tcp.address', 'address'], // Kuma: tcp backend requires valid address
      ],
    );
    refuses(
      'empty format json list',
      `
targetRef:
  kind: MeshService
  name: web-frontend
from:
  - targetRef:
      kind: Mesh
    default:
      backends:
        - file:
            path: '/tmp/logs.txt'
            format:
              json: []
        - tcp:
            address: http://logs.com
            format:
              json: []
`,
      [
        ['spec.from[0].default.backends[0].file.format.json', 'at least one element'], // Kuma: must not be empty
        ['spec.from[0].default.backends[1].tcp.format.json', 'at least one element'], // Kuma: must not be empty
      ],
    );
  });
});
