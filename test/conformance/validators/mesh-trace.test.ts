import { describe } from 'vitest';
import { meshTrace } from '../../../src/resources/kinds/mesh-trace.js';
import { casesOf } from './yaml-cases.js';

// Kuma 2.0.0 pkg/plugins/policies/meshtrace/api/v1alpha1/validator_test.go: each Entry is one case of the same name with the
// reference's YAML, the content of our `spec` (`kuma.io/` spelled `mesh.io/`). A refusal lists the
// reference's fields exactly, each with a word of our message (Kuma's message in a comment).
const { accepts, refuses } = casesOf(meshTrace, { underSpec: true });

describe('Kuma 2.0.0 validator conformance: MeshTrace', () => {
  describe('should pass validation', () => {
    accepts(
      'full zipkin example',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - zipkin:
        url: http://jaeger-collector.mesh-observability:9411/api/v2/spans
        apiVersion: httpJson
  tags:
    - name: team
      literal: core
    - name: env
      header:
        name: x-env
        default: prod
    - name: version
      header:
        name: x-version
  sampling:
    overall: 80
    random: 60
    client: 40
`,
    );
    accepts(
      'with empty backends',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends: []
  tags:
    - name: team
      literal: core
    - name: env
      header:
        name: x-env
        default: prod
    - name: version
      header:
        name: x-version
  sampling:
    overall: 80
    random: 60
    client: 40
`,
    );
    accepts(
      'with datadog backend',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - datadog:
        url: http://intake.datadoghq.eu:8126
        splitService: true
`,
    );
  });
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      'no default',
      `
targetRef:
  kind: MeshService
  name: backend
`,
      [
        // differs on purpose: `default` itself is absent, and the cause is on it, as on every absent
        // object of ours; Kuma names the first field it lacks.
        ['spec.default', 'cannot be empty'], // Kuma (at spec.default.backends): must be defined
      ],
    );
    refuses(
      'no valid backends',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - unknown: {}
`,
      [
        ['spec.default.backends[0]', 'requires one of'], // Kuma: backend must have only one type defined: datadog, zipkin
        // differs on purpose: an unknown field is refused (Kuma's decoder drops it).
        ['spec.default.backends[0].unknown', 'unknown field'],
      ],
    );
    refuses(
      'multiple backends',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - zipkin:
        url: http://jaeger-collector1.mesh-observability:9411/api/v2/spans
    - zipkin:
        url: http://jaeger-collector2.mesh-observability:9411/api/v2/spans
`,
      [
        ['spec.default.backends', 'at most one element'], // Kuma: must have zero or one backend defined
      ],
    );
    refuses(
      'no url for zipkin backend',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - zipkin: {}
`,
      [
        ['spec.default.backends[0].zipkin.url', 'cannot be empty'], // Kuma: must not be empty
      ],
    );
    refuses(
      'invalid url for zipkin backend',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - zipkin:
        url: not_valid_url
`,
      [
        ['spec.default.backends[0].zipkin.url', 'valid URL'], // Kuma: must be a valid url
      ],
    );
    refuses(
      'invalid apiVersion for zipkin backend',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - zipkin:
        url: http://jaeger-collector.mesh-observability:9411/api/v2/spans
        apiVersion: invalid_api_version
`,
      [
        ['spec.default.backends[0].zipkin.apiVersion', 'must be one of'], // Kuma: must be one of httpJson, httpProto
      ],
    );
    refuses(
      'invalid url for datadog backend',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - datadog:
        url: not_valid_url
`,
      [
        ['spec.default.backends[0].datadog.url', 'valid URL'], // Kuma: must be a valid url
      ],
    );
    refuses(
      'no port for datadog backend url',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - datadog:
        url: http://intake.datadoghq.eu
`,
      [
        ['spec.default.backends[0].datadog.url', 'port must be set'], // Kuma: port must be defined
      ],
    );
    refuses(
      'invalid port for datadog backend',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - datadog:
        url: http://intake.datadoghq.eu:999999
`,
      [
        ['spec.default.backends[0].datadog.url', 'port must be in the range 1-65535'], // Kuma: port must be a valid (1-65535)
      ],
    );
    refuses(
      'invalid scheme for datadog backend',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - datadog:
        url: sql://intake.datadoghq.eu:8126
`,
      [
        ['spec.default.backends[0].datadog.url', 'scheme must be http'], // Kuma: scheme must be http
      ],
    );
    refuses(
      'path provided for datadog backend',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - datadog:
        url: http://intake.datadoghq.eu:8126/some/path
`,
      [
        ['spec.default.backends[0].datadog.url', 'path'], // Kuma: path must not be defined
      ],
    );
    refuses(
      'tag missing name',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - datadog:
        url: http://intake.datadoghq.eu:443
  tags:
    - literal: example
    - header:
        default: example
`,
      [
        ['spec.default.tags[0].name', 'cannot be empty'], // Kuma: must not be empty
        ['spec.default.tags[1].name', 'cannot be empty'], // Kuma: must not be empty
        // differs on purpose: a header tag needs the name of the header it reads (Kuma takes none
        // and hands Envoy a tag of no header).
        ['spec.default.tags[1].header.name', 'cannot be empty'],
      ],
    );
    refuses(
      'tag missing type',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - datadog:
        url: http://intake.datadoghq.eu:443
  tags:
    - name: example
`,
      [
        ['spec.default.tags[0]', 'requires one of'], // Kuma: tag must have only one type defined: header, literal
      ],
    );
    refuses(
      'sampling out of range',
      `
targetRef:
  kind: MeshService
  name: backend
default:
  backends:
    - datadog:
        url: http://intake.datadoghq.eu:443
  sampling:
    overall: 101
`,
      [
        ['spec.default.sampling.overall', 'in the range 0-100'], // Kuma: must be between 0 and 100
      ],
    );
  });
});
