import { afterEach, describe, expect, it } from 'vitest';

import { GENESIS_HASH, hashEntry, verifyEntries } from '../../src/events/hash.js';
import type { LogAdapter } from '../../src/events/log-lifecycle.js';
import type { EventInput, LogEntry, Operation } from '../../src/events/types.js';
import { AppError } from '../../src/util/errors.js';

/** One store under test: a log over it, a way to reopen it after close, and its removal. */
export interface LogFixture {
  log: LogAdapter;
  /** A log over the same store (call after closing `log`). */
  reopen(): LogAdapter;
  cleanup(): Promise<void>;
}

/** Makes a fresh, empty store for one test. */
export type LogFixtureFactory = (options: { now?: () => Date }) => LogFixture | Promise<LogFixture>;

const actor = { name: 'alice', groups: ['mesh-system:admin'], address: '127.0.0.1' };

function change(
  name: string,
  options: { kind?: string; mesh?: string; operation?: Operation; spec?: string } = {},
): EventInput {
  const kind = options.kind ?? 'TrafficPermission';
  const operation = options.operation ?? 'create';
  const resource = {
    type: kind,
    ...(options.mesh === undefined ? {} : { mesh: options.mesh }),
    name,
    creationTime: '2024-01-01T00:00:00.000Z',
    modificationTime: '2024-01-01T00:00:00.000Z',
    spec: options.spec ?? 'v1',
  };
  return {
    kind,
    ...(options.mesh === undefined ? {} : { mesh: options.mesh }),
    name,
    operation,
    ...(operation === 'delete' ? { previous: resource } : { resource }),
    actor,
    origin: 'local',
  };
}

async function collect<T>(items: AsyncIterable<T>): Promise<T[]> {
  const out: T[] = [];
  for await (const item of items) out.push(item);
  return out;
}

function revisions(entries: readonly LogEntry[]): number[] {
  return entries.map((entry) => entry.revision);
}

function range(from: number, to: number): number[] {
  return Array.from({ length: to - from + 1 }, (_, i) => from + i);
}

function tick(i: number): Promise<void> {
  return i % 2 === 0 ? Promise.resolve() : new Promise((resolve) => setImmediate(resolve));
}

