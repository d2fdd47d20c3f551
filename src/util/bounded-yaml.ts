import { createRequire } from 'node:module';
import type * as Yaml from 'yaml';
import type { StructureBounds } from './structure-bounds.js';
import { STRUCTURE_BOUNDS, StructureLimitError } from './structure-bounds.js';

/** What {@link readYaml} found: the documents, composed, and where a position in the text is. */
export interface YamlDocuments {
  documents: Yaml.Document.Parsed[];
  /** Line and column (from 1) of an offset of the text. */
  position(offset: number): { line: number; column: number };
  /** The first line of what `error` says, as yaml words it: `<message> at line L, column C[:]`. */
  describe(error: Yaml.YAMLError): string;
}

/** Options of {@link readYaml} and {@link readYamlSliced}. */
export interface ReadYamlOptions {
  bounds?: StructureBounds;
  /** Stop composing after this many documents (the rest is still lexed, within the bounds). */
  maxDocuments?: number;
}

const COLLECTIONS = new Set(['block-map', 'block-seq', 'flow-collection']);

/** Marks the points where {@link readYamlSliced} may hand the event loop to others. */
const PAUSE = Symbol('pause');
/** Lexemes between two pauses. */
const LEXEMES_PER_PAUSE = 256;

// yaml loads on first use, not when this module does (start-up time of the server and of meshctl).
const yamlModule = (): typeof Yaml => createRequire(import.meta.url)('yaml') as typeof Yaml;

/**
 * Lexes and parses `text` into yaml's CST with bounds on depth, nodes and tokens, before any node is
 * composed: yaml's Lexer and Parser are iterative, its Composer and `toJS` recurse once per level.
 * Depth is the Parser's stack of open collections, nodes are scalars, aliases and collections as
 * they open, tokens are lexemes. Yields {@link PAUSE} every {@link LEXEMES_PER_PAUSE} lexemes and
 * returns the CST's top-level tokens.
 */
function* boundedCst(
  yaml: typeof Yaml,
  text: string,
  bounds: StructureBounds,
  onNewLine: (offset: number) => void,
): Generator<typeof PAUSE, Yaml.CST.Token[], void> {
  const lexer = new yaml.Lexer();
  const parser = new yaml.Parser(onNewLine);
  // What Parser.parse does first: the first line starts at 0.
  onNewLine(0);
  const tokens: Yaml.CST.Token[] = [];
  const seen = new WeakSet<object>();
  let lexemes = 0;
  let nodes = 0;
  let afterScalarMark = false;
  let top: Yaml.CST.Token | undefined;
  for (const lexeme of lexer.lex(text)) {
    const at = parser.offset;
    if (++lexemes > bounds.maxTokens) throw new StructureLimitError('tokens', bounds.maxTokens, at);
    if (afterScalarMark) afterScalarMark = false;
    else {
      const c = lexeme.charCodeAt(0);
      // \x1f marks a plain or block scalar (its text is the next lexeme); quotes, aliases, `[`, `{`;
      // and the indicators `-`, `?` and `:`, each of which may stand for an empty value that no
      // other lexeme marks (`-` alone on a line is a null item). A pair thus counts up to three.
      if (c === 0x1f) {
        afterScalarMark = true;
        nodes++;
      } else if (c === 0x22 || c === 0x27 || c === 0x2a) nodes++;
      else if (lexeme.length === 1 && (c === 0x5b || c === 0x7b || c === 0x2d || c === 0x3f || c === 0x3a))
        nodes++;
    }
    for (const token of parser.next(lexeme)) {
      tokens.push(token);
      // A document is complete: the bounds hold per document (a file of several is read as several bodies).
      if (token.type === 'document') {
        nodes = 0;
        lexemes = 0;
      }
    }
    const { stack } = parser;
    const now = stack[stack.length - 1];
    if (now !== top) {
      top = now;
      // A block collection opens as the top of the stack (`- ` or `key:`); count it once.
      if (now !== undefined && (now.type === 'block-map' || now.type === 'block-seq') && !seen.has(now)) {
        seen.add(now);
        nodes++;
      }
    }
    if (nodes > bounds.maxNodes) throw new StructureLimitError('nodes', bounds.maxNodes, at);
    // The stack also holds the document and a scalar or two: count its collections only near the bound.
    if (stack.length > bounds.maxDepth + 1) {
      let depth = 0;
      for (const open of stack) if (COLLECTIONS.has(open.type)) depth++;
      if (depth > bounds.maxDepth) throw new StructureLimitError('depth', bounds.maxDepth, at);
    }
    if (lexemes % LEXEMES_PER_PAUSE === 0) yield PAUSE;
  }
  for (const token of parser.end()) tokens.push(token);
  return tokens;
}

