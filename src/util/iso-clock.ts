/**
 * `now().toISOString()`, formatted once per millisecond of `now`: a write burst takes several
 * timestamps each millisecond (a PUT's modification time, its log entry's time), and formatting one
 * costs more than reading the clock. The same text as `toISOString` for every time.
 */
export function isoClock(now: () => Date = () => new Date()): () => string {
  let lastMs = Number.NaN;
  let lastIso = '';
  return () => {
    const date = now();
    const ms = date.getTime();
    if (ms !== lastMs) {
      lastMs = ms;
      lastIso = date.toISOString();
    }
    return lastIso;
  };
}
