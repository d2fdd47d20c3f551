import { verifyEntries } from './hash.js';
import type { LogEntry } from './types.js';

/** Where and why a stored or imported log stops being sound (`log verify`, `export`, `import`). */
export interface Damage {
  revision: number;
  reason: string;
  /** Line of the import file, for `import`. */
  line?: number;
}

/** Thrown by a store's entry walk when an entry cannot be read as what its place says it is. */
export class DamageFound extends Error {
  constructor(readonly damage: Damage) {
    super(damage.reason);
  }
}

/**
 * `mesh-cp log export` over any store: writes each stored entry's JSON once the hash chain up to
 * it has been checked, and stops at the first damage (the store's walk throws {@link DamageFound},
 * or the chain breaks).
 */
export async function exportCheckedEntries(
  stored: AsyncIterable<{ entry: LogEntry; json: string }>,
  write: (line: string) => Promise<void>,
): Promise<{ ok: true; head: number } | ({ ok: false } & Damage)> {
  const checked = (async function* () {
    for await (const { entry, json } of stored) {
      yield entry;
      // Reached only once verifyEntries has checked this entry and asks for the next one.
      await write(json);
    }
  })();
  try {
    const result = await verifyEntries(checked);
    return result.ok ? result : { ok: false, revision: result.revision, reason: result.reason };
  } catch (error) {
    if (error instanceof DamageFound) return { ok: false, ...error.damage };
    throw error;
  }
}
