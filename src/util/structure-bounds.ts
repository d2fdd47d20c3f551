/**
 * How deep and how large a JSON or YAML text may be, measured on the text before any value is built:
 * the parsers that build values (YAML's composer, and the code that walks the values afterwards:
 * validation, canonical JSON, deep-equal, hashing) recurse once per level, and a 1 MB body of `[`
 * is a million levels (half a million balanced ones).
 */
export interface StructureBounds {
  /** Arrays and objects (sequences and mappings) nested in one another; the outermost counts as 1. */
  maxDepth: number;
  /** Keys, scalars (aliases included), arrays and objects in all, each one; YAML adds its `-`, `?` and `:` (empty values). */
  maxNodes: number;
  /**
   * YAML only: lexical tokens (scalars, indicators, spaces, line breaks, comments). Reading YAML costs
   * about a microsecond per token, so this bounds the work of a body made of little but line breaks.
   */
  maxTokens: number;
}

/**
 * The bounds of request bodies (and of the YAML files the control plane reads). The deepest kind
 * (MeshAccessLog) nests 11 levels, body included; a Dataplane with 2,000 outbounds has ~14,000
 * nodes and ~46,000 YAML tokens; every PUT body within the 20,000 values of the resource check
 * (BODY_BOUNDS) has fewer than 50,000 nodes.
 */
export const STRUCTURE_BOUNDS: StructureBounds = { maxDepth: 64, maxNodes: 50_000, maxTokens: 250_000 };

/** Which bound a text passes. */
export type StructureLimit = 'depth' | 'nodes' | 'tokens';

/** A text that passes one of its {@link StructureBounds}, found at `offset` (a UTF-16 index). */
export class StructureLimitError extends Error {
  readonly limit: StructureLimit;
  readonly max: number;
  readonly offset: number;

  constructor(limit: StructureLimit, max: number, offset: number) {
    super(structureLimitMessage(limit, max));
    this.name = 'StructureLimitError';
    this.limit = limit;
    this.max = max;
    this.offset = offset;
  }
}

/** What a {@link StructureLimitError} says, without its position. */
export function structureLimitMessage(limit: StructureLimit, max: number): string {
  switch (limit) {
    case 'depth':
      return `it nests more than ${max} levels of arrays and objects`;
    case 'nodes':
      return `it has more than ${max} keys and values (each key, scalar, array and object counts one)`;
    case 'tokens':
      return `it has more than ${max} YAML tokens (scalars, indicators, spaces, line breaks and comments)`;
  }
}

/** Line and column (from 1) of a UTF-16 offset in `text`. */
export function lineColumn(text: string, offset: number): { line: number; column: number } {
  let line = 1;
  let start = 0;
  for (let i = text.indexOf('\n'); i !== -1 && i < offset; i = text.indexOf('\n', i + 1)) {
    line++;
    start = i + 1;
  }
  return { line, column: offset - start + 1 };
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/** Characters between values in JSON: white space, `,` and `:`. */
function isSeparator(c: number): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09 || c === 0x2c || c === 0x3a;
}

/**
 * Throws a {@link StructureLimitError} when the JSON `text` nests deeper or holds more nodes than
 * `bounds` allow; one pass over the characters (a few ms for 1 MB), no value built. Broken JSON is
 * left to the parser: this only counts brackets, strings and other literals outside strings.
 */
export function checkJsonStructure(text: string, bounds: StructureBounds = STRUCTURE_BOUNDS): void {
  let depth = 0;
  let nodes = 0;
  const n = text.length;
  for (let i = 0; i < n; i++) {
    const c = text.charCodeAt(i);
    if (isSeparator(c)) continue;
    const start = i;
    if (c === CLOSE_ARRAY || c === CLOSE_OBJECT) {
      depth--;
      continue;
    }
    if (c === OPEN_ARRAY || c === OPEN_OBJECT) {
      if (++depth > bounds.maxDepth) throw new StructureLimitError('depth', bounds.maxDepth, start);
    } else if (c === QUOTE) {
      for (i++; i < n; i++) {
        const d = text.charCodeAt(i);
        if (d === BACKSLASH) i++;
        else if (d === QUOTE) break;
      }
    } else {
      // A number, true, false, null (or something broken): up to the next separator or bracket.
      while (i + 1 < n) {
        const d = text.charCodeAt(i + 1);
        if (isSeparator(d) || d === QUOTE || d === OPEN_ARRAY || d === OPEN_OBJECT) break;
        if (d === CLOSE_ARRAY || d === CLOSE_OBJECT) break;
        i++;
      }
    }
    if (++nodes > bounds.maxNodes) throw new StructureLimitError('nodes', bounds.maxNodes, start);
  }
}
