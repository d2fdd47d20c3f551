// Runs one autocannon load in its own process and prints the result as one JSON line.
// argv[2]: a file holding JSON {url, connections, duration, method?, paths?: string[], bodies?: string[], headers?}
// (a file, because thousands of request bodies do not fit in argv).
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const o = JSON.parse(readFileSync(process.argv[2], 'utf8'));
const requests = (o.paths ?? [new URL(o.url).pathname + new URL(o.url).search]).map((path, i) => ({
  method: o.method ?? 'GET',
  path,
  ...(o.bodies ? { body: o.bodies[i % o.bodies.length] } : {}),
  headers: o.headers ?? {},
}));
const result = await autocannon({
  url: o.url,
  connections: o.connections,
  duration: o.duration,
  requests,
});
process.stdout.write(
  `${JSON.stringify({
    rps: result.requests.average,
    total: result.requests.total,
    p50: result.latency.p50,
    p99: result.latency.p99,
    errors: result.errors,
    non2xx: result.non2xx,
    timeouts: result.timeouts,
  })}\n`,
);
