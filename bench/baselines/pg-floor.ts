// The floor of a durable PUT on PostgreSQL (the same batch inserted with `pg`, nothing else): bare
// fastify parsing and validating the body with the same schema as the Map baseline
// (bench/baselines/dataplane-put.ts), then, per group commit, mesh-cp's own append statement
// (`pgAppendQuery` of src/events/pg-log.ts: one statement, its own transaction, prepared once) on
// one `pg` connection: it moves the head row, inserts the batch's rows (revision, kind, mesh, name,
// sha256-chained entry JSON) into mesh-cp's tables (created by its migration) and notifies, before
// it answers. The LevelDB analogue is bench/baselines/durable-floor.ts. No auth, hooks,
// projections, meta values or audit line: what is left of mesh-cp's gap to this is mesh-cp's, not
// PostgreSQL's.
// Usage: node --import tsx bench/baselines/pg-floor.ts <database>
import pg from 'pg';

import { pgAppendQuery } from '../../src/events/pg-log.js';
import { migratePgSchema } from '../../src/events/pg-schema.js';
import { pgClientConfig } from '../lib/postgres.js';
import { serveChainedPuts } from './chained-put-server.js';

const database = process.argv[2];
if (!database) throw new Error('usage: pg-floor.ts <database>');
const client = new pg.Client(pgClientConfig(database));
await client.connect();
await migratePgSchema(client);

await serveChainedPuts({
  /** One statement (one transaction) per batch. */
  async write(groups) {
    const last = groups[groups.length - 1];
    const { rows } = await client.query(
      pgAppendQuery({
        before: groups[0].revision - 1,
        head: last.revision,
        lastHash: last.hash,
        kinds: groups.map(() => 'Dataplane'),
        meshes: groups.map(() => 'default'),
        names: groups.map((g) => g.name),
        json: groups.map((g) => g.json),
      }),
    );
    if (rows.length !== 1) throw new Error(`the head is no longer at revision ${groups[0].revision - 1}`);
  },
  close: () => client.end(),
});
