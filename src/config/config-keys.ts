import { z } from 'zod';
import { configSchema, type Config } from './schema.js';

/** How an environment variable's text becomes the value of its key. */
export type LeafKind = 'boolean' | 'integer' | 'string' | 'list' | 'map';

/** One leaf key of the config schema, as walked from its object shapes. */
export interface ConfigKey {
  path: string[];
  env: string;
  kind: LeafKind;
  /** One line of meaning, declared next to the key in schema.ts (`.describe()` or `inert()`). */
  meaning: string;
  /** Accepted and shown in `GET /config`, but not acted on. */
  inert: boolean;
}

/** A row of `mesh-cp config-keys` and docs/config.md. */
export interface ConfigKeyRow {
  path: string;
  env: string;
  default: unknown;
  meaning: string;
  inert: boolean;
}

const ENV_PREFIX = 'MESH_';

/** The env name of a config key: `MESH_` + the key path in upper snake case (decisions §1). */
export function envNameOf(path: string[]): string {
  const words = path.map((segment) => segment.replace(/([a-z0-9])([A-Z])/g, '$1_$2').toUpperCase());
  return ENV_PREFIX + words.join('_');
}

/** The schema under `.default()`, `.prefault()`, `.optional()` and `.transform()` (the input side). */
export function unwrap(schema: z.ZodType): z.ZodType {
  let current = schema;
  for (;;) {
    if (
      current instanceof z.ZodDefault ||
      current instanceof z.ZodPrefault ||
      current instanceof z.ZodOptional
    ) {
      current = current.unwrap() as z.ZodType;
    } else if (current instanceof z.ZodPipe) {
      current = current.in as z.ZodType;
    } else {
      return current;
    }
  }
}

function leafKind(schema: z.ZodType, path: string[]): LeafKind {
  if (schema instanceof z.ZodBoolean) return 'boolean';
  if (schema instanceof z.ZodNumber) return 'integer';
  if (schema instanceof z.ZodString || schema instanceof z.ZodEnum) return 'string';
  if (schema instanceof z.ZodArray) return 'list';
  if (schema instanceof z.ZodRecord) return 'map';
  throw new Error(`config key ${path.join('.')}: no env coercion for this schema type`);
}

/** Every leaf key of the schema, in schema order, found by walking its object shapes. */
function collectKeys(schema: z.ZodType, path: string[], into: ConfigKey[]): ConfigKey[] {
  const inner = unwrap(schema);
  if (inner instanceof z.ZodObject) {
    for (const [name, child] of Object.entries(inner.shape as Record<string, z.ZodType>)) {
      collectKeys(child, [...path, name], into);
    }
  } else {
    const meta = z.globalRegistry.get(schema);
    into.push({
      path,
      env: envNameOf(path),
      kind: leafKind(inner, path),
      meaning: meta?.description ?? '',
      inert: meta?.inert === true,
    });
  }
  return into;
}

/** Every leaf key of the config, in schema order. */
export const CONFIG_KEYS: readonly ConfigKey[] = collectKeys(configSchema, [], []);

/** Every config key with its env name, in schema order. */
export function listConfigKeys(): { path: string; env: string }[] {
  return CONFIG_KEYS.map((key) => ({ path: key.path.join('.'), env: key.env }));
}

/**
 * Every default (`configSchema.parse({})`), parsed without zod's compiled fast path: a process
 * parses it once or twice, and compiling the schema cost ~25 ms of every start.
 */
function configDefaults(): Config {
  return configSchema.parse({}, { jitless: true });
}

function valueAt(config: unknown, path: readonly string[]): unknown {
  return path.reduce<unknown>((value, segment) => (value as Record<string, unknown>)[segment], config);
}

/** Every config key with its env name, default, meaning and whether it is inert, in schema order. */
export function configKeyTable(): ConfigKeyRow[] {
  const defaults = configDefaults();
  return CONFIG_KEYS.map((key) => ({
    path: key.path.join('.'),
    env: key.env,
    default: valueAt(defaults, key.path),
    meaning: key.meaning,
    inert: key.inert,
  }));
}

/** The inert keys that `config` sets to a value other than their default (each is warned of at start). */
export function inertKeysSet(config: Config): { key: string; env: string }[] {
  const defaults = configDefaults();
  return CONFIG_KEYS.filter(
    (key) =>
      key.inert && JSON.stringify(valueAt(config, key.path)) !== JSON.stringify(valueAt(defaults, key.path)),
  ).map((key) => ({ key: key.path.join('.'), env: key.env }));
}
