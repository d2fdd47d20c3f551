import type { Figure, Run } from './report.js';
import { fmt } from './report.js';
import { cpuSample, median, stealPercent } from './stats.js';

/** A run above this CPU steal (%) is inconclusive: neither a pass nor a failure. */
export const STEAL_LIMIT = 10;

/** What a figure is and how it is gated. */
export type FigureSpec = Omit<Figure, 'ours' | 'baseline' | 'ratio' | 'ok' | 'runs'> & {
  /** How the ratio is formed from ours and baseline (default ours / baseline). */
  ratioOf?: (ours: number, baseline: number) => number;
  /** What the target applies to: the median ratio (default when there is a baseline) or ours. */
  gate?: 'ratio' | 'ours';
  /** Run once untimed first so both sides are warm (JIT, caches); default true. */
  warmUp?: boolean;
  /** A further condition the figure must meet to be ok. */
  extraOk?: () => boolean;
  /** Shown, never gated (ok `n/a`): a figure the issue asks to see, with no target to meet. */
  reportOnly?: boolean;
};

/**
 * Measures a figure: `runs` interleaved runs (each measures ours then the baseline), gated on the
 * medians over the runs with at most 10% steal; inconclusive when no run qualifies.
 */
export async function measureFigure(
  spec: FigureSpec,
  measure: () => Promise<{ ours: number; baseline: number | null }>,
  opts: { runs: number; log: (s: string) => void },
): Promise<Figure> {
  const ratioOf = spec.ratioOf ?? ((o: number, b: number) => o / b);
  const runs: Run[] = [];
  if (spec.warmUp !== false) await measure();
  for (let i = 0; i < opts.runs; i++) {
    const a = cpuSample();
    const m = await measure();
    const steal = stealPercent(a, cpuSample());
    const ratio = m.baseline === null ? null : ratioOf(m.ours, m.baseline);
    runs.push({ ours: m.ours, baseline: m.baseline, ratio, steal });
    opts.log(
      `  [${spec.name}] run ${i + 1}/${opts.runs}: ours ${fmt(m.ours)}, baseline ${fmt(m.baseline)}, ratio ${fmt(ratio)}, steal ${steal.toFixed(1)}%${steal > STEAL_LIMIT ? ' (inconclusive)' : ''}`,
    );
  }
  const good = runs.filter((r) => r.steal <= STEAL_LIMIT);
  const hasBaseline = runs[0].baseline !== null;
  const ours = good.length ? median(good.map((r) => r.ours)) : null;
  const baseline = good.length && hasBaseline ? median(good.map((r) => r.baseline as number)) : null;
  const ratio = good.length && hasBaseline ? median(good.map((r) => r.ratio as number)) : null;
  const value = (spec.gate ?? (hasBaseline ? 'ratio' : 'ours')) === 'ratio' ? ratio : ours;
  const ok: Figure['ok'] = spec.reportOnly
    ? 'n/a'
    : value === null
      ? 'inconclusive'
      : (spec.higherIsBetter ? value >= spec.target : value <= spec.target) && (spec.extraOk?.() ?? true);
  const { ratioOf: _r, gate: _g, warmUp: _w, extraOk: _e, reportOnly: _o, ...rest } = spec;
  return { ...rest, ours, baseline, ratio, ok, runs };
}

/** What a scenario group is run with: a smaller `quick` run, a name prefix `only`, a log line sink. */
export interface GroupOptions {
  quick?: boolean;
  only?: string;
  log?: (s: string) => void;
}

/** The log sink (standard error by default) and whether a scenario `name` is selected by `only`. */
export function groupSelection(opts: GroupOptions): {
  log: (s: string) => void;
  want: (name: string) => boolean;
} {
  const { only } = opts;
  return {
    log: opts.log ?? ((s: string) => process.stderr.write(`${s}\n`)),
    want: (name) => only === undefined || name.startsWith(only) || only.startsWith(name),
  };
}
