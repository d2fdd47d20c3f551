import { join } from 'node:path';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startListeningPlane, tempDir } from '../helpers/control-plane.js';
import { meshctl } from '../helpers/meshctl.js';
import type { PrivatePostgres } from '../helpers/private-postgres.js';
import { startPrivatePostgres } from '../helpers/private-postgres.js';
import type { TcpForwarder } from '../helpers/tcp-forwarder.js';
import { startTcpForwarder } from '../helpers/tcp-forwarder.js';

// A write on PostgreSQL whose commit reply is lost may be stored: its answer must not be the 503 of
// a write refused for sure (the database down before it), which is never stored. A private cluster
// (it is stopped here) behind a TCP forwarder (which loses the reply of one commit); the control
// plane in-process, listening, and meshctl as a process (npm test builds dist first).

/** Whether a PostgreSQL answer so far ends with ReadyForQuery ('Z', length 5, a status byte): whole. */
function endsWithReadyForQuery(answer: Buffer): boolean {
  const at = answer.length - 6;
  return at >= 0 && answer[at] === 0x5a && answer.readInt32BE(at + 1) === 5;
}

const mesh = (name: string) => ({ type: 'Mesh', name });

describe('PostgreSQL: a write whose outcome is unknown is not a refusal', () => {
  let cluster: PrivatePostgres;
  let forwarder: TcpForwarder;
  let cp: ControlPlane;
  const dir = tempDir('pg-write-outcome-');
  const config = join(dir.path, 'meshctl.yaml');

  beforeAll(async () => {
    cluster = await startPrivatePostgres();
    forwarder = await startTcpForwarder([cluster.port]);
    cp = await startListeningPlane({
      MESH_STORE_TYPE: 'postgres',
      MESH_STORE_POSTGRES_HOST: '127.0.0.1',
      MESH_STORE_POSTGRES_PORT: String(forwarder.port),
      MESH_STORE_POSTGRES_USER: cluster.user,
      MESH_STORE_POSTGRES_DB_NAME: 'postgres',
    });
    const address = `http://127.0.0.1:${cp.ports.api}`;
    const added = await meshctl(['config', 'control-planes', 'add', '--name', 'pg', '--address', address], {
      config,
    });
    expect(added.code, added.stderr).toBe(0);
  }, 120_000);

  afterAll(async () => {
    await cp?.close();
    await forwarder?.close();
    await cluster?.remove();
    dir.cleanup();
  });

  const put = (name: string) => cp.app.inject({ method: 'PUT', url: `/meshes/${name}`, payload: mesh(name) });

  /** Waits until the log takes writes again (it reconnects by itself). */
  async function writable(): Promise<void> {
    while (cp.log.writeFailure() !== undefined) await new Promise((resolve) => setTimeout(resolve, 20));
  }

  it('answers 504 "Write outcome unknown" when the commit reply is lost; a read then shows the write landed', async () => {
    const lost = forwarder.loseReplyTo('"name":"lost-reply"', endsWithReadyForQuery);
    const res = await put('lost-reply');
    await lost;
    expect(res.statusCode).toBe(504);
    const body = res.json() as { title: string; details: string };
    expect(body.title).toBe('Write outcome unknown');
    expect(body.details).toMatch(/may have been stored or not/);
    expect(body.details).toMatch(/read the resource \(GET it: its ETag/);
    expect(res.headers['content-type']).toMatch(/^application\/json/);

    // What the answer tells the client to do: read the resource. The write did land (the log reads
    // it back once it reconnects), exactly once.
    // Once the log takes writes again, the read is final.
    await writable();
    const got = await cp.app.inject({ url: '/meshes/lost-reply' });
    expect(got.statusCode).toBe(200);
    const history = (await cp.app.inject({ url: '/meshes/lost-reply/_history' })).json() as {
      items: { revision: number; operation: string }[];
    };
    expect(history.items.map((i) => i.operation)).toEqual(['create']);
    expect(got.headers.etag).toBe(`"${history.items[0].revision}"`);
    expect((await put('after-lost-reply')).statusCode).toBe(201);
  }, 60_000);

  it('meshctl says the outcome is unknown and what to do, and exits 1', async () => {
    const lost = forwarder.loseReplyTo('"name":"lost-by-meshctl"', endsWithReadyForQuery);
    const run = await meshctl(['apply', '-f', '-'], { config, stdin: 'type: Mesh\nname: lost-by-meshctl\n' });
    await lost;
    expect(run.code).toBe(1);
    expect(run.stderr).toMatch(/Write outcome unknown: .*may have been stored or not.*\(HTTP 504\)/s);
    await writable();
  }, 60_000);

  it('still answers 503 "Event log unavailable" when the database is down before the write: nothing is stored', async () => {
    await cluster.stop({ mode: 'fast' });
    const res = await put('refused');
    expect(res.statusCode).toBe(503);
    const body = res.json() as { title: string; details: string };
    expect(body.title).toBe('Event log unavailable');
    expect(body.details).toMatch(/^event log cannot write: /);
    await cluster.start();
    await writable();
    expect((await put('after-restart')).statusCode).toBe(201);
    expect((await cp.app.inject({ url: '/meshes/refused' })).statusCode).toBe(404);
    expect((await cp.app.inject({ url: '/meshes/refused/_history' })).statusCode).toBe(404);
  }, 120_000);
});
