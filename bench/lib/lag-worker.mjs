// The insight-lag client, in its own process (the bench process holds large fixtures; its GC pauses
// must not pass for lag): PUTs new data planes at a fixed rate while polling MeshInsight, and prints
// one JSON line {lags: [...]}: for the i-th write, ms from its answer to the start of the first
// poll that shows at least i+1 data planes more than before the run. With `warmupSeconds`, it first
// writes (other data planes) and polls the same way, untimed: a new process's first second of
// fetches ran 0.4-1.3 s behind and made most of the p99 (24-155 ms with a 1 s warm-up, 360-1,350
// without, same server).
// argv[2]: a file holding JSON {url, rate, seconds, warmupSeconds?, paths: string[], bodies: string[]}.
import { readFileSync } from 'node:fs';

const o = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const count = Math.min(o.paths.length, o.rate * o.seconds);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
const insight = async () => (await (await fetch(`${o.url}/mesh-insights/default`)).json()).dataplanes.total;

/** Polls MeshInsight every 5 ms, giving `record` each poll's start time and total; returns its stop. */
function polling(record) {
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      const t = performance.now();
      record(t, await insight());
      await sleep(5);
    }
  })();
  return async () => {
    stopped = true;
    await loop;
  };
}

/** PUTs `n` data planes at `o.rate` (the i-th: `path(i)`, `body(i)`); calls `acked(i)` on each answer. */
async function putAtRate(n, path, body, acked) {
  const start = performance.now();
  const writes = [];
  for (let i = 0; i < n; i++) {
    const wait = start + (i * 1000) / o.rate - performance.now();
    if (wait > 0) await sleep(wait);
    writes.push(
      fetch(`${o.url}${path(i)}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: body(i),
      }).then(async (res) => {
        await res.arrayBuffer();
        if (res.status >= 300) throw new Error(`PUT ${path(i)}: ${res.status}`);
        acked(i);
      }),
    );
  }
  await Promise.all(writes);
}

// Untimed warm-up of this client (a new process per run): the same rate of writes of other data
// planes and the same polling, for `warmupSeconds`, so its own cold start is not counted as lag.
if (o.warmupSeconds > 0) {
  const stop = polling(() => undefined);
  await putAtRate(
    Math.min(o.paths.length, Math.round(o.rate * o.warmupSeconds)),
    (i) => `${o.paths[i]}-w`,
    (i) => {
      const dp = JSON.parse(o.bodies[i]);
      return JSON.stringify({ ...dp, name: `${dp.name}-w` });
    },
    () => undefined,
  );
  await stop();
}
// The data planes already there (earlier runs on the same server).
const base = await insight();
const acks = new Array(count);
const seen = [];
const stop = polling((t, total) => seen.push({ t, total: total - base }));
await putAtRate(
  count,
  (i) => o.paths[i],
  (i) => o.bodies[i],
  (i) => (acks[i] = performance.now()),
);
await sleep(100);
await stop();
const lags = acks.map((t, i) => {
  const first = seen.find((s) => s.t >= t && s.total >= i + 1);
  return first ? first.t - t : null;
});
process.stdout.write(`${JSON.stringify({ lags, polls: seen.length })}\n`);
