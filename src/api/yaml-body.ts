import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import { AppError } from '../util/errors.js';

/**
 * How often a YAML body may use one anchor through aliases (yaml's `maxAliasCount`: each use of an
 * anchor counts, times the aliases nested in what it anchors). It bounds the work of resolving
 * aliases; the bytes they expand to are bounded by {@link jsonExceeds} (issue 15).
 */
export const MAX_ALIAS_COUNT = 100;

/**
 * Whether the JSON of `value` surely has more than `limit` bytes. It counts a lower bound (a
 * string's UTF-16 length, one byte per number) and stops as soon as the count passes `limit`, so
 * its work is bounded by `limit`, not by what aliases expand to; a cycle (`&a [*a]`) passes it too.
 */
export function jsonExceeds(value: unknown, limit: number): boolean {
  let size = 0;
  // An explicit stack: a cycle or deep nesting must not overflow the call stack. Every child
  // pushed was first counted (a comma or a bracket), so the stack never outgrows `limit`.
  const stack: unknown[] = [value];
  while (stack.length > 0) {
    const v = stack.pop();
    if (typeof v === 'string') size += v.length + 2;
    else if (typeof v === 'boolean' || v === null) size += 4;
    else if (typeof v !== 'object') size += 1;
    else if (Array.isArray(v)) {
      size += 1 + Math.max(1, v.length);
      for (let i = 0; i < v.length && size <= limit; i++) stack.push(v[i]);
    } else {
      const keys = Object.keys(v);
      size += 1 + Math.max(1, keys.length);
      for (let i = 0; i < keys.length && size <= limit; i++) {
        size += keys[i].length + 3;
        stack.push((v as Record<string, unknown>)[keys[i]]);
      }
    }
    if (size > limit) return true;
  }
  return false;
}

/**
 * Parses a YAML request body (decisions §3). Aliases are limited ({@link MAX_ALIAS_COUNT}, else 400)
 * and a body whose JSON would exceed `bodyLimit` is 413, whatever it expands by: a ~1 MB body with
 * one scalar aliased 98 times would otherwise become a 100 MB resource.
 */
export function parseYamlBody(text: string, bodyLimit: number): unknown {
  // yaml loads on the first YAML body, not at start-up.
  const { parse } = createRequire(import.meta.url)('yaml') as typeof Yaml;
  let value: unknown;
  try {
    // logLevel 'error': yaml's warnings (an unknown directive) would go to the process's stderr
    // through process.emitWarning, with text of the caller's choosing.
    value = parse(text, { maxAliasCount: MAX_ALIAS_COUNT, logLevel: 'error' });
  } catch (err) {
    const message = (err as Error).message.split('\n')[0];
    throw new AppError(
      'INVALID_BODY',
      'Invalid request body',
      /Excessive alias count/.test(message)
        ? `invalid YAML: an anchor is used through aliases more than ${MAX_ALIAS_COUNT} times (aliases nested in it multiply the count)`
        : /multiple documents/.test(message)
          ? `the body holds several YAML documents ("---" ${(/ at line \d+, column \d+/.exec(message)?.[0] ?? '').trim()}): ` +
            'the API takes one resource per request; send each document in its own PUT'
          : `invalid YAML: ${message}`,
    );
  }
  if (jsonExceeds(value, bodyLimit)) {
    throw new AppError(
      'PAYLOAD_TOO_LARGE',
      'Payload too large',
      `the YAML body expands to more than ${bodyLimit} bytes of JSON, the limit of a body (apiServer.bodyLimit)`,
    );
  }
  return value;
}
