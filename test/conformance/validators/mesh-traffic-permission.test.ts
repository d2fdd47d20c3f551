import { describe } from 'vitest';
import { meshTrafficPermission } from '../../../src/resources/kinds/mesh-traffic-permission.js';
import { casesOf } from './yaml-cases.js';

// Kuma 2.0.0 pkg/plugins/policies/meshtrafficpermission/api/v1alpha1/validator_test.go: each Entry is one case of the same name with the
// reference's YAML, the content of our `spec` (`kuma.io/` spelled `mesh.io/`). A refusal lists the
// reference's fields exactly, each with a word of our message (Kuma's message in a comment).
const { accepts, refuses } = casesOf(meshTrafficPermission, { underSpec: true });

describe('Kuma 2.0.0 validator conformance: MeshTrafficPermission', () => {
  describe('should pass validation', () => {
    accepts(
      'allow or deny all possible kinds of clients',
      `
targetRef:
  kind: Mesh
from:
  - targetRef:
      kind: Mesh
    default:
      action: ALLOW
  - targetRef:
      kind: MeshSubset
      tags:
        mesh.io/zone: us-east
        env: dev
    default:
      action: DENY
  - targetRef:
      kind: MeshService
      name: backend
    default:
      action: ALLOW
  - targetRef:
      kind: MeshServiceSubset
      name: backend
      tags:
        version: v1
    default:
      action: DENY
`,
    );
    accepts(
      'allow MeshSubset at top-level targetRef',
      `
targetRef:
  kind: MeshSubset
  tags:
    env: prod
from:
  - targetRef:
      kind: Mesh
    default:
      action: DENY
`,
    );
    accepts(
      'allow MeshService at top-level targetRef',
      `
targetRef:
  kind: MeshService
  name: backend
from:
  - targetRef:
      kind: Mesh
    default:
      action: DENY
`,
    );
    accepts(
      'allow MeshServiceSubset at top-level targetRef',
      `
targetRef:
  kind: MeshServiceSubset
  name: backend
  tags:
    version: v2
from:
  - targetRef:
      kind: Mesh
    default:
      action: DENY
`,
    );
    accepts(
      'allow MeshGatewayRoute at top-level targetRef',
      `
targetRef:
  kind: MeshGatewayRoute
  name: backend-gateway-route
from:
  - targetRef:
      kind: Mesh
    default:
      action: DENY
`,
    );
  });
  describe('should validate all fields and return as much individual errors as possible', () => {
    refuses(
      "empty 'from' array",
      `
targetRef:
  kind: MeshService
  name: backend
from: []
`,
      [
        ['spec.from', 'at least one element'], // Kuma: needs at least one item
      ],
    );
    // The reference has this entry twice, word for word.
    refuses(
      "empty 'from' array",
      `
targetRef:
  kind: MeshService
  name: backend
from: []
`,
      [
        ['spec.from', 'at least one element'], // Kuma: needs at least one item
      ],
    );
    refuses(
      "not supported kinds in 'from' array",
      `
targetRef:
  kind: MeshService
  name: backend
from: 
  - targetRef:
      kind: MeshGatewayRoute
      name: mgr-1
    default:
      action: ALLOW
`,
      [
        ['spec.from[0].targetRef.kind', 'must be one of'], // Kuma: value is not supported
      ],
    );
    refuses(
      'default is nil',
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
        ['spec.from[0].default', 'cannot be empty'], // Kuma (at spec.from[0].default.action): must be defined
      ],
    );
  });
});
