// A plain @grpc/grpc-js Greeter backend (no xDS): it answers with its version label.
// Options (flag or env): --port PORT (0 = a free port), --version VERSION, --delay-ms DELAY_MS,
// --fail-first FAIL_FIRST (the first N calls fail with UNAVAILABLE), --host HOST,
// --log-calls LOG_CALLS=true (one JSON line per call). Prints one JSON line when listening:
// {"listening": port, ...}.
import * as grpc from '@grpc/grpc-js';
import { greeterPackage, options } from './greeter.mjs';

const opts = options({
  host: { env: 'HOST', def: '127.0.0.1' },
  port: { env: 'PORT', def: '0' },
  version: { env: 'VERSION', def: 'v1' },
  'delay-ms': { env: 'DELAY_MS', def: '0' },
  'fail-first': { env: 'FAIL_FIRST', def: '0' },
  'log-calls': { env: 'LOG_CALLS', def: 'false' },
});
const delayMs = Number(opts['delay-ms']);
const failFirst = Number(opts['fail-first']);
const print = (o) => process.stdout.write(`${JSON.stringify(o)}\n`);

let calls = 0;
const server = new grpc.Server();
server.addService(greeterPackage().Greeter.service, {
  SayHello(call, callback) {
    const n = ++calls;
    const fail = n <= failFirst;
    if (opts['log-calls'] === 'true') print({ call: n, status: fail ? 'UNAVAILABLE' : 'OK' });
    const answer = () =>
      fail
        ? callback({ code: grpc.status.UNAVAILABLE, details: `${opts.version} fails call ${n} on purpose` })
        : callback(null, { message: `Hello ${call.request.name}`, version: opts.version });
    if (delayMs > 0) setTimeout(answer, delayMs);
    else answer();
  },
});

server.bindAsync(`${opts.host}:${opts.port}`, grpc.ServerCredentials.createInsecure(), (err, port) => {
  if (err) {
    console.error(err.message);
    process.exit(1);
  }
  print({ listening: port, host: opts.host, version: opts.version, delayMs, failFirst });
});

for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => server.tryShutdown(() => process.exit(0)));
}
