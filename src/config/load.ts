import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { readYaml, type YamlDocuments } from '../util/bounded-yaml.js';
import { AppError, type ErrorCause } from '../util/errors.js';
import { closest } from '../util/closest.js';
import { lineColumn, StructureLimitError } from '../util/structure-bounds.js';
import { CONFIG_KEYS, type LeafKind, unwrap } from './config-keys.js';
import { configSchema, type Config } from './schema.js';

export { envNameOf, listConfigKeys } from './config-keys.js';

/** One thing wrong with the configuration: the key (or variable), where its value came from, and why. */
interface Problem {
  key: string;
  source: string;
  message: string;
}

const ENV_PREFIX = 'MESH_';

const KEYS_BY_ENV = new Map(CONFIG_KEYS.map((key) => [key.env, key]));
if (KEYS_BY_ENV.size !== CONFIG_KEYS.length) throw new Error('two config keys have the same env name');

/** The known keys of the section at `path`, or none when `path` is not a section. */
function sectionKeys(path: readonly PropertyKey[]): string[] {
  let current = unwrap(configSchema);
  for (const segment of path) {
    if (!(current instanceof z.ZodObject)) return [];
    const child = (current.shape as Record<string, z.ZodType | undefined>)[String(segment)];
    if (child === undefined) return [];
    current = unwrap(child);
  }
  return current instanceof z.ZodObject ? Object.keys(current.shape) : [];
}

