import { describe, expect, it } from 'vitest';
import { parse } from 'yaml';
import { TARGET_REF_KINDS, type TargetRefKind, targetRef } from '../../../src/resources/target-ref.js';
import { issuesToCauses, messageMap } from '../../../src/resources/validate.js';
import type { Expected } from './yaml-cases.js';

// Kuma 2.0.0 pkg/plugins/policies/matchers/validators/validator_test.go: each Entry is one case of
// the same name. The reference validates one `targetRef` against a list of supported kinds; so do
// we, with the schema every targetRef policy builds its refs from (`targetRef(kinds)`), its causes
// rooted at `targetRef` as the reference roots them. A refusal lists the reference's fields
// exactly, each with a word of our message (Kuma's message in a comment).

/** The causes of `yaml` as a targetRef of one of `kinds`; `[]` when valid. */
function causesOf(kinds: readonly string[], yaml: string) {
  const known = kinds.filter((k): k is TargetRefKind => (TARGET_REF_KINDS as readonly string[]).includes(k));
  const r = targetRef(known).safeParse(parse(yaml), { reportInput: true, error: messageMap });
  return r.success ? [] : issuesToCauses(r.error.issues, ['targetRef']);
}

function accepts(name: string, kinds: readonly string[], yaml: string): void {
  it(name, () => {
    expect(causesOf(kinds, yaml)).toEqual([]);
  });
}

function refuses(name: string, kinds: readonly string[], yaml: string, expected: readonly Expected[]): void {
  it(name, () => {
    const causes = causesOf(kinds, yaml);
    const fields = (list: readonly string[]): string[] => [...new Set(list)].sort();
    expect(fields(causes.map((c) => c.field)), JSON.stringify(causes)).toEqual(
      fields(expected.map((e) => e[0])),
    );
    for (const [field, word] of expected) {
      const messages = causes.filter((c) => c.field === field).map((c) => c.message);
      expect(messages, field).toContainEqual(expect.stringContaining(String(word)));
    }
  });
}

