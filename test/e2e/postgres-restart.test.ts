import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import type { PrivatePostgres, StopMode } from '../helpers/private-postgres.js';
import { startPrivatePostgres } from '../helpers/private-postgres.js';
import { meshCp, startMeshCp } from '../helpers/process.js';
import type { CpProcess } from '../helpers/process.js';

/** Writers at once, each on resources of its own (so each resource's writes have one order). */
const CLIENTS = 6;
const RESOURCES_PER_CLIENT = 4;
/** Acknowledged writes before the restart, and in a row after the outage, that the load waits for. */
const ACKED_BEFORE = 150;
const ACKED_AFTER = 100;
/** How long the load may wait for those (a loaded CI machine is slow; nothing here measures speed). */
const LOAD_WAIT_MS = 60_000;

/** One PUT of the load: `seq` is unique over the run and is the route's weight, so content names its write. */
interface Attempt {
  name: string;
  seq: number;
  status: number;
  /** The revision of the ETag of a 2xx answer. */
  revision?: number;
  /** The body of an error answer. */
  body?: unknown;
}

function routeBody(name: string, seq: number): string {
  return JSON.stringify({
    type: 'TrafficRoute',
    mesh: 'default',
    name,
    sources: [{ match: { 'mesh.io/service': '*' } }],
    destinations: [{ match: { 'mesh.io/service': 'backend' } }],
    conf: { split: [{ weight: seq, destination: { 'mesh.io/service': 'backend' } }] },
  });
}

const weightOf = (resource: unknown): number =>
  (resource as { conf: { split: { weight: number }[] } }).conf.split[0].weight;

/** Index of the last item that passes `test`, or -1 (the project's lib predates `findLastIndex`). */
function lastIndexWhere<T>(list: readonly T[], test: (item: T) => boolean): number {
  for (let i = list.length - 1; i >= 0; i -= 1) if (test(list[i])) return i;
  return -1;
}

const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * PUTs from {@link CLIENTS} concurrent clients until stopped, each cycling over its own resources
 * and recording every answer. After a refusal a client pauses a little, so that an outage does not
 * turn into a busy loop of 503s on a shared machine.
 */
function startLoad(apiPort: number) {
  const attempts: Attempt[] = [];
  let seq = 0;
  let stopping = false;
  const wakers = new Set<() => void>();

  async function client(index: number): Promise<void> {
    for (let round = 0; !stopping; round += 1) {
      const name = `c${index}-r${round % RESOURCES_PER_CLIENT}`;
      seq += 1;
      const attempt: Attempt = { name, seq, status: 0 };
      try {
        const res = await fetch(`http://127.0.0.1:${apiPort}/meshes/default/traffic-routes/${name}`, {
          method: 'PUT',
          headers: { 'content-type': 'application/json' },
          body: routeBody(name, attempt.seq),
        });
        attempt.status = res.status;
        if (res.ok) {
          attempt.revision = Number(JSON.parse(res.headers.get('etag') ?? 'null'));
          await res.body?.cancel();
        } else {
          attempt.body = await res.json();
        }
      } catch (error) {
        attempt.body = String(error);
      }
      attempts.push(attempt);
      for (const wake of wakers) wake();
      if (attempt.status === 503) await sleep(25);
    }
  }

  const clients = Array.from({ length: CLIENTS }, (_, index) => client(index));
  return {
    attempts,
    /** Resolves once `done()` holds after an answer; rejects with `what` after {@link LOAD_WAIT_MS}. */
    until(what: string, done: () => boolean): Promise<void> {
      return new Promise((resolve, reject) => {
        const check = (): void => {
          if (!done()) return;
          clearTimeout(timer);
          wakers.delete(check);
          resolve();
        };
        const timer = setTimeout(() => {
          wakers.delete(check);
          const statuses = attempts.reduce<Record<number, number>>(
            (counts, a) => ({ ...counts, [a.status]: (counts[a.status] ?? 0) + 1 }),
            {},
          );
          reject(
            new Error(
              `load: no ${what} within ${LOAD_WAIT_MS} ms; answers so far ${JSON.stringify(statuses)}`,
            ),
          );
        }, LOAD_WAIT_MS);
        wakers.add(check);
        check();
      });
    },
    async stop(): Promise<void> {
      stopping = true;
      await Promise.all(clients);
    },
  };
}

