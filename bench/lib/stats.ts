import { readFileSync } from 'node:fs';

/** CPU time counters from /proc/stat: total and steal, in jiffies. */
export function cpuSample(): { total: number; steal: number } {
  const line = readFileSync('/proc/stat', 'utf8').split('\n')[0];
  const f = line.trim().split(/\s+/).slice(1).map(Number);
  // user nice system idle iowait irq softirq steal guest guest_nice; guest time is inside user.
  const total = f.slice(0, 8).reduce((a, b) => a + b, 0);
  return { total, steal: f[7] ?? 0 };
}

/** Percentage of CPU time stolen between two samples. */
export function stealPercent(
  a: { total: number; steal: number },
  b: { total: number; steal: number },
): number {
  const dt = b.total - a.total;
  return dt > 0 ? (100 * (b.steal - a.steal)) / dt : 0;
}

/** The median of a list of numbers. */
export function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = s.length >> 1;
  return s.length % 2 ? s[m] : (s[m - 1] + s[m]) / 2;
}

/** The p-th percentile (0–100) of a list. */
export function percentile(xs: number[], p: number): number {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.ceil((p / 100) * s.length) - 1)] ?? NaN;
}

/** One run of a figure's durable floor: its rate and the baseline's, measured in the same run. */
export interface FloorRun {
  floor: number;
  baseline: number;
  /** The work floor's rate in the same run, where a figure has one (the zone's apply). */
  work?: number;
}

/** Medians of rates each measured beside a baseline: the rate, and its ratio to the baseline run by run. */
function mediansOf(runs: ReadonlyArray<{ rate: number; baseline: number }>): { rate: number; ratio: number } {
  return { rate: median(runs.map((r) => r.rate)), ratio: median(runs.map((r) => r.rate / r.baseline)) };
}

/**
 * Medians of a durable floor over the counted runs (the last `counted`: a warm-up run comes first):
 * its rate, and its ratio to the baseline run by run.
 */
export function floorMedians(runs: readonly FloorRun[], counted: number): { rate: number; ratio: number } {
  return mediansOf(runs.slice(-counted).map((r) => ({ rate: r.floor, baseline: r.baseline })));
}

/** The same medians for the work floor of the runs that measured one (undefined when none did). */
export function workFloorMedians(
  runs: readonly FloorRun[],
  counted: number,
): { rate: number; ratio: number } | undefined {
  const c = runs
    .slice(-counted)
    .flatMap((r) => (r.work === undefined ? [] : [{ rate: r.work, baseline: r.baseline }]));
  return c.length === 0 ? undefined : mediansOf(c);
}
