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

/**
 * `mesh-cp log import` over any store: parses exported lines (blank ones skipped), checks the hash
 * chain, and hands each entry to `accept` once the chain up to it holds. Stops at the first damage,
 * named by revision and line; the store then drops what it accepted.
 */
export async function importCheckedEntries(
  lines: AsyncIterable<string>,
  accept: (entry: LogEntry) => Promise<void>,
): Promise<{ ok: true; head: number } | ({ ok: false } & Damage)> {
  let lineNo = 0;
  let head = 0;
  const parsed = (async function* () {
    for await (const raw of lines) {
      lineNo += 1;
      if (raw.trim() === '') continue;
      let entry: LogEntry;
      try {
        entry = JSON.parse(raw) as LogEntry;
      } catch {
        throw new DamageFound({ revision: head + 1, line: lineNo, reason: 'the line is not valid JSON' });
      }
      if (typeof entry !== 'object' || entry === null) {
        throw new DamageFound({ revision: head + 1, line: lineNo, reason: 'the line is not a log entry' });
      }
      yield entry;
      // Reached only once verifyEntries has checked this entry and asks for the next one.
      head = entry.revision;
      await accept(entry);
    }
  })();
  try {
    const result = await verifyEntries(parsed);
    return result.ok
      ? { ok: true, head }
      : { ok: false, revision: result.revision, line: lineNo, reason: result.reason };
  } catch (error) {
    if (error instanceof DamageFound) return { ok: false, ...error.damage };
    throw error;
  }
}
