import { FILE_HEADERS_ONLY, formatPatch, structuredPatch } from 'diff';
import { stringify } from './yaml-codec.js';

/** One side of a diff: a label (`name@42`) and the resource, or undefined when it did not exist. */
export interface DiffSide {
  label: string;
  resource: unknown;
}

const yamlOf = (resource: unknown): string => (resource === undefined ? '' : stringify(resource));

/**
 * The unified diff (`---`/`+++` headers, `@@` hunks, 3 lines of context) of two resources' YAML;
 * an empty string when they are the same. A side that did not exist is an empty file.
 */
export function resourceDiff(from: DiffSide, to: DiffSide): string {
  const patch = structuredPatch(from.label, to.label, yamlOf(from.resource), yamlOf(to.resource), '', '', {
    context: 3,
  });
  return patch.hunks.length === 0 ? '' : formatPatch(patch, FILE_HEADERS_ONLY);
}
