import { readYamlSliced } from '../util/bounded-yaml.js';
import { AppError } from '../util/errors.js';
import { STRUCTURE_BOUNDS, StructureLimitError } from '../util/structure-bounds.js';
import { structureRefusal } from './json-body.js';

/**
 * How often a YAML body may use one anchor through aliases (yaml's `maxAliasCount`: each use of an
 * anchor counts, times the aliases nested in what it anchors). It bounds the work of resolving
 * aliases; the bytes they expand to are bounded by {@link yamlValueProblem}.
 */
export const MAX_ALIAS_COUNT = 100;

/** What {@link yamlValueProblem} found in a value that YAML built. */
export type YamlValueProblem = 'size' | 'depth' | 'prototype';

const hasOwn = (o: object, key: string): boolean => Object.prototype.hasOwnProperty.call(o, key);

/**
 * What is wrong with `value`, built from YAML, before anything else reads it: its JSON surely has
 * more than `limit` bytes ('size'), it nests deeper than `maxDepth` through aliases ('depth'; the
 * text itself was bounded before it was composed), or an object has a `__proto__` key or a
 * `constructor` object with a `prototype` key, which JSON bodies may not have either ('prototype').
 * It counts a lower bound of the JSON size (a string's UTF-16 length, one byte per number) and stops
 * as soon as the count passes `limit`, so its work is bounded by `limit`, not by what aliases
 * expand to; a cycle (`&a [*a]`) passes it too.
 */
export function yamlValueProblem(
  value: unknown,
  limit: number,
  maxDepth: number,
): YamlValueProblem | undefined {
  let size = 0;
  let deep = false;
  let prototype = false;
  // An explicit stack: a cycle or deep nesting must not overflow the call stack. Every child
  // pushed was first counted (a comma or a bracket), so the stack never outgrows `limit`. The walk
  // goes on past the other problems, so that a cycle is 'size' (413) as before, not 'depth'.
  const stack: Array<{ v: unknown; depth: number }> = [{ v: value, depth: 0 }];
  while (stack.length > 0) {
    const { v, depth } = stack.pop() as { v: unknown; depth: number };
    if (typeof v === 'string') size += v.length + 2;
    else if (typeof v === 'boolean' || v === null) size += 4;
    else if (typeof v !== 'object') size += 1;
    else {
      if (depth >= maxDepth) deep = true;
      if (Array.isArray(v)) {
        size += 1 + Math.max(1, v.length);
        for (let i = 0; i < v.length && size <= limit; i++) stack.push({ v: v[i], depth: depth + 1 });
      } else {
        const record = v as Record<string, unknown>;
        if (hasOwn(record, '__proto__') || constructorPrototype(record)) prototype = true;
        const keys = Object.keys(record);
        size += 1 + Math.max(1, keys.length);
        for (let i = 0; i < keys.length && size <= limit; i++) {
          size += keys[i].length + 3;
          stack.push({ v: record[keys[i]], depth: depth + 1 });
        }
      }
    }
    if (size > limit) return 'size';
  }
  return deep ? 'depth' : prototype ? 'prototype' : undefined;
}

/** An own `constructor` that is an object with an own `prototype` (what secure-json-parse refuses). */
function constructorPrototype(record: Record<string, unknown>): boolean {
  if (!hasOwn(record, 'constructor')) return false;
  const ctor = record.constructor;
  return typeof ctor === 'object' && ctor !== null && hasOwn(ctor, 'prototype');
}

const invalid = (details: string) => new AppError('INVALID_BODY', 'Invalid request body', details);

/**
 * The documents of a YAML body sent where several are taken (a change set): each document's value,
 * in order, empty documents left out.
 */
export class YamlDocumentStream {
  constructor(readonly documents: readonly unknown[]) {}
}

/**
 * Parses a YAML request body (decisions §3). The text is bounded before anything is built
 * (STRUCTURE_BOUNDS: depth, nodes, tokens; else 400 naming the bound), and read in slices that
 * leave the event loop to others. Aliases are limited ({@link MAX_ALIAS_COUNT}, else 400) and a
 * body whose JSON would exceed `bodyLimit` is 413, whatever it expands by: a ~1 MB body with one
 * scalar aliased 98 times would otherwise become a 100 MB resource. `__proto__` keys are 400, as
 * in JSON bodies. One document, unless `maxDocuments` takes more: then the answer is a
 * {@link YamlDocumentStream} (more than `maxDocuments` is 400).
 */
export async function parseYamlBody(text: string, bodyLimit: number, maxDocuments = 1): Promise<unknown> {
  let read;
  try {
    read = await readYamlSliced(text, { maxDocuments: maxDocuments + 1 });
  } catch (err) {
    if (err instanceof StructureLimitError) throw structureRefusal('YAML', text, err);
    // Whatever else yaml throws is about the text (as the parse before these bounds answered).
    throw invalid(`invalid YAML: ${(err as Error).message.split('\n')[0]}`);
  }
  const documents = read.documents;
  for (const document of documents.slice(0, maxDocuments)) {
    const error = document.errors[0];
    if (error !== undefined) throw invalid(`invalid YAML: ${read.describe(error)}`);
  }
  if (documents.length > maxDocuments) {
    const { line, column } = read.position(documents[maxDocuments].range[0]);
    throw invalid(
      maxDocuments === 1
        ? `the body holds several YAML documents ("---" at line ${line}, column ${column}): ` +
            'the API takes one resource per request; send each document in its own PUT, or all of them ' +
            'as one change set (POST /_changes)'
        : `the body holds more than ${maxDocuments} YAML documents (line ${line}, column ${column}): ` +
            `a change set takes at most ${maxDocuments} items`,
    );
  }
  const values: unknown[] = [];
  // The size bound is the body's: what is left of it after the documents before.
  let left = bodyLimit;
  for (const document of documents) {
    let value: unknown;
    try {
      value = document.toJS({ maxAliasCount: MAX_ALIAS_COUNT });
    } catch (err) {
      const message = (err as Error).message.split('\n')[0];
      throw invalid(
        /Excessive alias count/.test(message)
          ? `invalid YAML: an anchor is used through aliases more than ${MAX_ALIAS_COUNT} times (aliases nested in it multiply the count)`
          : `invalid YAML: ${message}`,
      );
    }
    const problem = yamlValueProblem(value, left, STRUCTURE_BOUNDS.maxDepth);
    if (problem === 'size') {
      throw new AppError(
        'PAYLOAD_TOO_LARGE',
        'Payload too large',
        `the YAML body expands to more than ${bodyLimit} bytes of JSON, the limit of a body (apiServer.bodyLimit)`,
      );
    }
    if (problem === 'depth') {
      throw invalid(
        `the YAML body is too deep: through aliases it nests more than ${STRUCTURE_BOUNDS.maxDepth} levels of arrays and objects`,
      );
    }
    if (problem === 'prototype') throw invalid('invalid YAML: Object contains forbidden prototype property');
    if (maxDocuments > 1) left -= Math.min(left, Buffer.byteLength(JSON.stringify(value) ?? ''));
    values.push(value);
  }
  if (maxDocuments === 1) return values[0];
  return new YamlDocumentStream(values.filter((v) => v !== null && v !== undefined));
}
