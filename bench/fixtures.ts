import { createLevelLog } from '../src/events/level-log.js';
import type { EventInput, WireResource } from '../src/events/types.js';

const ACTOR = { name: 'bench', groups: ['bench'], address: 'local' };
const T = '2026-01-01T00:00:00.000Z';

/** The data plane number i of a fixture: one inbound, tags with 1% selectivity on `team`. */
export function dataplane(i: number, mesh = 'default'): WireResource {
  return {
    type: 'Dataplane',
    mesh,
    name: `dp-${String(i).padStart(6, '0')}`,
    creationTime: T,
    modificationTime: T,
    networking: {
      address: `10.${(i >> 16) & 255}.${(i >> 8) & 255}.${i & 255}`,
      inbound: [
        {
          port: 8080,
          servicePort: 80,
          tags: {
            'mesh.io/service': `svc-${i % 500}`,
            'mesh.io/protocol': 'http',
            version: `v${i % 3}`,
            team: `t${i % 100}`,
          },
        },
      ],
      outbound: [{ port: 10001, tags: { 'mesh.io/service': `svc-${(i + 1) % 500}` } }],
    },
  };
}

/** A traffic permission number i. */
export function policy(i: number, mesh = 'default'): WireResource {
  return {
    type: 'TrafficPermission',
    mesh,
    name: `tp-${String(i).padStart(6, '0')}`,
    creationTime: T,
    modificationTime: T,
    sources: [{ match: { 'mesh.io/service': `svc-${i % 500}` } }],
    destinations: [{ match: { 'mesh.io/service': `svc-${(i + 7) % 500}` } }],
  };
}

/** A create entry of `r` by the bench's actor. */
export const create = (kind: string, r: WireResource): EventInput => ({
  kind,
  mesh: r.mesh as string | undefined,
  name: r.name,
  operation: 'create',
  resource: r,
  actor: ACTOR,
  origin: 'local',
});

/**
 * Writes a store through our own LevelDB log adapter: the default mesh, `dataplanes` data planes,
 * `policies` traffic permissions, then updates of the data planes until `totalEntries` is reached.
 */
export async function buildStore(
  path: string,
  opts: { dataplanes: number; policies?: number; totalEntries?: number },
): Promise<number> {
  const w = await openBatchedLog(path);
  const mesh: WireResource = { type: 'Mesh', name: 'default', creationTime: T, modificationTime: T };
  await w.push(create('Mesh', mesh));
  for (let i = 0; i < opts.dataplanes; i++) await w.push(create('Dataplane', dataplane(i)));
  for (let i = 0; i < (opts.policies ?? 0); i++) await w.push(create('TrafficPermission', policy(i)));
  const total = opts.totalEntries ?? 0;
  let round = 1;
  while (w.count() < total) {
    for (let i = 0; i < opts.dataplanes && w.count() < total; i++) {
      const r = dataplane(i);
      r.modificationTime = new Date(Date.parse(T) + round * 1000).toISOString();
      await w.push({ ...create('Dataplane', r), operation: 'update' });
    }
    round++;
  }
  return w.close();
}

/** A new LevelDB log at `path` written in batches of 2,000 entries; `close` returns how many. */
export async function openBatchedLog(path: string): Promise<{
  push(e: EventInput): Promise<void>;
  /** Entries pushed so far, written or batched. */
  count(): number;
  close(): Promise<number>;
}> {
  const log = createLevelLog({ path });
  await log.open();
  let batch: EventInput[] = [];
  let written = 0;
  const flush = async (): Promise<void> => {
    if (batch.length === 0) return;
    const { durable } = log.append(batch);
    written += batch.length;
    batch = [];
    await durable;
  };
  return {
    async push(e) {
      batch.push(e);
      if (batch.length >= 2000) await flush();
    },
    count: () => written + batch.length,
    async close() {
      await flush();
      await log.close();
      return written;
    },
  };
}
