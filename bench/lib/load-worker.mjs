// Runs one autocannon load in its own process and prints the result as one JSON line.
// argv[2]: a file holding JSON {url, connections, duration, warmup?, method?, paths?: string[], bodies?: string[], vary?, firstPass?, etcdPut?, headers?}
// (a file, because thousands of request bodies do not fit in argv).
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import autocannon from 'autocannon';

const o = JSON.parse(readFileSync(process.argv[2], 'utf8'));
// o.vary (a text each body holds, such as '"port":8080'): every request writes the next of paths[]
// in turn with that text set to a new value on each pass over them, so that every PUT changes its
// resource (a PUT of the stored body changes nothing) and no two requests in flight write the same
// one (50 in flight, 2,000 resources). The first pass creates, the later ones update.
// With o.etcdPut, paths[] are etcd keys and each request is etcd's HTTP/JSON gateway
// `/v3/kv/put` of {key, value}, both base64 (the gateway's JSON for bytes), the value the same body.
function varying() {
  const parts = o.bodies.map((body) => {
    const at = body.indexOf(o.vary);
    if (at < 0) throw new Error(`a body does not hold ${o.vary}`);
    return [body.slice(0, at), body.slice(at + o.vary.length)];
  });
  const key = o.vary.slice(0, o.vary.indexOf(':') + 1);
  const etcdKeys = o.etcdPut ? o.paths.map((p) => Buffer.from(p).toString('base64')) : undefined;
  let seq = 0;
  // o.firstPass: the pass the values start from (loads of one server in turn: each goes on from
  // values the last did not write, so none of its PUTs repeats a stored body).
  const firstPass = o.firstPass ?? 0;
  return [
    {
      method: o.method ?? 'PUT',
      headers: o.headers ?? {},
      setupRequest: (req) => {
        const i = seq % o.paths.length;
        const pass = Math.floor(seq / o.paths.length);
        seq += 1;
        const body = `${parts[i][0]}${key}${10000 + ((firstPass + pass) % 50000)}${parts[i][1]}`;
        if (etcdKeys) {
          const value = Buffer.from(body).toString('base64');
          return { ...req, path: '/v3/kv/put', body: `{"key":"${etcdKeys[i]}","value":"${value}"}` };
        }
        return { ...req, path: o.paths[i], body };
      },
    },
  ];
}
const requests = o.vary
  ? varying()
  : (o.paths ?? [new URL(o.url).pathname + new URL(o.url).search]).map((path, i) => ({
      method: o.method ?? 'GET',
      path,
      ...(o.bodies ? { body: o.bodies[i % o.bodies.length] } : {}),
      headers: o.headers ?? {},
    }));
// o.warmup (seconds): the same load first, not counted (autocannon's warm-up: the same requests, so
// a varying load goes on with the next values and the counted run changes every resource it writes).
const result = await autocannon({
  url: o.url,
  connections: o.connections,
  duration: o.duration,
  ...(o.warmup > 0 ? { warmup: { connections: o.connections, duration: o.warmup } } : {}),
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
    statusCodes: Object.fromEntries(
      Object.entries(result.statusCodeStats ?? {}).map(([code, stats]) => [code, stats.count]),
    ),
    timeouts: result.timeouts,
  })}\n`,
);
