/** Structural equality of JSON values (objects compared by keys, not key order). */
export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a)) {
    if (!Array.isArray(b) || a.length !== b.length) return false;
    for (let i = 0; i < a.length; i++) if (!deepEqual(a[i], b[i])) return false;
    return true;
  }
  if (Array.isArray(b)) return false;
  const ra = a as Record<string, unknown>;
  const rb = b as Record<string, unknown>;
  let n = 0;
  for (const k in ra) {
    if (ra[k] === undefined) continue;
    if (!Object.prototype.hasOwnProperty.call(rb, k) || !deepEqual(ra[k], rb[k])) return false;
    n++;
  }
  let m = 0;
  for (const k in rb) if (rb[k] !== undefined) m++;
  return n === m;
}

/** Whether two string lists hold the same strings in the same order. */
export const sameStrings = (a: readonly string[], b: readonly string[]): boolean =>
  a.length === b.length && a.every((x, i) => x === b[i]);