/** Registers the `EventLog` contract cases for one adapter. */
export function eventLogContract(adapter: string, makeFixture: LogFixtureFactory): void {
  describe(`EventLog contract: ${adapter}`, () => {
    const fixtures: LogFixture[] = [];
    const logs: LogAdapter[] = [];

    async function setup(
      options: { now?: () => Date } = {},
    ): Promise<{ log: LogAdapter; reopen(): Promise<LogAdapter> }> {
      const fixture = await makeFixture(options);
      fixtures.push(fixture);
      logs.push(fixture.log);
      await fixture.log.open();
      return {
        log: fixture.log,
        async reopen() {
          const log = fixture.reopen();
          logs.push(log);
          await log.open();
          return log;
        },
      };
    }

    afterEach(async () => {
      for (const log of logs.splice(0)) await log.close();
      for (const fixture of fixtures.splice(0)) await fixture.cleanup();
    });

    it('assigns revisions gap-free from 1', async () => {
      const { log } = await setup();
      expect(log.head()).toBe(0);
      const results = [log.append([change('a')]), log.append([change('b')]), log.append([change('c')])];
      expect(results.map((result) => result.entries[0].revision)).toEqual([1, 2, 3]);
      await Promise.all(results.map((result) => result.durable));
      expect(log.head()).toBe(3);
      expect(revisions(await collect(log.read(1)))).toEqual([1, 2, 3]);
    });

    it('appends the inputs of one call as one contiguous group', async () => {
      const { log } = await setup();
      await log.append([change('first')]).durable;
      const batches: number[][] = [];
      log.onCommit((entries) => batches.push(revisions(entries)));
      const { entries, durable } = log.append(range(1, 5).map((i) => change(`r${i}`)));
      expect(revisions(entries)).toEqual([2, 3, 4, 5, 6]);
      expect(new Set(entries.map((entry) => entry.time)).size).toBe(1);
      await durable;
      expect(batches).toEqual([[2, 3, 4, 5, 6]]);
      expect(log.head()).toBe(6);
    });

    it('stamps entries with the injected clock', async () => {
      const { log } = await setup({ now: () => new Date('2024-05-06T07:08:09.010Z') });
      const { entries, durable } = log.append([change('a')]);
      await durable;
      expect(entries[0].time).toBe('2024-05-06T07:08:09.010Z');
      expect((await collect(log.read(1)))[0].time).toBe('2024-05-06T07:08:09.010Z');
    });

    it('puts 200 appends of the same tick in one batch', async () => {
      const { log } = await setup();
      const before = log.stats().batches;
      const results = range(1, 200).map((i) => log.append([change(`r${i}`)]));
      await Promise.all(results.map((result) => result.durable));
      expect(log.stats().batches - before).toBe(1);
      expect(results.map((result) => result.entries[0].revision)).toEqual(range(1, 200));
      expect(log.head()).toBe(200);
    });

    it('groups 200 appends spread over ticks into fewer batches than appends', async () => {
      const { log } = await setup();
      const before = log.stats();
      const durables: Promise<void>[] = [];
      let settled = 0;
      for (let i = 1; i <= 200; i += 1) {
        const { durable } = log.append([change(`r${i}`)]);
        durables.push(durable.then(() => void (settled += 1)));
        if (i % 10 === 0) await tick(i / 10);
      }
      await Promise.all(durables);
      const after = log.stats();
      expect(settled).toBe(200);
      expect(after.entries - before.entries).toBe(200);
      expect(after.batches - before.batches).toBeLessThan(200);
      expect(revisions(await collect(log.read(1)))).toEqual(range(1, 200));
    });

    it('calls listeners with each batch in revision order before durable resolves', async () => {
      const { log } = await setup();
      const seen: number[] = [];
      const unsubscribe = log.onCommit((entries) => seen.push(...revisions(entries)));
      const checks: Promise<void>[] = [];
      for (let i = 1; i <= 50; i += 1) {
        const { entries, durable } = log.append([change(`r${i}`), change(`s${i}`)]);
        checks.push(
          durable.then(() => {
            for (const entry of entries) expect(seen).toContain(entry.revision);
          }),
        );
        if (i % 7 === 0) await tick(i);
      }
      await Promise.all(checks);
      expect(seen).toEqual(range(1, 100));
      unsubscribe();
      await log.append([change('after')]).durable;
      expect(seen).toHaveLength(100);
    });

    it('chains hashes from the genesis hash and verifies', async () => {
      const { log } = await setup();
      const appended = log.append([change('a'), change('b', { mesh: 'm1' })]).entries;
      appended.push(...log.append([change('a', { operation: 'delete' })]).entries);
      await log.append([]).durable;
      const entries = await collect(log.read(1));
      expect(entries).toEqual(appended);
      expect(entries[0].prevHash).toBe(GENESIS_HASH);
      for (const [i, entry] of entries.entries()) {
        if (i > 0) expect(entry.prevHash).toBe(entries[i - 1].hash);
        const { hash, ...unsealed } = entry;
        expect(hashEntry(unsealed)).toBe(hash);
      }
      expect(await verifyEntries(log.read(1))).toEqual({ ok: true, head: 3 });
    });

    it('reads ranges of durable entries', async () => {
      const { log } = await setup();
      await log.append(range(1, 10).map((i) => change(`r${i}`))).durable;
      expect(revisions(await collect(log.read(3, 5)))).toEqual([3, 4, 5]);
      expect(revisions(await collect(log.read(8)))).toEqual([8, 9, 10]);
      expect(revisions(await collect(log.read(0, 2)))).toEqual([1, 2]);
      expect(revisions(await collect(log.read(9, 100)))).toEqual([9, 10]);
      expect(await collect(log.read(11))).toEqual([]);
      expect(await collect(log.read(5, 4))).toEqual([]);
    });

    it('reads raw entry text in chunks, forwards and newest first', async () => {
      const { log } = await setup();
      await log.append(range(1, 2500).map((i) => change(`r${i}`))).durable;
      const raw = async (opts: { from?: number; to?: number; reverse?: boolean }) => {
        const chunks: string[][] = [];
        for await (const chunk of log.readRawChunks(opts)) chunks.push(chunk);
        return chunks;
      };
      const all = await raw({});
      expect(all.every((c) => c.length <= 1000)).toBe(true);
      const parsed = all.flat().map((s) => JSON.parse(s) as { revision: number });
      expect(parsed.map((e) => e.revision)).toEqual(range(1, 2500));
      expect(all.flat()).toEqual((await collect(log.read(1))).map((e) => JSON.stringify(e)));
      const back = (await raw({ from: 10, to: 1200, reverse: true })).flat();
      expect(back.map((s) => (JSON.parse(s) as { revision: number }).revision)).toEqual(
        range(10, 1200).reverse(),
      );
      expect(await raw({ from: 2501 })).toEqual([]);
    });

    it("returns one resource's history, oldest first, also once deleted", async () => {
      const { log } = await setup();
      await log.append([change('b', { mesh: 'a' })]).durable;
      await log.append([
        change('b', { mesh: 'other' }),
        change('b'),
        change('bc', { mesh: 'a' }),
        change('b', { mesh: 'ab' }),
        change('b', { mesh: 'a', kind: 'TrafficRoute' }),
      ]).durable;
      await log.append([change('b', { mesh: 'a', operation: 'update', spec: 'v2' })]).durable;
      await log.append([change('b', { mesh: 'a', operation: 'delete', spec: 'v2' })]).durable;

      const history = await collect(log.history('TrafficPermission', 'a', 'b'));
      expect(revisions(history)).toEqual([1, 7, 8]);
      expect(history.map((entry) => entry.operation)).toEqual(['create', 'update', 'delete']);
      expect(history[2].previous).toMatchObject({ name: 'b', mesh: 'a', spec: 'v2' });
      expect(history[2].resource).toBeUndefined();
      expect(revisions(await collect(log.history('TrafficPermission', 'other', 'b')))).toEqual([2]);
      expect(revisions(await collect(log.history('TrafficPermission', undefined, 'b')))).toEqual([3]);
      expect(revisions(await collect(log.history('TrafficRoute', 'a', 'b')))).toEqual([6]);
      expect(await collect(log.history('TrafficPermission', 'a', 'missing'))).toEqual([]);
    });

    it('writes meta with an append, in the same batch, and keeps it across reopen', async () => {
      const { log, reopen } = await setup();
      expect(await log.getMeta('cursor')).toBeUndefined();
      const first = log.append([change('a')], { cursor: '1', zone: 'z1' });
      const second = log.append([change('b')], { cursor: '2' });
      let seenCursor: string | undefined;
      log.onCommit(() => void log.getMeta('cursor').then((value) => (seenCursor ??= value)));
      await Promise.all([first.durable, second.durable]);
      expect(await log.getMeta('cursor')).toBe('2');
      expect(await log.getMeta('zone')).toBe('z1');
      expect(seenCursor).toBe('2');
      await log.putMeta('snapshot', '42');
      expect(await log.getMeta('snapshot')).toBe('42');
      await log.close();
      const again = await reopen();
      expect(await again.getMeta('cursor')).toBe('2');
      expect(await again.getMeta('zone')).toBe('z1');
      expect(await again.getMeta('snapshot')).toBe('42');
    });

    it("refuses to write the log's own meta key", async () => {
      const { log } = await setup();
      expect(() => log.append([change('a')], { head: '7' })).toThrow(AppError);
      await expect(log.putMeta('head', '7')).rejects.toThrow(AppError);
      expect(log.head()).toBe(0);
    });

    it('continues the chain after reopen', async () => {
      const { log, reopen } = await setup();
      await log.append([change('a'), change('b')]).durable;
      const { entries } = log.append([change('c')]);
      await log.close();
      const again = await reopen();
      expect(again.head()).toBe(3);
      const next = again.append([change('d')]);
      expect(next.entries[0].revision).toBe(4);
      expect(next.entries[0].prevHash).toBe(entries[0].hash);
      await next.durable;
      expect(await verifyEntries(again.read(1))).toEqual({ ok: true, head: 4 });
    });

    it('reads back every entry identical after reopen', async () => {
      const { log, reopen } = await setup();
      const written: LogEntry[] = [];
      for (let i = 0; i < 25; i += 1) {
        written.push(...log.append(range(1, 100).map((j) => change(`r${j}`, { mesh: `m${i}` }))).entries);
      }
      await log.append([]).durable;
      await log.close();
      const again = await reopen();
      expect(again.head()).toBe(2500);
      expect(await collect(again.read(1))).toEqual(written);
      expect(await collect(again.history('TrafficPermission', 'm3', 'r7'))).toEqual([written[306]]);
    });

    it("keeps a change set's id on its entries through read, history, raw chunks and reopen, hashed", async () => {
      const { log, reopen } = await setup();
      await log.append([change('single')]).durable;
      const set = log.append(['a', 'b', 'c'].map((n) => ({ ...change(n), changeSet: 'set-1' })));
      await set.durable;
      expect(set.entries.map((e) => [e.revision, e.changeSet])).toEqual([
        [2, 'set-1'],
        [3, 'set-1'],
        [4, 'set-1'],
      ]);
      await log.close();
      const again = await reopen();
      const entries = await collect(again.read(1));
      expect(entries.map((e) => e.changeSet)).toEqual([undefined, 'set-1', 'set-1', 'set-1']);
      expect(entries[0]).not.toHaveProperty('changeSet');
      expect((await collect(again.history('TrafficPermission', undefined, 'b')))[0].changeSet).toBe('set-1');
      const raw = (await collect(again.readRawChunks({}))).flat();
      expect(JSON.parse(raw[3]).changeSet).toBe('set-1');
      expect(await verifyEntries(again.read(1))).toEqual({ ok: true, head: 4 });
      // The id is part of what is hashed: an entry with another id does not verify.
      const { hash, ...unsealed } = entries[2];
      expect(hashEntry({ ...unsealed, changeSet: 'set-2' })).not.toBe(hash);
    });

    it('refuses appends after close', async () => {
      const { log } = await setup();
      await log.append([change('a')]).durable;
      await log.close();
      let error: unknown;
      try {
        log.append([change('b')]);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(AppError);
      expect((error as AppError).code).toBe('UNAVAILABLE');
      await expect(log.putMeta('k', 'v')).rejects.toMatchObject({ code: 'UNAVAILABLE' });
    });

    it('waits on close for queued appends', async () => {
      const { log, reopen } = await setup();
      let settled = 0;
      const results = range(1, 30).map((i) => log.append([change(`r${i}`)]));
      for (const result of results) void result.durable.then(() => (settled += 1));
      await new Promise((resolve) => setImmediate(resolve));
      results.push(log.append([change('late')]));
      void results[30].durable.then(() => (settled += 1));
      await log.close();
      expect(settled).toBe(31);
      const again = await reopen();
      expect(again.head()).toBe(31);
    });
  });
}
