// The floor of pg-propagation: a bare `pg` LISTEN/NOTIFY round trip. One connection inserts each
// entry row (mesh-cp's table, same body as the write of propagation-worker.mjs) and notifies in the
// same statement (its own transaction: the notification leaves at commit), at the same rate; another
// connection LISTENs. Prints one JSON line {lags}: for each insert, ms from sending it to the other
// connection receiving its notification (null: none within 5 s). With `warmupSeconds`, the same
// untimed first, as the worker does.
// Usage: node --import tsx bench/baselines/pg-notify.ts <file holding JSON {database, rate, warmupSeconds?, bodies: string[]}>
import { readFileSync } from 'node:fs';

import pg from 'pg';

import { migratePgSchema } from '../../src/events/pg-schema.js';
import { pgClientConfig } from '../lib/postgres.js';

const o = JSON.parse(readFileSync(process.argv[2], 'utf8')) as {
  database: string;
  rate: number;
  warmupSeconds?: number;
  bodies: string[];
};
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
const CHANNEL = 'mesh_bench';
const INSERT_NOTIFY = `WITH e AS (
    INSERT INTO mesh_log_entries (revision, kind, mesh, name, entry) VALUES ($1, 'Dataplane', 'default', $2, $3)
    RETURNING revision
  ) SELECT pg_notify('${CHANNEL}', revision::text) FROM e`;

const writer = new pg.Client(pgClientConfig(o.database));
const listener = new pg.Client(pgClientConfig(o.database));
await writer.connect();
await listener.connect();
await migratePgSchema(writer);
const received = new Map<number, number>();
listener.on('notification', (n) => received.set(Number(n.payload), performance.now()));
await listener.query(`LISTEN ${CHANNEL}`);
// Earlier runs on the same database left their rows.
const { rows } = await writer.query<{ last: string | null }>(
  'SELECT max(revision) AS last FROM mesh_log_entries',
);
let revision = Number(rows[0].last ?? 0);

/** Inserts and notifies `n` entries at `o.rate`; resolves with each one's revision and send time. */
async function insertAtRate(n: number): Promise<Array<{ revision: number; sent: number }>> {
  const start = performance.now();
  const writes: Array<Promise<{ revision: number; sent: number }>> = [];
  for (let i = 0; i < n; i++) {
    const wait = start + (i * 1000) / o.rate - performance.now();
    if (wait > 0) await sleep(wait);
    revision += 1;
    const r = revision;
    const body = o.bodies[i % o.bodies.length];
    const name = (JSON.parse(body) as { name: string }).name;
    const sent = performance.now();
    writes.push(writer.query(INSERT_NOTIFY, [r, name, body]).then(() => ({ revision: r, sent })));
  }
  return Promise.all(writes);
}

async function untilReceived(writes: Array<{ revision: number }>): Promise<void> {
  const end = performance.now() + 5000;
  while (performance.now() < end && !writes.every((w) => received.has(w.revision))) await sleep(5);
}

if ((o.warmupSeconds ?? 0) > 0)
  await untilReceived(await insertAtRate(Math.round(o.rate * (o.warmupSeconds ?? 0))));
const writes = await insertAtRate(o.bodies.length);
await untilReceived(writes);
await writer.end();
await listener.end();
process.stdout.write(
  `${JSON.stringify({
    lags: writes.map((w) => {
      const at = received.get(w.revision);
      return at === undefined ? null : at - w.sent;
    }),
  })}\n`,
);
