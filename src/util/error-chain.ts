/**
 * An error's message followed by those of its `cause` chain, joined by `: ` (level's "Database
 * failed to open" says why only in its cause); a message its wrapper already repeats is skipped.
 */
export function errorChain(error: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  for (let e: unknown = error; e !== undefined && e !== null && !seen.has(e);) {
    seen.add(e);
    const message = e instanceof Error ? e.message : String(e);
    if (message !== '' && !parts.some((part) => part.includes(message))) parts.push(message);
    e = e instanceof Error ? e.cause : undefined;
  }
  return parts.join(': ');
}
