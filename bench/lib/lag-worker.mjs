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
const insight = async () => (await (await fetch(`${o.url}/mesh-insights/default`)).json()).dataplanes.total;
// Untimed warm-up of this client (a new process per run): the same rate of writes of other data
// planes and the same polling, for `warmupSeconds`, so its own cold start is not counted as lag.
if (o.warmupSeconds > 0) {
  let stop = false;
  const polls = (async () => {
    while (!stop) {
      await insight();
      await new Promise((r) => setTimeout(r, 5));
    }
  })();
  const n = Math.min(o.paths.length, Math.round(o.rate * o.warmupSeconds));
  const t0 = performance.now();
  const puts = [];
  for (let i = 0; i < n; i++) {
    const wait = t0 + (i * 1000) / o.rate - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    const body = JSON.parse(o.bodies[i]);
    body.name = `${body.name}-w`;
    puts.push(
      fetch(`${o.url}${o.paths[i]}-w`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
      }).then((res) => res.arrayBuffer()),
    );
  }
  await Promise.all(puts);
  stop = true;
  await polls;
}
// The data planes already there (earlier runs on the same server).
const base = await insight();
const acks = new Array(count);
const seen = [];
let done = false;
const poller = (async () => {
  while (!done) {
    const t = performance.now();
    seen.push({ t, total: (await insight()) - base });
    await new Promise((r) => setTimeout(r, 5));
  }
})();
const start = performance.now();
const writes = [];
for (let i = 0; i < count; i++) {
  const wait = start + (i * 1000) / o.rate - performance.now();
  if (wait > 0) await new Promise((r) => setTimeout(r, wait));
  writes.push(
    fetch(`${o.url}${o.paths[i]}`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: o.bodies[i],
    }).then(async (res) => {
      await res.arrayBuffer();
      if (res.status >= 300) throw new Error(`PUT ${o.paths[i]}: ${res.status}`);
      acks[i] = performance.now();
    }),
  );
}
await Promise.all(writes);
await new Promise((r) => setTimeout(r, 100));
done = true;
await poller;
const lags = acks.map((t, i) => {
  const first = seen.find((s) => s.t >= t && s.total >= i + 1);
  return first ? first.t - t : null;
});
process.stdout.write(`${JSON.stringify({ lags, polls: seen.length })}\n`);
