// Baseline servers for request figures: bare fastify over plain Maps, same objects as ours.
import Fastify from 'fastify';
import { dataplane } from '../fixtures.js';
import { createDataplaneMap } from './dataplane-put.js';

const n = Number(process.argv[2] ?? 100000);
const byName = new Map<string, Record<string, unknown>>();
const names: string[] = [];
for (let i = 0; i < n; i++) {
  const dp = dataplane(i);
  byName.set(dp.name, dp);
  names.push(dp.name);
}
names.sort();
const overview = (dp: Record<string, unknown>) => ({
  type: 'DataplaneOverview',
  mesh: dp.mesh,
  name: dp.name,
  creationTime: dp.creationTime,
  modificationTime: dp.modificationTime,
  dataplane: { networking: dp.networking },
  dataplaneInsight: {},
});
const team5 = names.filter(
  (x) =>
    (byName.get(x) as { networking: { inbound: Array<{ tags: Record<string, string> }> } }).networking
      .inbound[0].tags.team === 't5',
);
const dataplanes = createDataplaneMap();

const app = Fastify();
// GET one: the same object from a Map.
app.get('/dp/:name', async (req, reply) => {
  const dp = byName.get((req.params as { name: string }).name);
  if (!dp) return reply.code(404).send({});
  return dp;
});
// A page of 100 at an offset, stringified per request.
app.get('/page', async (req) => {
  const offset = Number((req.query as { offset?: string }).offset ?? 0);
  const items = names.slice(offset, offset + 100).map((x) => byName.get(x));
  return JSON.stringify({ total: n, items, next: null });
});
// The same 100 overviews a 1% tag filter pages, stringified per request.
app.get('/overviews', async () => {
  const items = team5.slice(0, 100).map((x) => overview(byName.get(x) as Record<string, unknown>));
  return JSON.stringify({ total: team5.length, items, next: null });
});
// PUT: parse, validate with the same schema, store in a Map.
app.put('/dp/:name', async (req, reply) => {
  const put = dataplanes.put((req.params as { name: string }).name, req.body);
  if (!put) return reply.code(400).send({ error: 'invalid' });
  return reply.code(put.created ? 201 : 200).send(req.body);
});
await app.listen({ port: 0, host: '127.0.0.1' });
process.stdout.write(
  `${JSON.stringify({ msg: 'ready', port: (app.server.address() as { port: number }).port })}\n`,
);
process.on('SIGTERM', () => {
  void app.close().then(() => process.exit(0));
});
