// Baseline for start-up: a bare process that loads fastify, level and grpc-js and listens.
import Fastify from 'fastify';
import { Level } from 'level';
import * as grpc from '@grpc/grpc-js';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const db = new Level(mkdtempSync(join(tmpdir(), 'bare-')), { valueEncoding: 'utf8' });
await db.open();
const app = Fastify();
app.get('/', async () => ({ ok: true }));
await app.listen({ port: 0, host: '127.0.0.1' });
void grpc.Server;
process.stdout.write(`${JSON.stringify({ msg: 'ready', port: app.server.address().port })}\n`);
process.on('SIGTERM', async () => {
  await app.close();
  await db.close();
  process.exit(0);
});