/** The acknowledged and the refused writes of each resource, in the order its client made them. */
function byResource(attempts: readonly Attempt[]): Map<string, Attempt[]> {
  const resources = new Map<string, Attempt[]>();
  for (const attempt of [...attempts].sort((a, b) => a.seq - b.seq)) {
    resources.set(attempt.name, [...(resources.get(attempt.name) ?? []), attempt]);
  }
  return resources;
}

/**
 * The weights a resource may hold now: its last acknowledged write, or a write refused after it
 * (a batch whose commit reached PostgreSQL but whose reply was lost may stay in the log, or not).
 */
function allowedNow(writes: readonly Attempt[]): number[] {
  const lastAcked = lastIndexWhere(writes, (a) => a.revision !== undefined);
  return writes.slice(Math.max(lastAcked, 0)).map((a) => a.seq);
}

/**
 * Issue 19, faults: PostgreSQL restarted under write load. The cluster is a private one (the
 * machine's shared PostgreSQL serves other tests meanwhile); mesh-cp is the real process, never
 * restarted here, with writes from several clients in flight when `pg_ctl restart` runs.
 */
describe('mesh-cp on PostgreSQL restarted under write load (issue 19, faults)', () => {
  let cluster: PrivatePostgres;
  const started: CpProcess[] = [];
  beforeAll(async () => {
    cluster = await startPrivatePostgres();
  }, 120_000);
  afterEach(() => {
    for (const cp of started.splice(0)) if (cp.proc.exitCode === null) cp.proc.kill('SIGKILL');
  });
  afterAll(() => cluster?.remove(), 120_000);

  /** Runs `sql` on database `name` of the private cluster. */
  async function onCluster<Row extends pg.QueryResultRow>(
    name: string,
    sql: string,
    params: unknown[] = [],
  ): Promise<Row[]> {
    const client = new pg.Client({
      host: cluster.host,
      port: cluster.port,
      user: cluster.user,
      database: name,
    });
    await client.connect();
    try {
      return (await client.query<Row>(sql, params)).rows;
    } finally {
      await client.end();
    }
  }

  /** The env of `mesh-cp run` and `mesh-cp log` on database `name` of the private cluster. */
  function storeEnv(name: string): Record<string, string> {
    return {
      MESH_STORE_TYPE: 'postgres',
      MESH_STORE_POSTGRES_HOST: cluster.host,
      MESH_STORE_POSTGRES_PORT: String(cluster.port),
      MESH_STORE_POSTGRES_USER: cluster.user,
      MESH_STORE_POSTGRES_DB_NAME: name,
    };
  }

  it.each<StopMode>(['fast', 'immediate'])(
    'pg_ctl restart -m %s: writes in flight are 503 with the reason, none acknowledged is lost, writes resume without a restart',
    async (mode) => {
      const database = `mesh_restart_${mode}`;
      await onCluster('postgres', `CREATE DATABASE ${database}`);
      const cp = startMeshCp(storeEnv(database));
      started.push(cp);
      const { apiPort, diagnosticsPort } = await cp.ready;
      const ready = async (): Promise<{ status: number; body: { status: string; reason?: string } }> => {
        const res = await fetch(`http://127.0.0.1:${diagnosticsPort}/ready`);
        return { status: res.status, body: (await res.json()) as { status: string; reason?: string } };
      };

      const load = startLoad(apiPort);
      const { attempts } = load;
      const acked = (from = 0): number => attempts.slice(from).filter((a) => a.revision !== undefined).length;
      // /ready is sampled all along: whenever it says unavailable, it says why.
      const readiness: Awaited<ReturnType<typeof ready>>[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          readiness.push(await ready());
          await sleep(20);
        }
      })();
      try {
        await load.until(`${ACKED_BEFORE} acknowledged writes`, () => acked() >= ACKED_BEFORE);
        const restartFrom = attempts.length;
        await cluster.restart({ mode });
        await load.until(`refused write after the restart`, () =>
          attempts.slice(restartFrom).some((a) => a.status === 503),
        );
        await load.until(`${ACKED_AFTER} acknowledged writes after the last refusal`, () => {
          const last = lastIndexWhere(attempts, (a) => a.status === 503);
          return acked(last + 1) >= ACKED_AFTER;
        });
      } finally {
        sampling = false;
        await Promise.all([load.stop(), sampler]);
      }

      // Every answer is an acknowledgement or a 503 that says the event log cannot write, and why.
      const unexpected = attempts.filter((a) => a.status !== 503 && a.revision === undefined);
      expect(unexpected).toEqual([]);
      const refused = attempts.filter((a) => a.status === 503);
      expect(refused.length).toBeGreaterThan(0);
      for (const { body } of refused) {
        expect(body).toEqual({
          title: 'Event log unavailable',
          details: expect.stringMatching(/^event log cannot write: ./) as string,
        });
      }
      for (const sample of readiness.filter(({ status }) => status !== 200)) {
        expect(sample).toMatchObject({ status: 503, body: { status: 'unavailable' } });
        expect(sample.body.reason).toMatch(/^event log cannot write: /);
      }
      expect(await ready()).toMatchObject({ status: 200, body: { status: 'ready' } });

      // The process said once that writes fail and once that they work again, in that order.
      const failed = cp.lines.filter((line) =>
        String(line.msg).endsWith('; refusing writes (503) and retrying'),
      );
      const again = cp.lines.filter((line) => line.msg === 'event log writes again; accepting writes');
      expect(failed).toHaveLength(1);
      expect(failed[0]).toMatchObject({ level: 50, msg: expect.stringMatching(/^event log cannot write: /) });
      expect(again).toHaveLength(1);
      expect(again[0]).toMatchObject({ level: 30, attempts: expect.any(Number), downMs: expect.any(Number) });
      expect(cp.lines.indexOf(failed[0])).toBeLessThan(cp.lines.indexOf(again[0]));

      // mesh-cp (not restarted) serves every acknowledged write: the current value is the last
      // acknowledged one or a refused one after it, and the history holds each acknowledged revision.
      const resources = byResource(attempts);
      expect(resources.size).toBe(CLIENTS * RESOURCES_PER_CLIENT);
      for (const [name, writes] of resources) {
        const url = `http://127.0.0.1:${apiPort}/meshes/default/traffic-routes/${name}`;
        const current = await fetch(url);
        expect(current.status).toBe(200);
        expect(allowedNow(writes)).toContain(weightOf(await current.json()));
        const history: { revision: number; resource: unknown }[] = [];
        for (let total = 1; history.length < total;) {
          const page = (await (await fetch(`${url}/_history?size=1000&offset=${history.length}`)).json()) as {
            total: number;
            items: { revision: number; resource: unknown }[];
          };
          total = page.total;
          history.push(...page.items);
        }
        const seen = history.map((item) => ({ revision: item.revision, seq: weightOf(item.resource) }));
        for (const write of writes.filter((a) => a.revision !== undefined)) {
          expect(seen).toContainEqual({ revision: write.revision, seq: write.seq });
        }
        // Nothing else: each entry is one write of this resource, at most once.
        const tried = new Set(writes.map((a) => a.seq));
        expect(seen.filter(({ seq }) => !tried.has(seq))).toEqual([]);
        expect(new Set(seen.map(({ seq }) => seq)).size).toBe(seen.length);
      }

      cp.proc.kill('SIGTERM');
      const exit = await cp.exited;
      expect(exit.code, cp.stderr()).toBe(0);

      // PostgreSQL itself holds each acknowledged write at its revision, and the chain verifies.
      const rows = await onCluster<{ revision: string; name: string; entry: string }>(
        database,
        `SELECT revision, name, entry FROM mesh_log_entries WHERE kind = 'TrafficRoute' AND name = ANY($1)`,
        [[...resources.keys()]],
      );
      const stored = new Map(
        rows.map((row) => [
          Number(row.revision),
          { name: row.name, seq: weightOf((JSON.parse(row.entry) as { resource: unknown }).resource) },
        ]),
      );
      for (const write of attempts.filter((a) => a.revision !== undefined)) {
        expect(stored.get(write.revision as number)).toEqual({ name: write.name, seq: write.seq });
      }
      const verified = await meshCp(['log', 'verify'], storeEnv(database));
      expect(verified.code, verified.stderr).toBe(0);
      expect(verified.stdout).toMatch(/OK: \d+ entries, hash chain and history index sound/);
    },
    240_000,
  );
});
