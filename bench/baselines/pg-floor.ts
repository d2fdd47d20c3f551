// The floor of a durable PUT on PostgreSQL (issue 19: "the same batch inserted with `pg`, nothing
// else"): bare fastify parsing and validating the body with the same schema as the Map baseline
// (bench/baselines/dataplane-put.ts), then, per group commit, one statement on one `pg` connection
// (its own transaction) that moves the head row, inserts the batch's rows (revision, kind, mesh,
// name, sha256-chained entry JSON) into mesh-cp's own tables (created by its migration) and
// notifies, as mesh-cp's append does, before it answers. The LevelDB analogue is
// bench/baselines/durable-floor.ts. No auth, hooks, projections, meta values or audit line: what
// is left of mesh-cp's gap to this is mesh-cp's, not PostgreSQL's.
// Usage: node --import tsx bench/baselines/pg-floor.ts <database>
import pg from 'pg';

import { migratePgSchema } from '../../src/events/pg-schema.js';
import { pgClientConfig } from '../lib/postgres.js';
import { serveChainedPuts } from './chained-put-server.js';

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

await serveChainedPuts({
  /** One statement (one transaction) per batch. */
  async write(groups) {
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
  },
  close: () => client.end(),
});
