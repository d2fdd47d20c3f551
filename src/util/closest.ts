/** Edits (insert, delete, substitute, swap two neighbours) that turn `a` into `b`. */
export function editDistance(a: string, b: string): number {
  const rows = Array.from({ length: a.length + 1 }, (_, i) =>
    Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= a.length; i++) {
    for (let j = 1; j <= b.length; j++) {
      const cost = a[i - 1] === b[j - 1] ? 0 : 1;
      rows[i][j] = Math.min(rows[i - 1][j] + 1, rows[i][j - 1] + 1, rows[i - 1][j - 1] + cost);
      if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) {
        rows[i][j] = Math.min(rows[i][j], rows[i - 2][j - 2] + 1);
      }
    }
  }
  return rows[a.length][b.length];
}

/** Names longer than this are compared with no candidate. */
const MAX_NAME_LENGTH = 128;

/**
 * The candidate nearest to `name` (case-insensitive), when it is near: at most a quarter of the
 * name's length in edits, and at most 2; `prefix`, shared by the name and every candidate, is not
 * counted. The first of equally near candidates wins.
 */
export function closest(name: string, candidates: Iterable<string>, prefix = ''): string | undefined {
  const bare = name.slice(prefix.length).toLowerCase();
  // Names are short; a long one (a 16 KB path segment) is near none and would cost a table of its length per candidate.
  if (bare.length > MAX_NAME_LENGTH) return undefined;
  let best: string | undefined;
  let bestDistance = Math.min(2, Math.floor(bare.length / 4)) + 1;
  for (const candidate of candidates) {
    const other = candidate.slice(prefix.length).toLowerCase();
    // At least the difference in length in edits: too far without building the table.
    if (Math.abs(other.length - bare.length) >= bestDistance) continue;
    const distance = editDistance(bare, other);
    if (distance < bestDistance) {
      best = candidate;
      bestDistance = distance;
    }
  }
  return best;
}
