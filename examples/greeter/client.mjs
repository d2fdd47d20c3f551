// A Greeter client that joins the mesh through @grpc/grpc-js-xds: it reads its bootstrap from
// GRPC_XDS_BOOTSTRAP (a file) and dials `xds:///greeter`, so the control plane decides which
// backend answers, with what timeout, retries and faults.
// Options (flag or env): --calls CALLS (make N calls, then print one JSON summary and exit),
// --loop LOOP=true (call until stopped, printing one JSON line of counts per --interval-ms, 1000;
// --pause-ms PAUSE_MS, 0, is a wait between two calls: 0 calls back to back),
// --deadline-ms DEADLINE_MS (per call, 5000), --target TARGET (xds:///greeter), --name NAME.
import { clearInterval, setInterval, setTimeout } from 'node:timers';
import * as grpc from '@grpc/grpc-js';
import xds from '@grpc/grpc-js-xds';
import { greeterPackage, options } from './greeter.mjs';

const opts = options({
  calls: { env: 'CALLS', def: '10' },
  loop: { env: 'LOOP', def: 'false' },
  'interval-ms': { env: 'INTERVAL_MS', def: '1000' },
  'pause-ms': { env: 'PAUSE_MS', def: '0' },
  'deadline-ms': { env: 'DEADLINE_MS', def: '5000' },
  target: { env: 'TARGET', def: 'xds:///greeter' },
  name: { env: 'NAME', def: 'world' },
});
if (
  opts.target.startsWith('xds:') &&
  !process.env.GRPC_XDS_BOOTSTRAP &&
  !process.env.GRPC_XDS_BOOTSTRAP_CONFIG
) {
  console.error('GRPC_XDS_BOOTSTRAP is not set: point it to the bootstrap file of this client');
  process.exit(2);
}
xds.register();

const client = new (greeterPackage().Greeter)(opts.target, grpc.credentials.createInsecure());
const deadlineMs = Number(opts['deadline-ms']);
const print = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);
const codeName = Object.fromEntries(Object.entries(grpc.status).map(([k, v]) => [v, k]));

/** Counts of one run or one interval: answers by version, calls by status code, one detail per failed code. */
const tally = () => ({ answers: {}, codes: {}, details: {} });
const add = (t, key, k) => (t[key][k] = (t[key][k] ?? 0) + 1);

function sayHello() {
  return new Promise((resolve) =>
    client.sayHello({ name: opts.name }, { deadline: Date.now() + deadlineMs }, (err, reply) =>
      resolve(
        err ? { code: codeName[err.code], details: err.details } : { code: 'OK', version: reply.version },
      ),
    ),
  );
}
function record(t, r) {
  add(t, 'codes', r.code);
  if (r.code === 'OK') add(t, 'answers', r.version);
  else t.details[r.code] ??= r.details;
}

if (opts.loop === 'true') {
  let stopped = false;
  let window = { from: Date.now(), ...tally() };
  const flush = () => {
    const to = Date.now();
    print({ ...window, to });
    window = { from: to, ...tally() };
  };
  const timer = setInterval(flush, Number(opts['interval-ms']));
  const stop = () => {
    stopped = true;
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  const pauseMs = Number(opts['pause-ms']);
  while (!stopped) {
    record(window, await sayHello());
    if (pauseMs > 0) await new Promise((resolve) => setTimeout(resolve, pauseMs));
  }
  clearInterval(timer);
  flush();
  client.close();
  process.exit(0);
} else {
  const total = tally();
  const calls = Number(opts.calls);
  for (let i = 0; i < calls; i++) record(total, await sayHello());
  print({ calls, ...total });
  client.close();
  process.exit(total.codes.OK ? 0 : 1);
}