/** Composes the CST `tokens` of `text` (after {@link boundedCst}) into documents. */
function compose(
  yaml: typeof Yaml,
  text: string,
  tokens: Yaml.CST.Token[],
  lines: Yaml.LineCounter,
  maxDocuments: number,
): YamlDocuments {
  // yaml's own duplicate-key check compares each key with every earlier one (a mapping of 40,000
  // keys took 13 s); checkUniqueKeys below does the same with a set.
  const composer = new yaml.Composer({ uniqueKeys: false, logLevel: 'error' });
  const documents: Yaml.Document.Parsed[] = [];
  for (const document of composer.compose(tokens, true, text.length)) {
    checkUniqueKeys(yaml, document);
    documents.push(document);
    if (documents.length >= maxDocuments) break;
  }
  const position = (offset: number) => {
    const { line, col } = lines.linePos(offset);
    return { line, column: col };
  };
  return { documents, position, describe: (error) => describe(text, lines, error) };
}

/**
 * Adds yaml's DUPLICATE_KEY error for every key of a mapping equal to an earlier one, as yaml's
 * default check does (scalars by value, other keys never equal), in one pass per mapping.
 */
function checkUniqueKeys(yaml: typeof Yaml, document: Yaml.Document.Parsed): void {
  const stack: unknown[] = [document.contents];
  while (stack.length > 0) {
    const node = stack.pop();
    if (yaml.isMap(node)) {
      const keys = new Set<unknown>();
      for (const pair of node.items) {
        const { key } = pair;
        if (yaml.isScalar(key)) {
          if (keys.has(key.value)) {
            const range = key.range ?? [0, 0];
            document.errors.push(
              new yaml.YAMLParseError([range[0], range[1]], 'DUPLICATE_KEY', 'Map keys must be unique'),
            );
          }
          keys.add(key.value);
        } else stack.push(key);
        stack.push(pair.value);
      }
    } else if (yaml.isSeq(node)) {
      for (const item of node.items) stack.push(item);
    } else if (yaml.isPair(node)) {
      // A pair held in a sequence (a `!!pairs` or `!!omap` item).
      stack.push(node.key, node.value);
    }
  }
}

/** The first line of yaml's pretty error message (errors.js `prettifyError`). */
function describe(text: string, lines: Yaml.LineCounter, error: Yaml.YAMLError): string {
  if (error.pos[0] === -1) return error.message;
  const { line, col } = lines.linePos(error.pos[0]);
  const starts = lines.lineStarts;
  let context = text.substring(starts[line - 1], starts[line]).replace(/[\n\r]+$/, '');
  if (line > 1 && /^ *$/.test(context.substring(0, col - 1))) {
    context = text.substring(starts[line - 2], starts[line - 1]) + context;
  }
  return `${error.message} at line ${line}, column ${col}${/[^ ]/.test(context) ? ':' : ''}`;
}

/**
 * Reads YAML `text` as yaml's `parseAllDocuments` would, but throws a StructureLimitError when it
 * passes `bounds` before anything is composed, and checks duplicate keys in linear time. Errors
 * are left in each document's `errors`, as yaml does.
 */
export function readYaml(text: string, options: ReadYamlOptions = {}): YamlDocuments {
  const yaml = yamlModule();
  const lines = new yaml.LineCounter();
  const steps = boundedCst(yaml, text, options.bounds ?? STRUCTURE_BOUNDS, lines.addNewLine);
  let step = steps.next();
  while (!step.done) step = steps.next();
  return compose(yaml, text, step.value, lines, options.maxDocuments ?? Infinity);
}

/** Time one slice of {@link readYamlSliced} may hold the event loop before it yields (ms). */
const SLICE_MS = 4;

/**
 * {@link readYaml} for a server: the lexing and bound checks (the bulk of the work of a hostile
 * body) run in slices of a few ms, the event loop served between them; composing a body within
 * the bounds is one step.
 */
export async function readYamlSliced(text: string, options: ReadYamlOptions = {}): Promise<YamlDocuments> {
  const yaml = yamlModule();
  const lines = new yaml.LineCounter();
  const steps = boundedCst(yaml, text, options.bounds ?? STRUCTURE_BOUNDS, lines.addNewLine);
  let sliceStart = performance.now();
  let step = steps.next();
  while (!step.done) {
    if (performance.now() - sliceStart >= SLICE_MS) {
      await new Promise((resolve) => setImmediate(resolve));
      sliceStart = performance.now();
    }
    step = steps.next();
  }
  return compose(yaml, text, step.value, lines, options.maxDocuments ?? Infinity);
}
