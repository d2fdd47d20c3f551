import { describe } from 'vitest';
import { trafficTrace } from '../../../src/resources/kinds/traffic-trace.js';
import { accepts, refuses } from './conformance.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/traffic_trace_validator_test.go: each Entry is one case of the same name, `kuma.io/` spelled
// `mesh.io/`; refusals list the reference's violations (field, Kuma's message). Fields are compared
// exactly; ./conformance.ts says which words of ours stand for each of Kuma's messages.
describe('Kuma 2.0.0 validator conformance: TrafficTrace', () => {
  describe('should pass validation', () => {
    accepts(
      trafficTrace,
      'full example',
      `
selectors:
- match:
    region: eu
conf:
  backend: zipkin-eu
`,
    );
    accepts(
      trafficTrace,
      'empty backend',
      `
selectors:
- match:
    region: eu
conf:
  backend: # backend can be empty, default backend from mesh is chosen
`,
    );
    accepts(
      trafficTrace,
      'empty conf',
      `
selectors:
- match:
    region: eu
`,
    );
  });
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      trafficTrace,
      'empty spec',
      `

`,
      [['selectors', 'must have at least one element']],
    );
    refuses(
      trafficTrace,
      'selectors without tags',
      `
selectors:
- match: {}
`,
      [['selectors[0].match', 'must have at least one tag']],
    );
    refuses(
      trafficTrace,
      'selectors with empty tags values',
      `
selectors:
- match:
    mesh.io/service:
    region:
`,
      [
        ['selectors[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['selectors[0].match.region', 'tag value must be non-empty'],
      ],
    );
    refuses(
      trafficTrace,
      'multiple selectors',
      `
selectors:
- match:
    mesh.io/service:
    region:
- match: {}
`,
      [
        ['selectors[0].match["mesh.io/service"]', 'tag value must be non-empty'],
        ['selectors[0].match.region', 'tag value must be non-empty'],
        ['selectors[1].match', 'must have at least one tag'],
      ],
    );
  });
});
