import { describe } from 'vitest';
import { virtualOutbound } from '../../../src/resources/kinds/virtual-outbound.js';
import { accepts, refuses } from './conformance.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/virtual_outbound_validator_test.go: each Entry is one case of the same name, `kuma.io/` spelled
// `mesh.io/`; refusals list the reference's violations (field, Kuma's message). Fields are compared
// exactly; ./conformance.ts says which words of ours stand for each of Kuma's messages.
describe('Kuma 2.0.0 validator conformance: VirtualOutbound', () => {
  describe('should pass validation', () => {
    accepts(
      virtualOutbound,
      'full example',
      `
selectors:
- match:
    region: eu
    mesh.io/service: "*"
conf:
  host: "foo.bar"
  port: "80"
  parameters:
    - name: "service"
      tagKey: "mesh.io/service"
`,
    );
    accepts(
      virtualOutbound,
      'empty host',
      `
selectors:
- match:
    region: eu
    mesh.io/service: "*"
conf:
  host: "{{.service}}.mesh"
  port: "{{.port}}"
  parameters:
    - name: "service"
      tagKey: mesh.io/service
    - name: "port"
      tagKey: mesh.io/port
`,
    );
  });
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      virtualOutbound,
      'empty spec',
      `

`,
      [
        ['selectors', 'must have at least one element'],
        ['conf', 'has to be defined'],
      ],
    );
    refuses(
      virtualOutbound,
      'selectors without tags',
      `
selectors:
- match: {}
conf:
  host: "foo.mesh"
  port: "80"
  parameters:
  - name: "service"
    tagKey: "mesh.io/service"
`,
      [['selectors[0].match', 'must have at least one tag']],
    );
    refuses(
      virtualOutbound,
      'selectors with empty tags values',
      `
selectors:
- match:
    mesh.io/service:
    region:
conf:
  host: "foo.mesh"
  port: "80"
  parameters:
  - name: "service"
    tagKey: "mesh.io/service"
`,
      [
        ['selectors[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['selectors[0].match.region', 'tag value must be non-empty'],
      ],
    );
    refuses(
      virtualOutbound,
      'multiple selectors',
      `
selectors:
- match:
    mesh.io/service:
    region:
- match: {}
conf:
  host: "foo.mesh"
  port: "80"
  parameters:
  - name: "service"
    tagKey: "mesh.io/service"
`,
      [
        ['selectors[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['selectors[0].match.region', 'tag value must be non-empty'],
        ['selectors[1].match', 'must have at least one tag'],
      ],
    );
    refuses(
      virtualOutbound,
      'bad host template',
      `
selectors:
- match:
    mesh.io/service: "*"
conf:
  host: "foo.{{mesh"
  port: "80"
  parameters:
  - name: "service"
    tagKey: "mesh.io/service"
`,
      [
        [
          'conf.host',
          "template pre evaluation failed with error='failed compiling gotemplate error='template: :1: function \"mesh\" not defined''",
        ],
      ],
    );
    refuses(
      virtualOutbound,
      'bad port template',
      `
selectors:
- match:
    mesh.io/service: "*"
conf:
  host: "foo.mesh"
  port: "{{port"
  parameters:
  - name: "service"
    tagKey: "mesh.io/service"
`,
      [
        [
          'conf.port',
          "template pre evaluation failed with error='failed compiling gotemplate error='template: :1: function \"port\" not defined''",
        ],
      ],
    );
    refuses(
      virtualOutbound,
      'port is not a number template',
      `
selectors:
- match:
    mesh.io/service: "*"
conf:
  host: "foo.mesh"
  port: "{{.port}}a"
  parameters:
  - name: port
    tagKey: "service"
  - name: "service"
    tagKey: "mesh.io/service"
`,
      [
        [
          'conf.port',
          "template pre evaluation failed with error='evaluation of template with parameters didn't evaluate to a parsable number result='1a''",
        ],
      ],
    );
    refuses(
      virtualOutbound,
      'parameter is not good tag',
      `
selectors:
- match:
    mesh.io/service: "*"
conf:
  host: "foo.mesh"
  port: "80"
  parameters:
    - name: port
      tagKey: "***"
    - name: service
      tagKey: "mesh.io/service"
`,
      [['conf.parameters[0].tagKey', 'must be a valid tag name']],
    );
    refuses(
      virtualOutbound,
      'parameter is not good template entry',
      `
selectors:
- match:
    mesh.io/service: "*"
conf:
  host: "foo.mesh"
  port: "80"
  parameters:
  - name: _
    tagKey: "mesh.io/service"
`,
      [['conf.parameters[0].name', 'must consist of alphanumeric characters to be used as a gotemplate key']],
    );
    refuses(
      virtualOutbound,
      'parameter is not good template entry',
      `
selectors:
- match:
    mesh.io/service: "*"
conf:
  host: "foo.mesh"
  port: "80"
  parameters:
  - name: srv
    tagKey: "mesh.io/service"
  - name: "mesh.io/port"
`,
      [['conf.parameters[1].name', 'must consist of alphanumeric characters to be used as a gotemplate key']],
    );
    refuses(
      virtualOutbound,
      'duplicate name not allowed',
      `
selectors:
- match:
    mesh.io/service: "*"
conf:
  host: "foo.mesh"
  port: "80"
  parameters:
  - name: srv
    tagKey: "mesh.io/service"
  - name: srv
`,
      [['conf.parameters[1].name', 'name is already used']],
    );
    refuses(
      virtualOutbound,
      'empty parameter is not good template entry',
      `
selectors:
- match:
    mesh.io/service: "*"
conf:
  host: "foo.mesh"
  port: "80"
  parameters:
    - name: ""
      tagKey: "mesh.io/service"
`,
      [['conf.parameters[0].name', 'must consist of alphanumeric characters to be used as a gotemplate key']],
    );
    refuses(
      virtualOutbound,
      'missing service tag in parameters',
      `
selectors:
- match:
    mesh.io/service: "*"
conf:
  host: "foo.mesh"
  port: "80"
  parameters:
    - name: "foo"
      tagKey: "mesh.io/port"
`,
      [['conf.parameters', 'must contain a parameter with mesh.io/service as a tagKey']],
    );
  });
});
