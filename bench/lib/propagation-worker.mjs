// The pg-propagation client, in its own process (as lag-worker.mjs): PUTs new data planes on
// instance A at a fixed rate while reading instance B's `GET /_events` stream (text/event-stream,
// live from B's head on), and prints one JSON line {lags, afterAck, rtts, missing}: for each write,
// ms from sending the PUT to A until B's stream carried its revision (A's ETag), ms from A's answer
// to that event (0 when B was first), and the PUT's round trip. A write B never carries within 5 s
// after the last answer counts as missing (its lag null). With `warmupSeconds` it first writes other
// data planes the same way, untimed, so that its own cold start (and B's) is not counted.
// argv[2]: a file holding JSON {writeUrl, watchUrl, rate, warmupSeconds?, paths: string[], bodies: string[]}.
import { readFileSync } from 'node:fs';
import { TextDecoder } from 'node:util';

const o = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Revision -> when B's stream carried it (performance.now()). */
const seen = new Map();
const stream = await fetch(`${o.watchUrl}/_events`, { headers: { accept: 'text/event-stream' } });
if (stream.status !== 200) throw new Error(`GET /_events on B: ${stream.status}`);
const reader = stream.body.getReader();
const reading = (async () => {
  const decoder = new TextDecoder();
  let buffered = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    const t = performance.now();
    buffered += decoder.decode(value, { stream: true });
    const lines = buffered.split('\n');
    buffered = lines.pop();
    for (const line of lines) if (line.startsWith('id: ')) seen.set(Number(line.slice(4)), t);
  }
})();

/** PUTs `n` data planes on A at `o.rate`; resolves with each write's send time, answer time and revision. */
async function putAtRate(n, path, body) {
  const start = performance.now();
  const writes = [];
  for (let i = 0; i < n; i++) {
    const wait = start + (i * 1000) / o.rate - performance.now();
    if (wait > 0) await sleep(wait);
    const sent = performance.now();
    writes.push(
      fetch(`${o.writeUrl}${path(i)}`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: body(i),
      }).then(async (res) => {
        await res.arrayBuffer();
        const acked = performance.now();
        if (res.status >= 300) throw new Error(`PUT ${path(i)} on A: ${res.status}`);
        return { sent, acked, revision: Number(JSON.parse(res.headers.get('etag'))) };
      }),
    );
  }
  return Promise.all(writes);
}

/** Waits until B carried every revision of `writes`, at most 5 s. */
async function untilSeen(writes) {
  const end = performance.now() + 5000;
  while (performance.now() < end && !writes.every((w) => seen.has(w.revision))) await sleep(5);
}

if (o.warmupSeconds > 0) {
  const warm = await putAtRate(
    Math.min(o.paths.length, Math.round(o.rate * o.warmupSeconds)),
    (i) => `${o.paths[i]}-w`,
    (i) => {
      const dp = JSON.parse(o.bodies[i]);
      return JSON.stringify({ ...dp, name: `${dp.name}-w` });
    },
  );
  await untilSeen(warm);
}
const writes = await putAtRate(
  o.paths.length,
  (i) => o.paths[i],
  (i) => o.bodies[i],
);
await untilSeen(writes);
await reader.cancel();
await reading.catch(() => undefined);
const at = (w) => seen.get(w.revision);
process.stdout.write(
  `${JSON.stringify({
    lags: writes.map((w) => (at(w) === undefined ? null : at(w) - w.sent)),
    afterAck: writes.map((w) => (at(w) === undefined ? null : Math.max(0, at(w) - w.acked))),
    rtts: writes.map((w) => w.acked - w.sent),
    missing: writes.filter((w) => at(w) === undefined).length,
  })}\n`,
);
