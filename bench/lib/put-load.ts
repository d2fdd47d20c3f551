// The durable PUT load of put-durable and its peers (etcd, PostgreSQL, several instances): the same
// 2,000 data-plane bodies, each request a change (a new inbound port on each pass), so that every
// one reaches the log (a PUT of the stored body is a no-op).
import { dataplane } from '../fixtures.js';
import type { LoadResult, Started } from './processes.js';
import { load } from './processes.js';

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
      etcdPut: opts.etcdPut ?? false,
      headers: { 'content-type': 'application/json' },
    });
  };
}
