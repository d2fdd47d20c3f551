// The floor of a durable PUT on this stack (issue 3: "raw classic-level group-committed puts"):
// bare fastify parsing and validating the body with the same schema as the Map baseline
// (bench/baselines/dataplane-put.ts), then appending it to a sha256-chained log in classic-level
// with one synced batch per group commit (entry and history index key, as mesh-cp stores them) before it answers. No auth, no
// hooks, no projections, no audit line: what is left of mesh-cp's gap to the Map baseline after
// this one is mesh-cp's own request path, not the durable log.
// Usage: node --import tsx bench/baselines/durable-floor.ts <data dir>
import { hash } from 'node:crypto';

import { ClassicLevel } from 'classic-level';
import Fastify from 'fastify';

import { createDataplaneMap } from './dataplane-put.js';

const dir = process.argv[2];
if (!dir) throw new Error('usage: durable-floor.ts <data dir>');
const db = new ClassicLevel<string, string>(dir, { valueEncoding: 'utf8' });
await db.open();

const dataplanes = createDataplaneMap();
let revision = 0;
let prevHash = '0'.repeat(64);
let queue: Array<{ revision: number; name: string; json: string; done: () => void }> = [];
let writing = false;

/** One synced batch for everything queued while the previous one was written. */
async function flush(): Promise<void> {
  if (writing || queue.length === 0) return;
  writing = true;
  const groups = queue;
  queue = [];
  const batch = db.batch();
  for (const g of groups) {
    const key = String(g.revision).padStart(16, '0');
    batch.put(`e!${key}`, g.json);
    batch.put(`r!Dataplane!default!${g.name}!${key}`, '');
  }
  batch.put('m!head', String(groups[groups.length - 1].revision));
  await batch.write({ sync: true });
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
    queue.push({ revision, name, json, done });
    if (!writing) queueMicrotask(() => void flush());
  });
  return reply.code(put.created ? 201 : 200).send(req.body);
});

await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(
  `${JSON.stringify({ msg: 'ready', port: (app.server.address() as { port: number }).port })}\n`,
);
process.on('SIGTERM', () => {
  void app.close().then(() => db.close().then(() => process.exit(0)));
});
