/** One run of a figure: ours, the baseline, and the CPU steal while it ran. */
export interface Run {
  ours: number;
  baseline: number | null;
  ratio: number | null;
  steal: number;
}

/** A figure in the report (bench/results/latest.json), from bench/run.ts or bench/zones.ts. */
export interface Figure {
  name: string;
  figure: string;
  ours: number | null;
  baseline: number | null;
  ratio: number | null;
  target: number;
  higherIsBetter: boolean;
  ok: boolean | 'inconclusive' | 'n/a';
  runs: Run[];
  note?: string;
}

/** A number for the table: fewer decimals as it grows; `—` for none. */
export function fmt(x: number | null): string {
  if (x === null || Number.isNaN(x)) return '—';
  return Math.abs(x) >= 100 ? x.toFixed(0) : Math.abs(x) >= 10 ? x.toFixed(1) : x.toFixed(2);
}

/** The markdown table of figures (scenario, figure, ours, baseline, ratio, target, ok?). */
export function formatTable(figures: readonly Figure[]): string {
  const rows = figures.map((f) => [
    f.name,
    f.figure,
    fmt(f.ours),
    fmt(f.baseline),
    fmt(f.ratio),
    f.ok === 'n/a' ? '—' : `${f.higherIsBetter ? '≥' : '≤'} ${f.target}`,
    f.ok === true ? 'ok' : f.ok === false ? 'MISS' : f.ok,
  ]);
  const head = ['scenario', 'figure', 'ours', 'baseline', 'ratio', 'target', 'ok?'];
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const line = (r: string[]) => `| ${r.map((c, i) => c.padEnd(widths[i])).join(' | ')} |`;
  return [line(head), `|${widths.map((w) => '-'.repeat(w + 2)).join('|')}|`, ...rows.map(line)].join('\n');
}
