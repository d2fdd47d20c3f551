import { expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ResourceDescriptor } from '../../../src/resources/descriptor.js';
import { causesOf } from '../../unit/resources/helpers.js';

/** A cause a case expects: the field path, and a word or two its message must hold (any case). */
export type ExpectedCause = readonly [field: string, words: string];

/** One reference table entry: its name, the resource as YAML, and the causes (none: accepted). */
export interface KumaCase {
  name: string;
  yaml: string;
  causes?: readonly ExpectedCause[];
}

const META = ['type', 'name', 'mesh'];

/**
 * The spec fields of a reference entry's YAML: `type`, `name` and `mesh` dropped (the test body
 * supplies its own, as a PUT to the entry's URL would).
 */
export function specOf(yaml: string): Record<string, unknown> {
  const doc: unknown = parse(yaml);
  const spec: Record<string, unknown> = {};
  if (typeof doc === 'object' && doc !== null && !Array.isArray(doc)) {
    for (const [k, v] of Object.entries(doc)) if (!META.includes(k)) spec[k] = v;
  }
  return spec;
}

/**
 * Checks one entry: accepted when it expects no causes; else the set of cause fields is exactly the
 * expected set, and each expected cause's field has a message holding its words.
 */
export function checkCase(desc: ResourceDescriptor, c: KumaCase): void {
  const got = causesOf(desc, specOf(c.yaml));
  const expected = c.causes ?? [];
  expect(new Set(got.map((g) => g.field)), JSON.stringify(got)).toEqual(new Set(expected.map((e) => e[0])));
  for (const [field, words] of expected) {
    const messages = got.filter((g) => g.field === field).map((g) => g.message.toLowerCase());
    expect(
      messages.some((m) => m.includes(words.toLowerCase())),
      `a message of ${field} holds "${words}": ${JSON.stringify(messages)}`,
    ).toBe(true);
  }
}

/** One test per entry, named as the reference names it. */
export function kumaCases(desc: ResourceDescriptor, cases: readonly KumaCase[]): void {
  for (const c of cases) it(c.name, () => checkCase(desc, c));
}
