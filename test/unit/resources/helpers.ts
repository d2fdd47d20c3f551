import { expect } from 'vitest';
import type { ResourceDescriptor } from '../../../src/resources/descriptor.js';
import { validateBody, type Cause } from '../../../src/resources/validate.js';

export const MESH = 'default';
export const NAME = 'res-1';

/** A full PUT body: `type`, `name` (and `mesh` for mesh-scoped kinds) plus the spec fields. */
export function body(desc: ResourceDescriptor, spec: Record<string, unknown>): Record<string, unknown> {
  return { type: desc.wireType, name: NAME, ...(desc.scope === 'mesh' ? { mesh: MESH } : {}), ...spec };
}

/** The causes of validating `spec` as a body of `desc`; `[]` when it is valid. */
export function causesOf(desc: ResourceDescriptor, spec: Record<string, unknown>): Cause[] {
  const r = validateBody(desc, body(desc, spec), {
    mesh: desc.scope === 'mesh' ? MESH : undefined,
    name: NAME,
  });
  return r.ok ? [] : r.causes;
}

/** Asserts the spec is valid and returns the validated spec. */
export function expectValid(
  desc: ResourceDescriptor,
  spec: Record<string, unknown>,
): Record<string, unknown> {
  const r = validateBody(desc, body(desc, spec), {
    mesh: desc.scope === 'mesh' ? MESH : undefined,
    name: NAME,
  });
  if (!r.ok) expect.fail(`expected valid ${desc.kind}, got ${JSON.stringify(r.causes)}`);
  return r.spec;
}

/**
 * Asserts the exact causes: each expected entry is a field path, or `[field, message]` when the
 * message matters too. Every violation must be listed and nothing else (order aside: zod reports
 * unknown keys after the known ones).
 */
export function expectCauses(
  desc: ResourceDescriptor,
  spec: Record<string, unknown>,
  expected: ReadonlyArray<string | readonly [string, string]>,
): void {
  const got = causesOf(desc, spec);
  const fields = expected.map((e) => (typeof e === 'string' ? e : e[0]));
  expect(got.map((c) => c.field).sort()).toEqual([...fields].sort());
  for (const e of expected) {
    if (typeof e === 'string') continue;
    const messages = got.filter((c) => c.field === e[0]).map((c) => c.message);
    expect(messages, `message of ${e[0]}`).toContain(e[1]);
  }
}

/** `[{match: {"mesh.io/service": "*"}}]`, the selector every default policy uses. */
export const ALL = [{ match: { 'mesh.io/service': '*' } }];
/** `sources` and `destinations` both matching everything. */
export const ANY_TO_ANY = { sources: ALL, destinations: ALL };
