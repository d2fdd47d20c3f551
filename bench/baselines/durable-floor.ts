// The floor of a durable PUT on this stack (raw classic-level puts, group-committed):
// bare fastify parsing and validating the body with the same schema as the Map baseline
// (bench/baselines/dataplane-put.ts), then appending it to a sha256-chained log in classic-level
// with one synced batch per group commit (entry and history index key, as mesh-cp stores them) before it answers. No auth, no
// hooks, no projections, no audit line: what is left of mesh-cp's gap to the Map baseline after
// this one is mesh-cp's own request path, not the durable log.
// Usage: node --import tsx bench/baselines/durable-floor.ts <data dir>
import { ClassicLevel } from 'classic-level';

import { serveChainedPuts } from './chained-put-server.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: durable-floor.ts <data dir>');
const db = new ClassicLevel<string, string>(dir, { valueEncoding: 'utf8' });
await db.open();

await serveChainedPuts({
  /** One synced batch: each entry and its history index key, and the head. */
  async write(groups) {
    const batch = db.batch();
    for (const g of groups) {
      const key = String(g.revision).padStart(16, '0');
      batch.put(`e!${key}`, g.json);
      batch.put(`r!Dataplane!default!${g.name}!${key}`, '');
    }
    batch.put('m!head', String(groups[groups.length - 1].revision));
    await batch.write({ sync: true });
  },
  close: () => db.close(),
});
