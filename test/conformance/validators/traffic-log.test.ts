import { describe } from 'vitest';
import { trafficLog } from '../../../src/resources/kinds/traffic-log.js';
import { refuses } from './conformance.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/traffic_log_validator_test.go: each Entry is one case of the same name, `kuma.io/` spelled
// `mesh.io/`; refusals list the reference's violations (field, Kuma's message). Fields are compared
// exactly; ./conformance.ts says which words of ours stand for each of Kuma's messages.
describe('Kuma 2.0.0 validator conformance: TrafficLog', () => {
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      trafficLog,
      'empty spec',
      `

`,
      [
        ['sources', 'must have at least one element'],
        ['destinations', 'must have at least one element'],
      ],
    );
    refuses(
      trafficLog,
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
      ],
    );
    refuses(
      trafficLog,
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
      ],
    );
    refuses(
      trafficLog,
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
      ],
    );
  });
});
