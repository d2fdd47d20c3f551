import type { Config } from './schema.js';

/** What a non-empty secret is shown as in `GET /config` (decisions §1). */
export const MASK = '*****';

/**
 * The config keys whose values are secrets (decisions §1: database passwords, private keys, tokens).
 * `*File` keys (`tlsKeyFile`, `rootCaFile`) hold paths, not key material, and stay visible.
 */
export const SECRET_KEYS = ['store.postgres.password', 'multizone.zone.kds.token'] as const;

/** A deep copy of the config for `GET /config`, with every non-empty secret replaced by `*****`. */
export function maskConfig(config: Config): Record<string, unknown> {
  const copy = structuredClone(config) as unknown as Record<string, unknown>;
  for (const key of SECRET_KEYS) {
    const path = key.split('.');
    let section: unknown = copy;
    for (const segment of path.slice(0, -1)) {
      section =
        typeof section === 'object' && section !== null
          ? (section as Record<string, unknown>)[segment]
          : undefined;
    }
    if (typeof section !== 'object' || section === null) continue;
    const leaf = path[path.length - 1];
    const holder = section as Record<string, unknown>;
    if (typeof holder[leaf] === 'string' && holder[leaf] !== '') holder[leaf] = MASK;
  }
  return copy;
}