/** `; did you mean X?` for a near candidate (see {@link closest}), else nothing. */
function suggestion(name: string, candidates: Iterable<string>, prefix = ''): string {
  const best = closest(name, candidates, prefix);
  return best === undefined ? '' : `; did you mean ${best}?`;
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function formatPath(path: readonly PropertyKey[]): string {
  return path
    .map((segment, index) =>
      typeof segment === 'number' ? `[${segment}]` : `${index === 0 ? '' : '.'}${String(segment)}`,
    )
    .join('');
}

function invalid(details: string, causes: ErrorCause[] = []): AppError {
  return new AppError('BAD_REQUEST', 'invalid configuration', details, causes);
}

/** The YAML file as a plain object (an empty file is `{}`); syntax errors name the file, line and column. */
function readConfigFile(file: string): Record<string, unknown> {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (error) {
    throw invalid(`cannot read the config file ${file}: ${(error as Error).message}`);
  }
  // yaml loads only when there is a config file (~90 ms of start-up otherwise); readYaml bounds
  // depth and size before anything is built (a file of 1,000 `[` overflowed the stack).
  let read: YamlDocuments;
  try {
    read = readYaml(text, { maxDocuments: 2 });
  } catch (error) {
    if (!(error instanceof StructureLimitError)) throw error;
    const { line, column } = lineColumn(text, error.offset);
    throw invalid(`${file}:${line}:${column}: YAML too large or too deep: ${error.message}`);
  }
  const [document, second] = read.documents;
  const lines = document.errors.map((error) => {
    if (error.pos[0] < 0) return `${file}: YAML syntax error: ${error.message}`;
    const { line, column } = read.position(error.pos[0]);
    return `${file}:${line}:${column}: YAML syntax error: ${error.message}`;
  });
  if (second !== undefined && lines.length === 0) {
    const { line, column } = read.position(second.range[0]);
    lines.push(`${file}:${line}:${column}: YAML syntax error: a config file is one YAML document`);
  }
  if (lines.length > 0) throw invalid(lines.join('\n'));
  const value: unknown = document.toJS();
  if (value === null || value === undefined) return {};
  if (!isPlainObject(value)) throw invalid(`${file}: the top level must be a mapping of config keys`);
  return value;
}

/** Records `source` for every path present in `value` (sections and leaves). */
function recordSources(value: unknown, path: string[], source: string, sources: Map<string, string>): void {
  if (path.length > 0) sources.set(path.join('.'), source);
  if (isPlainObject(value)) {
    for (const [name, child] of Object.entries(value)) recordSources(child, [...path, name], source, sources);
  }
}

type Coerced = { ok: true; value: unknown } | { ok: false; message: string };

/** The env text as a value of the key's type; integers that do not parse go on to the schema's message. */
function coerce(kind: LeafKind, text: string): Coerced {
  switch (kind) {
    case 'boolean': {
      const lower = text.trim().toLowerCase();
      if (lower === 'true' || lower === '1') return { ok: true, value: true };
      if (lower === 'false' || lower === '0') return { ok: true, value: false };
      return { ok: false, message: 'must be true, false, 1 or 0' };
    }
    case 'integer':
      return { ok: true, value: /^\s*[+-]?\d+\s*$/.test(text) ? Number(text) : text };
    case 'list': {
      const trimmed = text.trim();
      if (trimmed.startsWith('[')) {
        try {
          const parsed: unknown = JSON.parse(trimmed);
          if (Array.isArray(parsed) && parsed.every((item) => typeof item === 'string')) {
            return { ok: true, value: parsed };
          }
        } catch {
          // reported below
        }
        return { ok: false, message: 'must be a JSON array of strings or a comma-separated list' };
      }
      return {
        ok: true,
        value: trimmed === '' ? [] : trimmed.split(',').map((item) => item.trim()),
      };
    }
    case 'map': {
      try {
        const parsed: unknown = JSON.parse(text);
        if (isPlainObject(parsed)) return { ok: true, value: parsed };
      } catch {
        // reported below
      }
      return { ok: false, message: 'must be a JSON object' };
    }
    case 'string':
      return { ok: true, value: text };
  }
}

/** Sets `value` at `path`, creating missing sections; leaves a non-section in the way for the schema to report. */
function setAt(target: Record<string, unknown>, path: string[], value: unknown): void {
  let current = target;
  for (const segment of path.slice(0, -1)) {
    const next = current[segment];
    if (next === undefined) current[segment] = {};
    else if (!isPlainObject(next)) return;
    current = current[segment] as Record<string, unknown>;
  }
  current[path[path.length - 1]] = value;
}

/** Where the value at `path` came from: the nearest recorded source along the path. */
function sourceOf(path: readonly PropertyKey[], sources: Map<string, string>): string | undefined {
  for (let length = path.length; length > 0; length--) {
    const source = sources.get(path.slice(0, length).map(String).join('.'));
    if (source !== undefined) return source;
  }
  return undefined;
}

function describeSource(path: readonly PropertyKey[], sources: Map<string, string>): string {
  const source = sourceOf(path, sources);
  if (source !== undefined) return `from ${source}`;
  const key = CONFIG_KEYS.find((candidate) => candidate.path.join('.') === path.map(String).join('.'));
  return key === undefined ? 'not set' : `not set; env ${key.env}`;
}

/** Options of {@link loadConfig}. */
export interface LoadConfigOptions {
  /** A YAML config file (`--config FILE`). */
  file?: string;
  /** The environment to read `MESH_*` variables from; `process.env` when absent. */
  env?: NodeJS.ProcessEnv;
}

/** The effective config: defaults, then the YAML file, then `MESH_*` env vars; throws listing every problem. */
export function loadConfig({ file, env = process.env }: LoadConfigOptions = {}): Config {
  const sources = new Map<string, string>();
  const problems: Problem[] = [];
  const raw = file === undefined ? {} : readConfigFile(file);
  if (file !== undefined) recordSources(raw, [], file, sources);

  for (const [name, text] of Object.entries(env)) {
    if (!name.startsWith(ENV_PREFIX) || text === undefined) continue;
    const key = KEYS_BY_ENV.get(name);
    if (key === undefined) {
      const message = `unknown variable: no config key has this env name${suggestion(name, KEYS_BY_ENV.keys(), ENV_PREFIX)}`;
      problems.push({ key: name, source: 'from environment', message });
      continue;
    }
    const coerced = coerce(key.kind, text);
    if (!coerced.ok) {
      problems.push({ key: key.path.join('.'), source: `from ${name}`, message: coerced.message });
      continue;
    }
    setAt(raw, key.path, coerced.value);
    sources.set(key.path.join('.'), name);
  }

  // Parsed once per process: zod's compiled fast path (`new Function` per object schema) costs more
  // to build than it saves on one parse (~30 ms of a start).
  const result = configSchema.safeParse(raw, { jitless: true });
  if (result.success && problems.length === 0) return result.data;

  for (const issue of result.error?.issues ?? []) {
    if (issue.code === 'unrecognized_keys') {
      const known = sectionKeys(issue.path);
      for (const name of issue.keys) {
        const path = [...issue.path, name];
        problems.push({
          key: formatPath(path),
          source: describeSource(path, sources),
          message: `unknown key${suggestion(name, known)}`,
        });
      }
    } else {
      problems.push({
        key: formatPath(issue.path),
        source: describeSource(issue.path, sources),
        message: issue.message,
      });
    }
  }

  problems.sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
  const lines = problems.map((problem) => `${problem.key} (${problem.source}): ${problem.message}`);
  const count = problems.length === 1 ? '1 problem' : `${problems.length} problems`;
  throw invalid(
    `invalid configuration (${count}):\n${lines.map((line) => `  ${line}`).join('\n')}`,
    problems.map((problem) => ({ field: problem.key, message: `${problem.message} (${problem.source})` })),
  );
}
