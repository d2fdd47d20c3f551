// The request side the durable floors share (bench/baselines/durable-floor.ts on classic-level,
// pg-floor.ts on PostgreSQL): bare fastify parsing and validating each PUT with the same schema as
// the Map baseline (dataplane-put.ts), sealing it as a sha256-chained entry, and answering once
// the group commit holding it is written. Only `write`, the store's part, differs.
import { hash } from 'node:crypto';

import Fastify from 'fastify';

import { createDataplaneMap } from './dataplane-put.js';

/** One sealed PUT waiting for its batch. */
export interface SealedPut {
  revision: number;
  name: string;
  /** The entry's JSON, as hashed, with its hash. */
  json: string;
  hash: string;
}

/**
 * Serves `PUT /dp/:name` on a free port of 127.0.0.1 and prints the ready line. `write` stores one
 * batch durably (everything queued while the previous one was written, in revision order);
 * `close` releases the store on SIGTERM.
 */
export async function serveChainedPuts(store: {
  write(batch: SealedPut[]): Promise<void>;
  close(): Promise<void>;
}): Promise<void> {
  const dataplanes = createDataplaneMap();
  let revision = 0;
  let prevHash = '0'.repeat(64);
  let queue: Array<SealedPut & { done: () => void }> = [];
  let writing = false;

  const flush = async (): Promise<void> => {
    if (writing || queue.length === 0) return;
    writing = true;
    const groups = queue;
    queue = [];
    await store.write(groups);
    writing = false;
    for (const g of groups) g.done();
    void flush();
  };

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
    void app.close().then(() => store.close().then(() => process.exit(0)));
  });
}
