/* global setInterval */
// Preloaded into a mesh-cp process (`--import ./bench/lib/loop-probe.mjs`): measures its event-loop
// delay with perf_hooks' monitorEventLoopDelay from the first moment of the process, and keeps, every
// 10 ms, the largest delay recorded since the last sample, with the sample's time (epoch ms, as log
// lines' `time`). On SIGUSR2 it writes the samples, [[time, maxMs], …], to BENCH_LOOP_PROBE_FILE.
// A stall of d ms that ends at time E is in the first sample after E: it covers [E - d, E].
import { writeFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';

const histogram = monitorEventLoopDelay({ resolution: 1 });
histogram.enable();
const samples = [];
const sample = () => {
  samples.push([Date.now(), histogram.max / 1e6]);
  histogram.reset();
};
setInterval(sample, 10).unref();
process.on('SIGUSR2', () => {
  sample();
  writeFileSync(process.env.BENCH_LOOP_PROBE_FILE, JSON.stringify(samples));
});
