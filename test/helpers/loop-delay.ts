import { monitorEventLoopDelay } from 'node:perf_hooks';

/**
 * Runs `work` while sampling this process's event loop, and returns its result with the longest
 * time the loop was held (ms). The servers that tests start in-process share this loop, so this is
 * how long one request's cost kept every other caller waiting. Sampled every 5 ms: a stall shorter
 * than that may read as 0.
 */
export async function measureLoopDelay<T>(work: () => Promise<T>): Promise<{ result: T; maxMs: number }> {
  const histogram = monitorEventLoopDelay({ resolution: 5 });
  histogram.enable();
  try {
    // The histogram records the time between two of its own ticks, the first tick only starts the
    // clock: a stall before it would not be seen. Let it tick first (its timer is due before this one).
    await new Promise((resolve) => setTimeout(resolve, 12));
    const result = await work();
    // One more turn so that a stall at the very end is sampled too.
    await new Promise((resolve) => setTimeout(resolve, 10));
    return { result, maxMs: histogram.max / 1e6 };
  } finally {
    histogram.disable();
  }
}

/** Runs `work` while sampling this process's resident memory; resolves with its result and the peak growth (bytes). */
export async function measureRssGrowth<T>(work: () => Promise<T>): Promise<{ result: T; growth: number }> {
  const before = process.memoryUsage.rss();
  let peak = before;
  const sampler = setInterval(() => {
    peak = Math.max(peak, process.memoryUsage.rss());
  }, 5);
  try {
    const result = await work();
    peak = Math.max(peak, process.memoryUsage.rss());
    return { result, growth: peak - before };
  } finally {
    clearInterval(sampler);
  }
}
