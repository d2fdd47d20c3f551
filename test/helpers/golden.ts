import { existsSync, mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { hostname } from 'node:os';

const GOLDEN_DIR = join(dirname(fileURLToPath(import.meta.url)), '..', 'golden');

/** True when golden files should be rewritten (`UPDATE_GOLDEN=1 npx vitest run ...`). */
export const UPDATE_GOLDEN = process.env.UPDATE_GOLDEN === '1';

const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/g;

/** Replaces what differs between runs (UUIDs, generated keys, host name) with stable markers. */
export function normalize(value: unknown): unknown {
  if (typeof value === 'string') {
    if (value.length > 200 && /^[A-Za-z0-9+/=]+$/.test(value)) return '<generated key>';
    if (value === hostname()) return '<hostname>';
    return value.replace(UUID, '<uuid>');
  }
  if (Array.isArray(value)) return value.map(normalize);
  if (value && typeof value === 'object') {
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, normalize(v)]));
  }
  return value;
}

/** Reads a golden file, or writes it when updating or when it does not exist yet. */
export function golden(name: string, actual: unknown): unknown {
  const file = join(GOLDEN_DIR, `${name}.json`);
  const text = `${JSON.stringify(actual, null, 2)}\n`;
  if (UPDATE_GOLDEN || !existsSync(file)) {
    if (!UPDATE_GOLDEN && process.env.CI) throw new Error(`golden file ${name}.json is missing`);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, text);
    return actual;
  }
  return JSON.parse(readFileSync(file, 'utf8'));
}

/** Every PUT of the golden files answered 200 or 201 (dry runs too), in file order. */
export function goldenPuts(): Array<{ url: string; body: Record<string, unknown> }> {
  const out: Array<{ url: string; body: Record<string, unknown> }> = [];
  for (const file of readdirSync(GOLDEN_DIR)) {
    const g = JSON.parse(readFileSync(join(GOLDEN_DIR, file), 'utf8')) as {
      request?: { method: string; url: string; body?: Record<string, unknown> };
      status?: number;
    };
    if (g.request?.method !== 'PUT' || (g.status !== 201 && g.status !== 200) || !g.request.body) continue;
    out.push({ url: g.request.url, body: g.request.body });
  }
  return out;
}

/** A valid PUT body of every writable kind, by collection segment: the golden files' PUT requests. */
export function samplesBySegment(): Map<string, Record<string, unknown>> {
  const out = new Map<string, Record<string, unknown>>();
  for (const { url, body } of goldenPuts()) {
    const parts = url.split('?')[0].split('/');
    out.set(parts[parts.length - 2], body);
  }
  return out;
}
