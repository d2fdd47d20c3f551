// The durable PUT load of put-durable and its peers (etcd, PostgreSQL, several instances): the same
// 2,000 data-plane bodies, each request a change (a new inbound port on each pass), so that every
// one reaches the log (a PUT of the stored body is a no-op).
import { dataplane } from '../fixtures.js';
import type { LoadResult, Started } from './processes.js';
import { load, settle } from './processes.js';
import { median } from './stats.js';

/** How many data planes the load writes in turn. */
export const PUT_RESOURCES = 2000;

/** The PUT load of a server: keys `prefix` + name; `etcdPut` for etcd's `/v3/kv/put`. */
export type PutLoad = (
  server: Started,
  prefix: string,
  opts?: {
    etcdPut?: boolean;
    /** Connections of this load (default: the load's). */
    connections?: number;
    /** Write only the `part[0]`-th of `part[1]` disjoint slices of the data planes (loads run side by side). */
    part?: readonly [number, number];
    /**
     * The pass over the data planes whose values this load starts from (default 0): a later load of
     * the same server passes a pass the earlier ones did not reach, so that it too writes changes.
     */
    firstPass?: number;
  },
) => Promise<LoadResult>;

/**
 * A PUT load of `connections` writers for `duration` seconds over the 2,000 bodies, after `warmup`
 * seconds of the same load that are not counted (the first pass, which creates, and the code's
 * first seconds: a server is measured as it runs, not as it starts; each request of the counted
 * seconds is still a change, as the warm-up's values are not repeated).
 */
export function createPutLoad(settings: { connections: number; duration: number; warmup?: number }): PutLoad {
  const bodies = Array.from({ length: PUT_RESOURCES }, (_, i) => {
    const { creationTime: _c, modificationTime: _m, ...body } = dataplane(i);
    (body.networking as { inbound: Array<{ port: number }> }).inbound[0].port = 8080;
    return JSON.stringify(body);
  });
  const names = Array.from({ length: PUT_RESOURCES }, (_, i) => dataplane(i).name);
  return (server, prefix, opts = {}) => {
    const [k, n] = opts.part ?? [0, 1];
    const picked = names.flatMap((name, i) => (i % n === k ? [i] : []));
    return load({
      url: `http://127.0.0.1:${(server.ready.apiPort ?? server.ready.port) as number}`,
      connections: opts.connections ?? settings.connections,
      duration: settings.duration,
      warmup: settings.warmup,
      method: opts.etcdPut ? 'POST' : 'PUT',
      paths: picked.map((i) => `${prefix}${names[i]}`),
      bodies: picked.map((i) => bodies[i]),
      vary: '"port":8080',
      firstPass: opts.firstPass ?? 0,
      etcdPut: opts.etcdPut ?? false,
      headers: { 'content-type': 'application/json' },
    });
  };
}

/** A server of {@link TurnLoad}: its PUT load's key prefix, and `etcdPut` for etcd's `/v3/kv/put`. */
export interface PutTarget {
  server: Started;
  prefix: string;
  etcdPut?: boolean;
}

/** PUT loads of several servers taken in turns; one result each, in the order of the targets. */
export type TurnLoad = (targets: readonly PutTarget[]) => Promise<LoadResult[]>;

/**
 * Loads of servers compared with each other, taken in turns (from 2026-11-27): each server is first
 * warmed with `warmup` seconds of its load, not counted; then `rounds` rounds load each for `slice`
 * seconds, in the targets' order and in reverse on every other round (A B, B A, ...), each slice
 * once the servers and this process are idle ({@link settle}: what a slice leaves running is not
 * counted in the next one, whoever's it is). A server's result is its slices together: requests and
 * errors summed, the rate over the counted seconds, the median of the slices' p50 and the highest
 * of their p99.
 *
 * Why: these machines drift in speed by up to 1.5× within a minute (the same server, at the same
 * share of the CPU, used 145-234 µs of CPU per request from one 4 s run to the next, with no steal
 * shown), and two loads one after the other carried that drift into their ratio; slices in mirrored
 * order meet the same drift. And mesh-cp is warm only after some 4 s of load (its first pass
 * creates, its JIT warms: ~1,600, 3,300, 4,700, then 5,700 req/s in its first four seconds), where
 * etcd or a floor of a hundred lines is warm within one, hence the longer warm-up than
 * {@link createPutLoad}'s. Each slice's load process first runs `sliceWarmup` seconds of its own,
 * not counted (its connections made, its own JIT warm). bench/README.md has the measurements.
 */
export function createTurnLoad(settings: {
  connections: number;
  warmup: number;
  slice: number;
  /** Seconds of each slice's load before its counted `slice`, not counted. */
  sliceWarmup: number;
  rounds: number;
}): TurnLoad {
  const warm = createPutLoad({ connections: settings.connections, duration: settings.warmup });
  const sliced = createPutLoad({
    connections: settings.connections,
    duration: settings.slice,
    warmup: settings.sliceWarmup,
  });
  return async (targets) => {
    const pids = targets.map((t) => t.server.proc.pid as number);
    // Each load of a server starts from values its earlier ones did not write (a thousand passes
    // apart: a load of seconds makes a few passes over the 2,000 data planes).
    if (settings.warmup > 0)
      for (const t of targets) await warm(t.server, t.prefix, { etcdPut: t.etcdPut, firstPass: 0 });
    const slices: LoadResult[][] = targets.map(() => []);
    for (let round = 0; round < settings.rounds; round++) {
      const order = targets.map((_, i) => i);
      if (round % 2 === 1) order.reverse();
      for (const i of order) {
        await settle(pids);
        const t = targets[i];
        slices[i].push(
          await sliced(t.server, t.prefix, { etcdPut: t.etcdPut, firstPass: (round + 1) * 1000 }),
        );
      }
    }
    return slices.map((runs) => joinSlices(runs));
  };
}

/** The equal slices of one server's load as one result. */
export function joinSlices(runs: readonly LoadResult[]): LoadResult {
  const sum = (pick: (r: LoadResult) => number): number => runs.reduce((n, r) => n + pick(r), 0);
  const statusCodes: Record<string, number> = {};
  for (const r of runs)
    for (const [code, n] of Object.entries(r.statusCodes)) statusCodes[code] = (statusCodes[code] ?? 0) + n;
  const total = sum((r) => r.total);
  return {
    // autocannon's rate of each slice (its mean requests per second), averaged: the slices are equal.
    rps: sum((r) => r.rps) / runs.length,
    total,
    p50: median(runs.map((r) => r.p50)),
    p99: Math.max(...runs.map((r) => r.p99)),
    errors: sum((r) => r.errors),
    non2xx: sum((r) => r.non2xx),
    statusCodes,
    timeouts: sum((r) => r.timeouts),
  };
}
