// The client half of the bare @grpc/grpc-js baseline of bench/zones.ts: the same proto, TLS and
// messages as mesh-cp's sync, without the log or the write path. On GlobalToZone it decodes every
// entry (JSON.parse of the resource, as a receiver must) and acks each batch. On ZoneToGlobal, when
// the server's Welcome names a count, it sends that many entries in batches with the same window.
// Usage: node bench/baselines/bare-sync-client.mjs <port> <ca.pem>
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';

const [port, caFile] = process.argv.slice(2);
const def = loadSync('proto/sync.proto', {
  keepCase: false,
  longs: Number,
  enums: String,
  defaults: true,
  oneofs: true,
});
const Client = grpc.makeGenericClientConstructor(def['meshcp.sync.v1.Sync'], 'Sync');
const options = {
  'grpc.max_receive_message_length': 64 * 1024 * 1024,
  'grpc.max_send_message_length': 64 * 1024 * 1024,
};
const client = new Client(`127.0.0.1:${port}`, grpc.credentials.createSsl(readFileSync(caFile)), options);

const down = client.GlobalToZone(new grpc.Metadata());
down.on('data', (m) => {
  if (m.body !== 'batch') return;
  for (const e of m.batch.entries) JSON.parse(e.resource.toString('utf8'));
  down.write({ ack: { seq: m.batch.seq, revision: m.batch.toRevision, rejected: [] } });
});
down.on('error', () => process.exit(0));
down.write({ hello: { zone: 'bare' } });

const BATCH = 1000;
const WINDOW = 4;
const up = client.ZoneToGlobal(new grpc.Metadata());
let acked = 0;
let wake;
up.on('data', (m) => {
  if (m.body === 'ack') {
    acked = m.ack.seq;
    wake?.();
  } else if (m.body === 'welcome' && m.welcome.fromRevision > 0) {
    void sendUp(m.welcome.fromRevision, m.welcome.start);
  }
});
up.on('error', () => process.exit(0));
up.write({ hello: { zone: 'bare' } });

/** Sends `n` entries carrying `json` (the resource), BATCH per batch, at most WINDOW unacked. */
async function sendUp(n, json) {
  const resource = Buffer.from(json);
  let seq = acked;
  for (let i = 0; i < n; i += BATCH) {
    while (seq - acked >= WINDOW) await new Promise((r) => (wake = r));
    const entries = [];
    for (let j = i; j < Math.min(n, i + BATCH); j++) {
      entries.push({
        revision: j + 1,
        kind: 'Dataplane',
        mesh: 'default',
        name: `dp-${j}`,
        operation: 'CREATE',
        resource,
      });
    }
    seq += 1;
    up.write({ batch: { seq, entries, toRevision: Math.min(n, i + BATCH), snapshot: 'NONE' } });
  }
}

process.stdout.write(`${JSON.stringify({ msg: 'ready' })}\n`);
