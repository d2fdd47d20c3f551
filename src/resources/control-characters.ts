import type { ErrorCause } from '../util/errors.js';
import { NOT_IN_LINE, NOT_IN_TEXT, codePointOf } from '../util/printable.js';
import { formatPath } from './field-path.js';

/** No key set: every string is one line. */
export const NO_MULTI_LINE_KEYS: ReadonlySet<string> = new Set();

/** Whether any key or string under `root` holds a refused character (no allocation per value). */
function anyRefused(root: unknown, multiLine: ReadonlySet<string>): boolean {
  if (typeof root === 'string') return NOT_IN_LINE.test(root);
  // Explicit stacks of containers, not recursion: a 1 MiB body can nest half a million arrays.
  const values: unknown[] = [root];
  const text: boolean[] = [false];
  while (values.length > 0) {
    const v = values.pop();
    const ml = text.pop() as boolean;
    if (Array.isArray(v)) {
      const re = ml ? NOT_IN_TEXT : NOT_IN_LINE;
      for (let i = 0; i < v.length; i++) {
        const item: unknown = v[i];
        if (typeof item === 'string') {
          if (re.test(item)) return true;
        } else if (typeof item === 'object' && item !== null) {
          values.push(item);
          text.push(ml);
        }
      }
    } else if (typeof v === 'object' && v !== null) {
      for (const k in v) {
        if (NOT_IN_LINE.test(k)) return true;
        const item = (v as Record<string, unknown>)[k];
        if (typeof item === 'string') {
          if ((multiLine.has(k) ? NOT_IN_TEXT : NOT_IN_LINE).test(item)) return true;
        } else if (typeof item === 'object' && item !== null) {
          values.push(item);
          text.push(multiLine.has(k));
        }
      }
    }
  }
  return false;
}

const message = (s: string, re: RegExp): string =>
  `must not contain control characters or bidirectional formatting characters (found ${codePointOf(
    re.exec(s)?.[0] ?? '',
  )})`;

// No schema nests this deep: below it, a subtree with a bad character is one cause on its root.
const MAX_DEPTH = 32;

/**
 * Causes for control characters (C0 with NUL, DEL, C1), U+2028/U+2029 and bidi embeddings,
 * overrides and isolates in any key or string of a body: they would end up in proxy configuration
 * or in logs. Strings under a key of `multiLine` may also hold tab, LF and CR. At most
 * `limit` causes, in document order; a clean body costs one regex test per key and string.
 */
export function controlCharacterCauses(
  body: unknown,
  multiLine: ReadonlySet<string> = NO_MULTI_LINE_KEYS,
  limit = 100,
): ErrorCause[] {
  if (!anyRefused(body, multiLine)) return [];
  const causes: ErrorCause[] = [];
  type Item = { v: unknown; path: PropertyKey[]; text: boolean; key?: boolean };
  const stack: Item[] = [{ v: body, path: [], text: false }];
  while (stack.length > 0 && causes.length < limit) {
    const { v, path, text, key } = stack.pop() as Item;
    if (path.length >= MAX_DEPTH) {
      if (anyRefused(v, multiLine))
        causes.push({
          field: formatPath(path),
          message: 'must not contain control characters or bidirectional formatting characters',
        });
    } else if (typeof v === 'string') {
      const re = text ? NOT_IN_TEXT : NOT_IN_LINE;
      if (key || re.test(v)) causes.push({ field: formatPath(path), message: message(v, re) });
    } else if (Array.isArray(v)) {
      for (let i = v.length - 1; i >= 0; i--) stack.push({ v: v[i], path: [...path, i], text });
    } else if (typeof v === 'object' && v !== null) {
      const keys = Object.keys(v);
      for (let i = keys.length - 1; i >= 0; i--) {
        const k = keys[i];
        // A bad key is reported on its own path, and what it holds is not looked at.
        if (NOT_IN_LINE.test(k)) stack.push({ v: k, path: [...path, k], text: false, key: true });
        else stack.push({ v: (v as Record<string, unknown>)[k], path: [...path, k], text: multiLine.has(k) });
      }
    }
  }
  return causes;
}

/**
 * The character causes, then the `others` on fields they do not name: a NUL in a tag value is one
 * cause, not also one for the tag value's pattern.
 */
export function mergeCauses(characterCauses: ErrorCause[], others: ErrorCause[]): ErrorCause[] {
  if (characterCauses.length === 0) return others;
  const named = new Set(characterCauses.map((c) => c.field));
  return [...characterCauses, ...others.filter((c) => !named.has(c.field))];
}
