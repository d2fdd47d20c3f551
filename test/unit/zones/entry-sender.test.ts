import { afterEach, describe, expect, it } from 'vitest';
import { createSyncSource } from '../../../src/app/sync-source.js';
import { createMemoryLog } from '../../../src/events/memory-log.js';
import type { LogAdapter } from '../../../src/events/log-lifecycle.js';
import { createResourceViews, type ResourceViews } from '../../../src/projections/resource-views.js';
import { registry } from '../../../src/resources/registry.js';
import type { EntrySender } from '../../../src/zones/entry-sender.js';
import { DEFAULT_LIMITS, createEntrySender } from '../../../src/zones/entry-sender.js';
import type { Batch, SyncMessage } from '../../../src/zones/sync-protocol.js';
import { eventually } from '../../helpers/eventually.js';

const actor = { name: 'test', groups: [], address: 'local' };

/** A log holding `n` traffic permissions of the default mesh (after the mesh itself), as set `changeSet` if given. */
async function logOf(n: number, changeSet?: string): Promise<LogAdapter> {
  const log = createMemoryLog();
  await log.open();
  await log.append([
    {
      kind: 'Mesh',
      name: 'default',
      operation: 'create',
      resource: { type: 'Mesh', name: 'default', creationTime: 't', modificationTime: 't' },
      actor,
      origin: 'local',
    },
  ]).durable;
  const inputs = Array.from({ length: n }, (_, i) => ({
    kind: 'TrafficPermission',
    mesh: 'default',
    name: `tp-${i}`,
    operation: 'create' as const,
    resource: {
      type: 'TrafficPermission',
      mesh: 'default',
      name: `tp-${i}`,
      creationTime: 't',
      modificationTime: 't',
    },
    actor,
    origin: 'local',
    changeSet,
  }));
  await log.append(inputs).durable;
  return log;
}

/**
 * A sender of the TrafficPermission entries of `log` from `from` on, its batches pushed to `sent`
 * (`onSend` after each); `views`: the projections its source reads (a fresh one by default).
 */
function startSender(
  log: LogAdapter,
  sent: Batch[],
  opts: { from?: number; views?: ResourceViews; onSend?: () => void } = {},
): EntrySender {
  const s = createEntrySender({
    log,
    source: createSyncSource({ registry, views: opts.views ?? createResourceViews(registry) }),
    selectEntry: (e) => e.kind === 'TrafficPermission',
    selectItem: () => false,
    send: (msg: SyncMessage) => {
      if ('batch' in msg && msg.batch) sent.push(msg.batch);
      opts.onSend?.();
    },
    events: { sent: () => undefined, acked: () => undefined },
    onError: (err) => {
      throw err;
    },
  });
  s.start({ start: 'resume', from: opts.from ?? 1 });
  return s;
}

describe('entry sender and change sets', () => {
  let sender: EntrySender | undefined;
  afterEach(() => sender?.stop());

  const start = (log: LogAdapter, sent: Batch[], from: number) => {
    sender = startSender(log, sent, { from });
  };

  it('sends a set of more entries than a batch holds, read from the log, in one batch with its id', async () => {
    // 1,200 entries: past the batch limit (250) and the log's read chunk (1,000).
    const log = await logOf(1200, 'set-1');
    const sent: Batch[] = [];
    start(log, sent, 1);
    await eventually(() => sent.length > 0, 5000, 'a batch sent');
    expect(sent[0].entries).toHaveLength(1200);
    expect(sent[0].toRevision).toBe(1201);
    expect(new Set(sent[0].entries.map((e) => e.changeSet))).toEqual(new Set(['set-1']));
  });

  it('sends a live set in one batch, and single writes around it without an id', async () => {
    const log = await logOf(0);
    const sent: Batch[] = [];
    start(log, sent, 1);
    const input = (name: string, changeSet?: string) => ({
      kind: 'TrafficPermission',
      mesh: 'default',
      name,
      operation: 'create' as const,
      resource: {
        type: 'TrafficPermission',
        mesh: 'default',
        name,
        creationTime: 't',
        modificationTime: 't',
      },
      actor,
      origin: 'local',
      changeSet,
    });
    await log.append([input('single-1')]).durable;
    await log.append(Array.from({ length: 400 }, (_, i) => input(`s-${i}`, 'set-2'))).durable;
    const count = () => sent.reduce((n, b) => n + b.entries.length, 0);
    await eventually(() => count() >= 401, 5000, '401 entries sent');
    const withSet = sent.filter((b) => b.entries.some((e) => e.changeSet === 'set-2'));
    expect(withSet).toHaveLength(1);
    expect(withSet[0].entries.filter((e) => e.changeSet === 'set-2')).toHaveLength(400);
    expect(sent.flatMap((b) => b.entries).find((e) => e.name === 'single-1')?.changeSet).toBe('');
  });
});

describe('entry sender limits (batches and the window)', () => {
  let sender: EntrySender | undefined;
  afterEach(() => sender?.stop());

  it('sends batches of 250 entries, at most 16 unacknowledged, and one more per ack', async () => {
    expect(DEFAULT_LIMITS).toMatchObject({ batchEntries: 250, window: 16 });
    const log = await logOf(5000);
    const sent: Batch[] = [];
    let wake: (() => void) | undefined;
    sender = startSender(log, sent, { onSend: () => wake?.() });
    const until = async (count: number): Promise<void> => {
      const end = Date.now() + 5000;
      while (sent.length < count && Date.now() < end) await new Promise<void>((r) => (wake = r));
    };
    await until(16);
    await new Promise((r) => setTimeout(r, 50));
    expect(sent).toHaveLength(16);
    expect(sent.map((b) => b.entries.length)).toEqual(Array.from({ length: 16 }, () => 250));
    expect(sent[0].entries[0].revision).toBe(2);
    expect(sent[15].toRevision).toBe(1 + 16 * 250);

    sender.onAck({ seq: sent[0].seq, revision: sent[0].toRevision, rejected: [] });
    await until(17);
    await new Promise((r) => setTimeout(r, 50));
    expect(sent).toHaveLength(17);
    expect(sent[16].entries[0].revision).toBe(2 + 16 * 250);
  });

  it('serialises a live entry once for every stream that sends it (one resource buffer shared)', async () => {
    const log = await logOf(0);
    const views = createResourceViews(registry);
    const streams = [0, 1, 2].map(() => {
      const sent: Batch[] = [];
      const s = startSender(log, sent, { views });
      return { s, sent };
    });
    try {
      const resource = {
        type: 'TrafficPermission',
        mesh: 'default',
        name: 'tp',
        creationTime: 't',
        modificationTime: 't',
      };
      await log.append([
        {
          kind: 'TrafficPermission',
          mesh: 'default',
          name: 'tp',
          operation: 'create',
          resource,
          actor,
          origin: 'local',
        },
      ]).durable;
      const end = Date.now() + 5000;
      while (streams.some((x) => x.sent.length === 0) && Date.now() < end)
        await new Promise((r) => setTimeout(r, 5));
      const buffers = streams.map((x) => x.sent[0]?.entries[0]?.resource);
      expect(JSON.parse(String(buffers[0]))).toEqual(resource);
      expect(buffers[1]).toBe(buffers[0]);
      expect(buffers[2]).toBe(buffers[0]);
    } finally {
      for (const x of streams) x.s.stop();
    }
  });
});
