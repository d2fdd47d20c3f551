// The floor of a durable PUT on PostgreSQL (issue 19: "the same batch inserted with `pg`, nothing
// else"): bare fastify parsing and validating the body with the same schema as the Map baseline
// (bench/baselines/dataplane-put.ts), then, per group commit, one statement on one `pg` connection
// (its own transaction) that moves the head row, inserts the batch's rows (revision, kind, mesh,
// name, sha256-chained entry JSON) into mesh-cp's own tables (created by its migration) and
// notifies, as mesh-cp's append does, before it answers. The LevelDB analogue is
// bench/baselines/durable-floor.ts. No auth, hooks, projections, meta values or audit line: what
// is left of mesh-cp's gap to this is mesh-cp's, not PostgreSQL's.
// Usage: node --import tsx bench/baselines/pg-floor.ts <database>
import { hash } from 'node:crypto';

import Fastify from 'fastify';
import pg from 'pg';

import { GENESIS_HASH } from '../../src/events/hash.js';
import { migratePgSchema } from '../../src/events/pg-schema.js';
import { pgClientConfig } from '../lib/postgres.js';
import { createDataplaneMap } from './dataplane-put.js';

const database = process.argv[2];
if (!database) throw new Error('usage: pg-floor.ts <database>');
const client = new pg.Client(pgClientConfig(database));
await client.connect();
await migratePgSchema(client);

// mesh-cp's append (src/events/pg-log.ts) without its meta values: the head row moves from the
// revision before the batch to its last (the row lock that serializes writers), the entries are
// inserted, and the other instances are notified (at commit) on a channel of the floor's own.
const APPEND_SQL = `
  WITH head AS (
    UPDATE mesh_log_head SET revision = $1, hash = $2 WHERE id = 1 AND revision = $3
    RETURNING revision
  ), entries AS (
    INSERT INTO mesh_log_entries (revision, kind, mesh, name, entry)
    SELECT * FROM unnest($4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[])
    WHERE EXISTS (SELECT 1 FROM head)
  )
  SELECT revision, pg_notify('mesh_bench_floor', revision::text) FROM head`;

const dataplanes = createDataplaneMap();
let revision = 0;
let prevHash = GENESIS_HASH;
let queue: Array<{ revision: number; name: string; json: string; hash: string; done: () => void }> = [];
let writing = false;

/** One statement (one transaction) for everything queued while the previous one was written. */
async function flush(): Promise<void> {
  if (writing || queue.length === 0) return;
  writing = true;
  const groups = queue;
  queue = [];
  const last = groups[groups.length - 1];
  const { rows } = await client.query(APPEND_SQL, [
    last.revision,
    last.hash,
    groups[0].revision - 1,
    groups.map((g) => g.revision),
    groups.map(() => 'Dataplane'),
    groups.map(() => 'default'),
    groups.map((g) => g.name),
    groups.map((g) => g.json),
  ]);
  if (rows.length !== 1) throw new Error(`the head is no longer at revision ${groups[0].revision - 1}`);
  writing = false;
  for (const g of groups) g.done();
  void flush();
}

const app = Fastify();
app.put('/dp/:name', async (req, reply) => {
  const name = (req.params as { name: string }).name;
  const put = dataplanes.put(name, req.body);
  if (!put) return reply.code(400).send({ error: 'invalid' });
  revision += 1;
  const body = JSON.stringify({
    revision,
    time: new Date().toISOString(),
    kind: 'Dataplane',
    mesh: 'default',
    name,
    operation: put.created ? 'create' : 'update',
    resource: put.spec,
    prevHash,
  });
  prevHash = hash('sha256', prevHash + body, 'hex');
  const json = `${body.slice(0, -1)},"hash":"${prevHash}"}`;
  await new Promise<void>((done) => {
    queue.push({ revision, name, json, hash: prevHash, done });
    if (!writing) queueMicrotask(() => void flush());
  });
  return reply.code(put.created ? 201 : 200).send(req.body);
});

await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(
  `${JSON.stringify({ msg: 'ready', port: (app.server.address() as { port: number }).port })}\n`,
);
process.on('SIGTERM', () => {
  void app.close().then(() => client.end().then(() => process.exit(0)));
});
