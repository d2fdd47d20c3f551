// The client half of the bare @grpc/grpc-js baseline of bench/zones.ts: the same proto, TLS and
// messages as mesh-cp's sync, without the log or the write path. On GlobalToZone it decodes every
// entry (JSON.parse of the resource, as a receiver must) and acks each batch. On ZoneToGlobal, when
// the server's Welcome names a count, it sends that many entries in batches with the same window.
// With a data dir as third argument it is the durable floor of a zone's apply instead: each
// GlobalToZone batch is also written to classic-level (each entry and a history key, one synced
// batch per received batch, in order) before its ack, as a receiver that keeps what it applied must.
// With BARE_SYNC_WORK=1 as well (run under `--import tsx`), it is the work floor of a zone's apply:
// the durable floor plus the work every applied entry needs and nothing else: mesh-cp's own checks of
// the resource (`validateBody`: its zod schema, type, mesh and name), the stored resource (`toWire`),
// the hash-chained log entry (`sealEntry`: its JSON and sha256), stored instead of the bare resource,
// and the resource kept in a Map by kind, mesh and name. No decisions against current state, no
// ordered views, no insights, no snapshots: what mesh-cp's zone does beyond this is its own cost.
// Usage: BARE_SYNC_BATCH=n BARE_SYNC_WINDOW=n node bench/baselines/bare-sync-client.mjs <port> <ca.pem> [<data dir>]
import { Buffer } from 'node:buffer';
import { readFileSync } from 'node:fs';
import * as grpc from '@grpc/grpc-js';
import { loadSync } from '@grpc/proto-loader';
import { ClassicLevel } from 'classic-level';

const [port, caFile, dataDir] = process.argv.slice(2);
const db = dataDir ? new ClassicLevel(dataDir, { valueEncoding: 'utf8' }) : undefined;
await db?.open();
const work = db && process.env.BARE_SYNC_WORK === '1' ? await workFloor() : undefined;

/** The per-entry work of a zone's apply, with mesh-cp's own functions (loaded through tsx). */
async function workFloor() {
  const { registry } = await import('../../src/resources/registry.ts');
  const { validateBody } = await import('../../src/resources/validate.ts');
  const { toWire } = await import('../../src/app/decide.ts');
  const { sealEntry, GENESIS_HASH } = await import('../../src/events/hash.ts');
  const actor = { name: 'zone', groups: [], address: 'sync' };
  const stored = new Map();
  let revision = 0;
  let prevHash = GENESIS_HASH;
  return (e, resource) => {
    const desc = registry.get(e.kind);
    const mesh = e.mesh || undefined;
    const checked = validateBody(desc, resource, { mesh, name: e.name });
    if (!checked.ok) throw new Error(`invalid ${e.kind} ${e.name}`);
    const wire = toWire(desc, mesh, e.name, resource.creationTime, resource.modificationTime, checked.spec);
    const key = `${e.kind}\0${e.mesh}\0${e.name}`;
    const operation = stored.has(key) ? 'update' : 'create';
    stored.set(key, wire);
    revision += 1;
    const time = new Date().toISOString();
    const input = { kind: e.kind, mesh, name: e.name, operation, resource: wire, actor, origin: 'global' };
    const sealed = sealEntry(input, revision, time, prevHash);
    prevHash = sealed.entry.hash;
    return sealed.json;
  };
}
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
/** Writes one batch durably after the one before (acks go in order). */
let written = Promise.resolve();
const persist = (entries) => {
  written = written.then(() => {
    const ops = db.batch();
    for (const e of entries) {
      const key = String(e.revision).padStart(16, '0');
      ops.put(`e!${key}`, e.json);
      ops.put(`r!${e.kind}!${e.mesh}!${e.name}!${key}`, '');
    }
    return ops.write({ sync: true });
  });
  return written;
};
down.on('data', (m) => {
  if (m.body !== 'batch') return;
  const ack = () => down.write({ ack: { seq: m.batch.seq, revision: m.batch.toRevision, rejected: [] } });
  const entries = m.batch.entries.map((e) => {
    const text = e.resource.toString('utf8');
    const resource = JSON.parse(text);
    const json = work ? work(e, resource) : text;
    return { revision: e.revision, kind: e.kind, mesh: e.mesh, name: e.name, json };
  });
  if (db) void persist(entries).then(ack);
  else ack();
});
down.on('error', () => process.exit(0));
down.write({ hello: { zone: 'bare' } });

// mesh-cp's batch size and window, passed by bench/baselines/bare-sync.ts (its DEFAULT_LIMITS).
const BATCH = Number(process.env.BARE_SYNC_BATCH);
const WINDOW = Number(process.env.BARE_SYNC_WINDOW);
if (!(BATCH > 0 && WINDOW > 0)) throw new Error('BARE_SYNC_BATCH and BARE_SYNC_WINDOW must be set');
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
