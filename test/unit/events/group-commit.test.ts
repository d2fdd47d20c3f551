import { describe, expect, it } from 'vitest';

import { GENESIS_HASH } from '../../../src/events/hash.js';
import { createGroupCommit } from '../../../src/events/group-commit.js';
import type { CommitBatch } from '../../../src/events/group-commit.js';
import type { EventInput } from '../../../src/events/types.js';
import { AppError } from '../../../src/util/errors.js';

const input: EventInput = {
  kind: 'Mesh',
  name: 'default',
  operation: 'create',
  resource: {
    type: 'Mesh',
    name: 'default',
    creationTime: '2024-01-01T00:00:00.000Z',
    modificationTime: '2024-01-01T00:00:00.000Z',
  },
  actor: { name: 'alice', groups: [], address: '127.0.0.1' },
  origin: 'local',
};

function manualWriter() {
  const calls: { batch: CommitBatch; resolve: () => void; reject: (error: Error) => void }[] = [];
  const write = (batch: CommitBatch) =>
    new Promise<void>((resolve, reject) => {
      calls.push({ batch, resolve, reject });
    });
  return { calls, write };
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe('group commit', () => {
  it('holds appends made during a write for the next batch', async () => {
    const writer = manualWriter();
    const core = createGroupCommit({ write: writer.write });
    core.start(0, GENESIS_HASH);
    const first = core.append([input]);
    await turn();
    const second = core.append([input]);
    const third = core.append([input, input], { cursor: 'x' });
    await turn();
    expect(writer.calls).toHaveLength(1);
    writer.calls[0].resolve();
    await first.durable;
    await turn();
    expect(writer.calls).toHaveLength(2);
    expect(writer.calls[1].batch.entries.map((entry) => entry.revision)).toEqual([2, 3, 4]);
    expect(writer.calls[1].batch).toMatchObject({ head: 4, meta: { cursor: 'x' } });
    writer.calls[1].resolve();
    await Promise.all([second.durable, third.durable]);
    expect(core.stats()).toEqual({ batches: 2, entries: 4 });
  });

  it('fails stop when a batch write fails', async () => {
    const writer = manualWriter();
    const core = createGroupCommit({ write: writer.write });
    core.start(0, GENESIS_HASH);
    const seen: number[] = [];
    core.onCommit((entries) => seen.push(...entries.map((entry) => entry.revision)));
    const ok = core.append([input]);
    await turn();
    writer.calls[0].resolve();
    await ok.durable;

    const failing = core.append([input]);
    await turn();
    const queued = core.append([input]);
    writer.calls[1].reject(new Error('disk full'));
    await expect(failing.durable).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(queued.durable).rejects.toMatchObject({ code: 'UNAVAILABLE' });

    expect(() => core.append([input])).toThrow(AppError);
    expect(() => core.assertWritable()).toThrow(/disk full/);
    expect(() => core.assertReadable()).not.toThrow();
    expect(core.head()).toBe(1);
    expect(seen).toEqual([1]);
    await core.stop();
    expect(writer.calls).toHaveLength(2);
  });

  it('keeps answering appenders when a listener throws', async () => {
    const errors: unknown[] = [];
    const core = createGroupCommit({
      write: async () => undefined,
      onListenerError: (error) => errors.push(error),
    });
    core.start(0, GENESIS_HASH);
    const seen: number[] = [];
    core.onCommit(() => {
      throw new Error('projection bug');
    });
    core.onCommit((entries) => seen.push(entries.length));
    await core.append([input]).durable;
    expect(seen).toEqual([1]);
    expect(errors).toHaveLength(1);
  });

  it('refuses appends before start', () => {
    const core = createGroupCommit({ write: async () => undefined });
    expect(() => core.append([input])).toThrow(AppError);
  });
});