describe('Kuma 2.0.0 validator conformance: targetRef', () => {
  describe('should pass validation with', () => {
    accepts(
      'Mesh',
      ['Mesh'],
      `
kind: Mesh
`,
    );
    accepts(
      'MeshSubset with tags',
      ['MeshSubset'],
      `
kind: MeshSubset
tags:
  mesh.io/zone: us-east
`,
    );
    accepts(
      'MeshSubset without tags',
      ['MeshSubset'],
      `
kind: MeshSubset
`,
    );
    accepts(
      'MeshService',
      ['MeshService'],
      `
kind: MeshService
name: backend
`,
    );
    accepts(
      'MeshServiceSubset',
      ['MeshServiceSubset'],
      `
kind: MeshServiceSubset
name: backend
tags:
  version: v1
`,
    );
    accepts(
      'MeshServiceSubset without tags',
      ['MeshServiceSubset'],
      `
kind: MeshServiceSubset
name: backend
`,
    );
    accepts(
      'MeshServiceSubset with empty tags',
      ['MeshServiceSubset'],
      `
kind: MeshServiceSubset
name: backend
tags: {}
`,
    );
    accepts(
      'MeshGatewayRoute',
      ['MeshGatewayRoute'],
      `
kind: MeshGatewayRoute
name: backend-gateway-route
`,
    );
  });
  describe('should return as much individual errors as possible with', () => {
    refuses(
      'empty',
      ['Mesh'],
      `
{}
`,
      [
        // A missing kind is worded as a wrong one, as every missing enum is.
        ['targetRef.kind', 'must be "Mesh"'], // Kuma: must be set
      ],
    );
    refuses(
      "Mesh when it's not supported",
      ['MeshSubset'],
      `
kind: Mesh
`,
      [
        ['targetRef.kind', 'must be "MeshSubset"'], // Kuma: value is not supported
      ],
    );
    refuses(
      'Mesh with mesh and tags',
      ['Mesh'],
      `
kind: Mesh
mesh: mesh-1
tags:
  tag1: value1
`,
      [
        ['targetRef.mesh', 'cannot be set with kind Mesh'], // Kuma: cannot be set with kind Mesh
        ['targetRef.tags', 'cannot be set with kind Mesh'], // Kuma: cannot be set with kind Mesh
      ],
    );
    refuses(
      'Mesh with name',
      ['Mesh'],
      `
kind: Mesh
name: mesh-1
`,
      [
        ['targetRef.name', 'cannot be set with kind Mesh'], // Kuma: using name with kind Mesh is not yet supported
      ],
    );
    refuses(
      "MeshSubset when it's not supported",
      ['Mesh'],
      `
kind: MeshSubset
`,
      [
        ['targetRef.kind', 'must be "Mesh"'], // Kuma: value is not supported
      ],
    );
    refuses(
      'MeshSubset with name',
      ['MeshSubset'],
      `
kind: MeshSubset
name: mesh-1
`,
      [
        ['targetRef.name', 'cannot be set with kind MeshSubset'], // Kuma: cannot be set with kind MeshSubset
      ],
    );
    refuses(
      "MeshService when it's not supported",
      ['MeshServiceSubset'],
      `
kind: MeshService
`,
      [
        ['targetRef.kind', 'must be "MeshServiceSubset"'], // Kuma: value is not supported
      ],
    );
    refuses(
      'MeshService with mesh',
      ['MeshService'],
      `
kind: MeshService
name: backend
mesh: mesh-1
`,
      [
        ['targetRef.mesh', 'cannot be set with kind MeshService'], // Kuma: cannot be set with kind MeshService
      ],
    );
    refuses(
      'MeshService without name with tags',
      ['MeshService'],
      `
kind: MeshService
tags:
  tag1: value1
`,
      [
        ['targetRef.name', 'must be set with kind MeshService'], // Kuma: must be set with kind MeshService
        ['targetRef.tags', 'cannot be set with kind MeshService'], // Kuma: cannot be set with kind MeshService
      ],
    );
    refuses(
      "MeshServiceSubset when it's not supported",
      ['MeshService'],
      `
kind: MeshServiceSubset
`,
      [
        ['targetRef.kind', 'must be "MeshService"'], // Kuma: value is not supported
      ],
    );
    refuses(
      'MeshServiceSubset without name with empty tags',
      ['MeshServiceSubset'],
      `
kind: MeshServiceSubset
tags: {}
`,
      [
        ['targetRef.name', 'must be set with kind MeshServiceSubset'], // Kuma: must be set with kind MeshServiceSubset
      ],
    );
    refuses(
      'MeshServiceSubset with mesh',
      ['MeshServiceSubset'],
      `
kind: MeshServiceSubset
name: backend
mesh: mesh-1
tags:
  version: v1
`,
      [
        ['targetRef.mesh', 'cannot be set with kind MeshServiceSubset'], // Kuma: cannot be set with kind MeshServiceSubset
      ],
    );
    refuses(
      "MeshGatewayRoute when it's not supported",
      ['Mesh'],
      `
kind: MeshGatewayRoute
`,
      [
        ['targetRef.kind', 'must be "Mesh"'], // Kuma: value is not supported
      ],
    );
    refuses(
      'MeshGatewayRoute without name with mesh and tags',
      ['MeshGatewayRoute'],
      `
kind: MeshGatewayRoute
mesh: mesh-1
tags:
  tag1: value1
`,
      [
        ['targetRef.name', 'must be set with kind MeshGatewayRoute'], // Kuma: must be set with kind MeshGatewayRoute
        ['targetRef.mesh', 'cannot be set with kind MeshGatewayRoute'], // Kuma: cannot be set with kind MeshGatewayRoute
      ],
    );
    refuses(
      "MeshHTTPRoute when it's not supported",
      ['MeshGatewayRoute'],
      `
kind: MeshHTTPRoute
`,
      [
        ['targetRef.kind', 'must be "MeshGatewayRoute"'], // Kuma: value is not supported
      ],
    );
  });
});
