import pg from 'pg';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';

import { PG_LOG_CHANNEL } from '../../src/events/pg-log.js';
import type { PrivatePostgres, StopMode } from '../helpers/private-postgres.js';
import { startPrivatePostgres } from '../helpers/private-postgres.js';
import { meshCp, startMeshCp } from '../helpers/process.js';
import type { CpProcess } from '../helpers/process.js';

/** mesh-cp processes on the one database; the load's clients are spread evenly over them. */
const INSTANCES = 2;
/** Writers at once, each on resources of its own (so each resource's writes have one order). */
const CLIENTS = 6;
const RESOURCES_PER_CLIENT = 4;
/** Acknowledged writes before the restart, and on each instance in a row after its outage, that the load waits for. */
const ACKED_BEFORE = 150;
const ACKED_AFTER_EACH = 60;
/** How long the load may wait for those (a loaded CI machine is slow; nothing here measures speed). */
const LOAD_WAIT_MS = 60_000;
/** How long the instances may take to agree on the head once the load stopped (generous, not measured). */
const CONVERGE_WAIT_MS = 60_000;

/** One PUT of the load: `seq` is unique over the run and is the route's weight, so content names its write. */
interface Attempt {
  name: string;
  seq: number;
  /** The index of the instance that was asked. */
  instance: number;
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
 * on one of `apiPorts` (client i on instance i mod their number) and recording every answer. After
 * a failed write a client pauses a little, so that an outage does not turn into a busy loop of 5xx on a
 * shared machine.
 */
function startLoad(apiPorts: readonly number[]) {
  const attempts: Attempt[] = [];
  let seq = 0;
  let stopping = false;
  const wakers = new Set<() => void>();

  async function client(index: number): Promise<void> {
    const instance = index % apiPorts.length;
    for (let round = 0; !stopping; round += 1) {
      const name = `c${index}-r${round % RESOURCES_PER_CLIENT}`;
      seq += 1;
      const attempt: Attempt = { name, seq, instance, status: 0 };
      try {
        const res = await fetch(
          `http://127.0.0.1:${apiPorts[instance]}/meshes/default/traffic-routes/${name}`,
          {
            method: 'PUT',
            headers: { 'content-type': 'application/json' },
            body: routeBody(name, attempt.seq),
          },
        );
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
      if (failedWrite(attempt)) await sleep(25);
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
          const statuses = attempts.reduce<Record<string, number>>((counts, a) => {
            const key = `${a.instance}:${a.status}`;
            return { ...counts, [key]: (counts[key] ?? 0) + 1 };
          }, {});
          reject(
            new Error(
              `load: no ${what} within ${LOAD_WAIT_MS} ms; answers so far (instance:status) ${JSON.stringify(statuses)}`,
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

/** The acknowledged and the failed writes of each resource, in the order its client made them. */
/** A write answered 503 (refused: not stored) or 504 (outcome unknown: stored or not). */
function failedWrite(attempt: Attempt): boolean {
  return attempt.status === 503 || attempt.status === 504;
}

function byResource(attempts: readonly Attempt[]): Map<string, Attempt[]> {
  const resources = new Map<string, Attempt[]>();
  for (const attempt of [...attempts].sort((a, b) => a.seq - b.seq)) {
    resources.set(attempt.name, [...(resources.get(attempt.name) ?? []), attempt]);
  }
  return resources;
}

/**
 * The weights a resource may hold now: its last acknowledged write, or a write after it whose
 * outcome was unknown (504: a batch whose commit reached PostgreSQL but whose reply was lost may
 * stay in the log, or not). A refused write (503) is never stored.
 */
function allowedNow(writes: readonly Attempt[]): number[] {
  const lastAcked = lastIndexWhere(writes, (a) => a.revision !== undefined);
  return writes
    .slice(Math.max(lastAcked, 0))
    .filter((a, i) => (lastAcked >= 0 && i === 0) || a.status === 504)
    .map((a) => a.seq);
}

/** A resource's history as served by the instance on `apiPort`, oldest first. */
async function historyOf(apiPort: number, name: string): Promise<{ revision: number; seq: number }[]> {
  const url = `http://127.0.0.1:${apiPort}/meshes/default/traffic-routes/${name}/_history`;
  const items: { revision: number; resource: unknown }[] = [];
  for (let total = 1; items.length < total;) {
    const res = await fetch(`${url}?size=1000&offset=${items.length}`);
    expect(res.status).toBe(200);
    const page = (await res.json()) as { total: number; items: { revision: number; resource: unknown }[] };
    total = page.total;
    items.push(...page.items);
  }
  return items.map((item) => ({ revision: item.revision, seq: weightOf(item.resource) }));
}

/** A log line is at error level or above (pino: 50 error, 60 fatal). */
const isError = (line: Record<string, unknown>): boolean => Number(line.level) >= 50;

const LEADS = 'this instance leads the cluster (work that runs once runs here)';
const NO_LONGER_LEADS = 'this instance no longer leads the cluster';

/** Whether the process leads the cluster now, by its last line about it. */
function leads(cp: CpProcess): boolean {
  const last = lastIndexWhere(cp.lines, (line) => line.msg === LEADS || line.msg === NO_LONGER_LEADS);
  return last >= 0 && cp.lines[last].msg === LEADS;
}

/**
 * Probes until `done` holds of the answer or {@link CONVERGE_WAIT_MS} passed, and returns the last
 * answer: the caller asserts on it, so a timeout fails showing what was seen.
 */
async function eventually<T>(probe: () => Promise<T>, done: (answer: T) => boolean): Promise<T> {
  const deadline = Date.now() + CONVERGE_WAIT_MS;
  for (;;) {
    const answer = await probe();
    if (done(answer) || Date.now() > deadline) return answer;
    await sleep(100);
  }
}

/**
 * Faults: PostgreSQL restarted under write load while two mesh-cp instances share its
 * database. The cluster is a private one (the machine's shared PostgreSQL serves other tests
 * meanwhile); the instances are real processes, never restarted here, with writes from several
 * clients in flight on each when `pg_ctl restart` runs. Each instance's writer, log listener,
 * read pool and cluster connections all lose their sessions; each must find its way back alone.
 */
describe('two mesh-cp instances on PostgreSQL restarted under write load', () => {
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
    'pg_ctl restart -m %s: writes in flight on both instances are 503 (refused, never stored) or 504 (outcome unknown) with the reason, none acknowledged is lost, both write again and agree without a restart',
    async (mode) => {
      const database = `mesh_restart_${mode}`;
      await onCluster('postgres', `CREATE DATABASE ${database}`);
      const cps = Array.from({ length: INSTANCES }, () => startMeshCp(storeEnv(database)));
      started.push(...cps);
      const readyLines = await Promise.all(cps.map((cp) => cp.ready));
      const apiPorts = readyLines.map((line) => line.apiPort);
      type Readiness = { status: number; body: { status: string; reason?: string; revision: number } };
      const ready = async (instance: number): Promise<Readiness> => {
        const res = await fetch(`http://127.0.0.1:${readyLines[instance].diagnosticsPort}/ready`);
        return { status: res.status, body: (await res.json()) as Readiness['body'] };
      };

      const load = startLoad(apiPorts);
      const { attempts } = load;
      const acked = (from: number, instance?: number): number =>
        attempts
          .slice(from)
          .filter((a) => a.revision !== undefined && (instance === undefined || a.instance === instance))
          .length;
      const instances = cps.map((_, instance) => instance);
      // /ready of each instance is sampled all along: whenever it says unavailable, it says why.
      const readiness: Readiness[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          readiness.push(...(await Promise.all(instances.map(ready))));
          await sleep(20);
        }
      })();
      try {
        await load.until(`${ACKED_BEFORE} acknowledged writes`, () => acked(0) >= ACKED_BEFORE);
        const restartFrom = attempts.length;
        await cluster.restart({ mode });
        // Each instance loses its writer's session: its next write fails, then writes resume.
        await load.until(`failed write on each instance after the restart`, () =>
          instances.every((instance) =>
            attempts.slice(restartFrom).some((a) => a.instance === instance && failedWrite(a)),
          ),
        );
        await load.until(
          `${ACKED_AFTER_EACH} acknowledged writes on each instance after its last refusal`,
          () =>
            instances.every((instance) => {
              const last = lastIndexWhere(attempts, (a) => a.instance === instance && failedWrite(a));
              return acked(last + 1, instance) >= ACKED_AFTER_EACH;
            }),
        );
      } finally {
        sampling = false;
        await Promise.all([load.stop(), sampler]);
      }

      // Every answer is an acknowledgement, a 503 that says the event log cannot write and why, or
      // a 504 for a write in flight whose commit reply was lost (its outcome is checked below).
      const unexpected = attempts.filter((a) => !failedWrite(a) && a.revision === undefined);
      expect(unexpected).toEqual([]);
      const failed = attempts.filter(failedWrite);
      for (const instance of instances) expect(failed.some((a) => a.instance === instance)).toBe(true);
      for (const { status, body } of failed) {
        expect(body).toEqual(
          status === 503
            ? { title: 'Event log unavailable', details: expect.stringMatching(/^event log cannot write: ./) }
            : {
                title: 'Write outcome unknown',
                details: expect.stringMatching(
                  /^the event log sent this write to its store, but the reply was lost \(./,
                ),
              },
        );
      }
      for (const sample of readiness.filter(({ status }) => status !== 200)) {
        expect(sample).toMatchObject({ status: 503, body: { status: 'unavailable' } });
        expect(sample.body.reason).toMatch(/^event log cannot write: /);
      }

      // Both instances come to the head of the log in PostgreSQL (the other's writes arrive by
      // notification or by the poll), and say they are ready there.
      // The head is read again at each probe: a write refused during the restart may still land
      // after the load (start-up's signing keys are tried again until the log takes them).
      const converged = await eventually(
        async () => {
          const [{ revision }] = await onCluster<{ revision: string }>(
            database,
            'SELECT revision FROM mesh_log_head',
          );
          return { head: Number(revision), samples: await Promise.all(instances.map(ready)) };
        },
        ({ head, samples }) => samples.every((sample) => sample.body.revision === head),
      );
      for (const sample of converged.samples) {
        expect(sample).toEqual({ status: 200, body: { status: 'ready', revision: converged.head } });
      }
      // The cluster works again too: one instance leads, and each listens for the other's commits
      // again (the poll alone would hide a listener that never came back).
      const leaders = await eventually(
        async () => cps.filter(leads).length,
        (count) => count === 1,
      );
      expect(leaders).toBe(1);
      const listening = await eventually(
        () =>
          onCluster<{ count: string }>(
            database,
            'SELECT count(*) FROM pg_stat_activity WHERE datname = $1 AND query = $2',
            [database, `LISTEN ${PG_LOG_CHANNEL}`],
          ),
        (rows) => Number(rows[0].count) === INSTANCES,
      );
      expect(Number(listening[0].count)).toBe(INSTANCES);

      // Each process said once that writes fail and once that they work again, in that order, and
      // nothing else at error level (its listener, read pool and cluster connections dropped too).
      for (const cp of cps) {
        const failed = cp.lines.filter((line) =>
          String(line.msg).endsWith('; refusing writes (503) and retrying'),
        );
        const again = cp.lines.filter((line) => line.msg === 'event log writes again; accepting writes');
        expect(failed).toHaveLength(1);
        expect(failed[0]).toMatchObject({
          level: 50,
          msg: expect.stringMatching(/^event log cannot write: /),
        });
        expect(again).toHaveLength(1);
        expect(again[0]).toMatchObject({
          level: 30,
          attempts: expect.any(Number),
          downMs: expect.any(Number),
        });
        expect(cp.lines.indexOf(failed[0])).toBeLessThan(cp.lines.indexOf(again[0]));
        expect(cp.lines.filter(isError)).toEqual(failed);
        // Its cluster connections said at most once each that they failed (warn), and came back.
        const warnings = cp.lines.filter((line) => Number(line.level) === 40).map((line) => line.msg);
        expect(warnings.length, JSON.stringify(warnings)).toBe(new Set(warnings).size);
        const statusFailed = cp.lines.findIndex((line) => line.msg === 'cluster status failed (retrying)');
        const statusAgain = () =>
          cp.lines.findIndex((line) => line.msg === 'the cluster tables in PostgreSQL answer again');
        // The cluster's status ticks once a second, on a connection of its own: it may say so a
        // little after the writes are back.
        const until = Date.now() + LOAD_WAIT_MS;
        while (statusFailed >= 0 && statusAgain() < 0 && Date.now() < until) await sleep(50);
        if (statusFailed >= 0) expect(statusAgain()).toBeGreaterThan(statusFailed);
      }

      // Each instance (neither restarted) serves every acknowledged write: the current value is the
      // last acknowledged one or one of unknown outcome after it, at the revision of the resource's last
      // history entry; the history holds each acknowledged revision. Both serve the same.
      const resources = byResource(attempts);
      expect(resources.size).toBe(CLIENTS * RESOURCES_PER_CLIENT);
      for (const [name, writes] of resources) {
        const tried = new Set(writes.map((a) => a.seq));
        const refusedSeqs = new Set(writes.filter((a) => a.status === 503).map((a) => a.seq));
        const served: { revision: number; seq: number }[] = [];
        for (const apiPort of apiPorts) {
          const current = await fetch(`http://127.0.0.1:${apiPort}/meshes/default/traffic-routes/${name}`);
          expect(current.status).toBe(200);
          const now = {
            revision: Number(JSON.parse(current.headers.get('etag') ?? 'null')),
            seq: weightOf(await current.json()),
          };
          expect(allowedNow(writes)).toContain(now.seq);
          const seen = await historyOf(apiPort, name);
          expect(seen[seen.length - 1]).toEqual(now);
          for (const write of writes.filter((a) => a.revision !== undefined)) {
            expect(seen).toContainEqual({ revision: write.revision, seq: write.seq });
          }
          // Nothing else: each entry is one write of this resource, at most once, never a refused one.
          expect(seen.filter(({ seq }) => !tried.has(seq))).toEqual([]);
          expect(seen.filter(({ seq }) => refusedSeqs.has(seq))).toEqual([]);
          expect(new Set(seen.map(({ seq }) => seq)).size).toBe(seen.length);
          served.push(now);
        }
        expect(new Set(served.map((now) => JSON.stringify(now))).size).toBe(1);
      }

      for (const cp of cps) cp.proc.kill('SIGTERM');
      for (const cp of cps) {
        const exit = await cp.exited;
        expect(exit.code, cp.stderr()).toBe(0);
      }

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
    300_000,
  );
});
