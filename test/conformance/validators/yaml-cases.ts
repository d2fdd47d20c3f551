import { expect, it } from 'vitest';
import { parse } from 'yaml';
import type { ResourceDescriptor } from '../../../src/resources/descriptor.js';
import { causesOf, expectValid } from '../../unit/resources/helpers.js';

/** One expected cause: our field path and a distinctive word (or pattern) of our message there. */
export type Expected = readonly [field: string, word: string | RegExp];

/** The fields the URL and the helpers set: a reference YAML's own are dropped. */
const META = new Set(['type', 'name', 'mesh']);

/**
 * The spec fields of a reference YAML. Old-style kinds keep their fields at the top; the
 * `targetRef` kinds' reference YAML is the content of `spec`, so it is wrapped (`underSpec`).
 */
function specOf(yaml: string, underSpec: boolean): Record<string, unknown> {
  const parsed: unknown = parse(yaml);
  const fields = typeof parsed === 'object' && parsed !== null ? (parsed as Record<string, unknown>) : {};
  if (underSpec) return { spec: fields };
  return Object.fromEntries(Object.entries(fields).filter(([k]) => !META.has(k)));
}

/** The two kinds of case of one kind's table: accepted YAML, and refused YAML with its causes. */
export function casesOf(desc: ResourceDescriptor, opts: { underSpec: boolean }) {
  return {
    /** The reference accepts this YAML: so do we. */
    accepts(name: string, yaml: string): void {
      it(name, () => {
        expectValid(desc, specOf(yaml, opts.underSpec));
      });
    },
    /**
     * The reference refuses this YAML: the set of fields with a cause is exactly `expected`'s, and
     * at each expected field one of our messages has its word.
     */
    refuses(name: string, yaml: string, expected: readonly Expected[]): void {
      it(name, () => {
        const causes = causesOf(desc, specOf(yaml, opts.underSpec));
        const fields = (list: readonly string[]): string[] => [...new Set(list)].sort();
        expect(fields(causes.map((c) => c.field)), JSON.stringify(causes)).toEqual(
          fields(expected.map((e) => e[0])),
        );
        for (const [field, word] of expected) {
          const messages = causes.filter((c) => c.field === field).map((c) => c.message);
          expect(messages, field).toContainEqual(
            typeof word === 'string' ? expect.stringContaining(word) : expect.stringMatching(word),
          );
        }
      });
    },
  };
}
