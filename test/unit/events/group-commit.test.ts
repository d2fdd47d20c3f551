import { describe, expect, it, vi } from 'vitest';

import { GENESIS_HASH, sealEntry, verifyEntries } from '../../../src/events/hash.js';
import { CommitOutcomeUnknown, createGroupCommit } from '../../../src/events/group-commit.js';
import type { CommitBatch } from '../../../src/events/group-commit.js';
import { resourceKey } from '../../../src/resources/keys.js';
import type { EventInput, LogEntry, ReadSet } from '../../../src/events/types.js';
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

  it('refuses writes at once after a failed batch, retries with back-off and resumes the chain from the durable head', async () => {
    const writer = manualWriter();
    let recoverable = false;
    const recoveries: { head: number; hash: string }[] = [];
    const changes: unknown[] = [];
    const core = createGroupCommit({
      write: writer.write,
      recover: async (head, hash) => {
        recoveries.push({ head, hash });
        if (!recoverable) throw new Error('ENOSPC: no space left on device, probe');
      },
      retry: { firstMs: 5, maxMs: 20 },
      onWriteState: (change) => changes.push(change),
    });
    core.start(0, GENESIS_HASH);
    const seen: number[] = [];
    core.onCommit((entries) => seen.push(...entries.map((entry) => entry.revision)));
    const ok = core.append([input]);
    await turn();
    writer.calls[0].resolve();
    await ok.durable;
    const durableHash = ok.entries[0].hash;

    const failing = core.append([input]);
    await turn();
    const queued = core.append([input]);
    writer.calls[1].reject(new Error('ENOSPC: no space left on device, write'));
    await expect(failing.durable).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await expect(queued.durable).rejects.toMatchObject({ code: 'UNAVAILABLE' });

    expect(() => core.append([input])).toThrow(/event log cannot write: ENOSPC: no space left on device/);
    expect(core.writeFailure()).toBe('event log cannot write: ENOSPC: no space left on device, write');
    expect(() => core.assertReadable()).not.toThrow();
    expect(core.head()).toBe(1);
    await vi.waitFor(() => expect(recoveries.length).toBeGreaterThan(2), { timeout: 2000, interval: 5 });
    expect(recoveries.every((r) => r.head === 1 && r.hash === durableHash)).toBe(true);
    expect(core.writeFailure()).toBeDefined();

    recoverable = true;
    await vi.waitFor(() => expect(core.writeFailure()).toBeUndefined(), { timeout: 1000, interval: 5 });
    const resumed = core.append([input]);
    expect(resumed.entries[0]).toMatchObject({ revision: 2, prevHash: durableHash });
    await turn();
    writer.calls[2].resolve();
    await resumed.durable;
    expect(core.head()).toBe(2);
    expect(seen).toEqual([1, 2]);
    // One change each way, however many retries.
    expect(changes).toHaveLength(2);
    expect(changes[0]).toMatchObject({ failed: true, reason: expect.stringMatching(/ENOSPC/) as unknown });
    expect(changes[1]).toMatchObject({ failed: false, attempts: recoveries.length });
    await core.stop();
    expect(writer.calls).toHaveLength(3);
  });

  it('tells the appenders of a batch whose commit reply was lost that its outcome is unknown, and those queued behind it that they were refused', async () => {
    const writer = manualWriter();
    const core = createGroupCommit({ write: writer.write, retry: { firstMs: 60_000, maxMs: 60_000 } });
    core.start(0, GENESIS_HASH);
    const sent = core.append([input]);
    await turn();
    const queued = core.append([input]);
    writer.calls[0].reject(new CommitOutcomeUnknown(new Error('Connection terminated unexpectedly')));
    await expect(sent.durable).rejects.toMatchObject({
      code: 'OUTCOME_UNKNOWN',
      title: 'Write outcome unknown',
      message: expect.stringMatching(/reply was lost \(Connection terminated unexpectedly\)/) as unknown,
    });
    await expect(queued.durable).rejects.toMatchObject({
      code: 'UNAVAILABLE',
      title: 'Event log unavailable',
    });
    // Appends while the log retries are refused for sure.
    expect(() => core.append([input])).toThrow(expect.objectContaining({ code: 'UNAVAILABLE' }));
    expect(core.writeFailure()).toMatch(/^event log cannot write: the reply to a commit was lost: /);
    await core.stop();
  });

  it('stops retrying when stopped', async () => {
    const writer = manualWriter();
    let recoveries = 0;
    const core = createGroupCommit({
      write: writer.write,
      recover: async () => {
        recoveries += 1;
        throw new Error('ENOSPC');
      },
      retry: { firstMs: 5, maxMs: 5 },
    });
    core.start(0, GENESIS_HASH);
    const failing = core.append([input]);
    await turn();
    writer.calls[0].reject(new Error('ENOSPC'));
    await expect(failing.durable).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    await vi.waitFor(() => expect(recoveries).toBeGreaterThan(1), { timeout: 1000, interval: 5 });
    await core.stop();
    const after = recoveries;
    await new Promise((resolve) => setTimeout(resolve, 40));
    expect(recoveries).toBe(after);
    expect(() => core.append([input])).toThrow(/closed/);
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

  describe('in a log shared with other writers', () => {
    const named = (name: string): EventInput => ({ ...input, name, resource: { ...input.resource!, name } });
    const reading = (...names: string[]): ReadSet => ({
      keys: new Set(names.map((name) => resourceKey('Mesh', undefined, name))),
      meshes: new Set(),
      all: false,
    });

    it('renumbers a batch after what others appended, refuses what they changed and what was decided on it', async () => {
      const writer = manualWriter();
      const core = createGroupCommit({ write: writer.write });
      core.start(0, GENESIS_HASH);
      const seen: number[] = [];
      core.onCommit((entries) => seen.push(...entries.map((e) => e.revision)));
      // g1 read x; g2 read what g1 wrote (x) and y; g3 read only z.
      const g1 = core.append([named('x')], undefined, reading('x'));
      const g2 = core.append([named('y')], undefined, reading('x', 'y'));
      const g3 = core.append([named('z')], undefined, reading('z'));
      expect([g1, g2, g3].map((g) => g.entries[0].revision)).toEqual([1, 2, 3]);
      const refusals = [g1, g2].map((g) =>
        g.durable.then(
          () => undefined,
          (error: unknown) => error,
        ),
      );
      await turn();
      // Another writer appended revision 1 (a change of x) first: the adapter hands it over.
      const theirs = sealEntry(named('x'), 1, '2024-01-01T00:00:00.000Z', GENESIS_HASH).entry;
      const rebased = writer.calls[0].batch.rebase([theirs]);
      for (const refusal of await Promise.all(refusals))
        expect(refusal).toMatchObject({ name: 'AppendConflict' });
      expect(rebased.before).toBe(1);
      expect(rebased.entries.map((e) => [e.revision, e.name])).toEqual([[2, 'z']]);
      // The appender's entry object now holds the final revision and chain.
      expect(g3.entries[0]).toMatchObject({ revision: 2, prevHash: theirs.hash });
      writer.calls[0].resolve();
      await g3.durable;
      expect(seen).toEqual([1, 2]);
      expect(core.head()).toBe(2);
      expect(await verifyEntries([theirs, ...g3.entries] as LogEntry[])).toEqual({ ok: true, head: 2 });
      // Decided again after the refusal (on the new state), a write goes through.
      const again = core.append([named('x')], undefined, reading('x'));
      await turn();
      writer.calls[1].resolve();
      await again.durable;
      expect(again.entries[0].revision).toBe(3);
    });

    it("refuses a group decided before another writer's entry that it read, and those decided on its pending write", async () => {
      const writer = manualWriter();
      const core = createGroupCommit({ write: writer.write });
      core.start(0, GENESIS_HASH);
      const stale = core.append([named('a')], undefined, reading('a'));
      // The tail applies another writer's change of a between writes.
      core.applyForeign([sealEntry(named('a'), 1, '2024-01-01T00:00:00.000Z', GENESIS_HASH).entry]);
      // Appended while the stale group was pending: its decision may have read that pending write.
      const onStale = core.append([named('a')], undefined, reading('a'));
      const other = core.append([named('b')], undefined, reading('b'));
      const refusals = [stale, onStale].map((g) =>
        g.durable.then(
          () => undefined,
          (error: unknown) => error,
        ),
      );
      await turn();
      for (const refusal of await Promise.all(refusals))
        expect(refusal).toMatchObject({ name: 'AppendConflict' });
      expect(writer.calls[0].batch.entries.map((e) => [e.revision, e.name])).toEqual([[2, 'b']]);
      writer.calls[0].resolve();
      await other.durable;
      // Decided once the refusals are known, on the new state: written.
      const decidedAgain = core.append([named('a')], undefined, reading('a'));
      await turn();
      writer.calls[1].resolve();
      await decidedAgain.durable;
      expect(decidedAgain.entries[0].revision).toBe(3);
    });
  });
});
