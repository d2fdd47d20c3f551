/** Rows of text under headers, columns padded to their widest cell (kumactl's plain tables). */
export function formatTable(headers: readonly string[], rows: readonly (readonly string[])[]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => (r[i] ?? '').length)));
  const line = (cells: readonly string[]): string =>
    cells
      .map((c, i) => (i === cells.length - 1 ? c : c.padEnd(widths[i])))
      .join('   ')
      .trimEnd();
  return [headers, ...rows].map(line).join('\n') + '\n';
}

/** A short age like kubectl's: `45s`, `12m`, `5h`, `3d`; `unknown` without a time. */
export function age(time: unknown, now: number = Date.now()): string {
  if (typeof time !== 'string') return 'unknown';
  const t = Date.parse(time);
  if (Number.isNaN(t)) return 'unknown';
  const s = Math.max(0, Math.floor((now - t) / 1000));
  if (s < 120) return `${s}s`;
  if (s < 2 * 3600) return `${Math.floor(s / 60)}m`;
  if (s < 48 * 3600) return `${Math.floor(s / 3600)}h`;
  return `${Math.floor(s / 86400)}d`;
}
