import { createHash } from 'node:crypto';

import { describe, expect, it } from 'vitest';

import { GENESIS_HASH, hashEntry, sealEntry, verifyEntries } from '../../../src/events/hash.js';
import type { EventInput, LogEntry } from '../../../src/events/types.js';

const input: EventInput = {
  kind: 'TrafficPermission',
  mesh: 'default',
  name: 'allow-all',
  operation: 'create',
  resource: {
    type: 'TrafficPermission',
    mesh: 'default',
    name: 'allow-all',
    creationTime: '2024-01-01T00:00:00.000Z',
    modificationTime: '2024-01-01T00:00:00.000Z',
  },
  actor: { name: 'alice', groups: [], address: '127.0.0.1' },
  origin: 'local',
};

function chain(length: number): LogEntry[] {
  const entries: LogEntry[] = [];
  let prevHash = GENESIS_HASH;
  for (let revision = 1; revision <= length; revision += 1) {
    const { entry } = sealEntry(input, revision, '2024-01-01T00:00:00.000Z', prevHash);
    entries.push(entry);
    prevHash = entry.hash;
  }
  return entries;
}

describe('verifyEntries', () => {
  it('accepts a sound chain and an empty one', async () => {
    expect(await verifyEntries(chain(4))).toEqual({ ok: true, head: 4 });
    expect(await verifyEntries([])).toEqual({ ok: true, head: 0 });
  });

  it('reads async iterables', async () => {
    async function* entries() {
      yield* chain(3);
    }
    expect(await verifyEntries(entries())).toEqual({ ok: true, head: 3 });
  });

  it('detects a changed field', async () => {
    const entries = chain(4);
    entries[2] = { ...entries[2], actor: { ...entries[2].actor, name: 'mallory' } };
    expect(await verifyEntries(entries)).toMatchObject({ ok: false, revision: 3 });
  });

  it('detects a gap in the revisions', async () => {
    const entries = chain(4);
    entries.splice(1, 1);
    expect(await verifyEntries(entries)).toMatchObject({ ok: false, revision: 3 });
  });

  it('detects a chain that does not start at 1', async () => {
    expect(await verifyEntries(chain(3).slice(1))).toMatchObject({ ok: false, revision: 2 });
  });

  it('detects a broken prevHash even when the entry hash was recomputed', async () => {
    const entries = chain(4);
    const { hash: _hash, ...unsealed } = entries[2];
    const forged = { ...unsealed, prevHash: 'f'.repeat(64) };
    entries[2] = { ...forged, hash: hashEntry(forged) };
    const result = await verifyEntries(entries);
    expect(result).toMatchObject({ ok: false, revision: 3 });
    expect(result.ok === false && result.reason).toContain('prevHash');
  });
});

describe('sealEntry', () => {
  const { mesh: _m, ...global } = input;
  const deletion: EventInput = {
    ...input,
    operation: 'delete',
    resource: undefined,
    previous: input.resource,
  };
  const base = ['revision', 'time', 'kind'];
  it.each([
    ['a mesh-scoped create', input, [...base, 'mesh', 'name', 'operation', 'resource']],
    [
      'a global resource (no mesh key)',
      { ...global, kind: 'Zone', name: 'zone-1' },
      [...base, 'name', 'operation', 'resource'],
    ],
    ['a delete (previous, no resource key)', deletion, [...base, 'mesh', 'name', 'operation', 'previous']],
  ])('%s: the stored JSON is the entry, keys in hashed order, hashed without its hash', (_what, e, keys) => {
    const prevHash = 'a'.repeat(64);
    const { entry, json } = sealEntry(e as EventInput, 7, '2024-01-02T00:00:00.000Z', prevHash);
    expect(json).toBe(JSON.stringify(entry));
    expect(Object.keys(entry)).toEqual([...keys, 'actor', 'origin', 'prevHash', 'hash']);
    const { hash, ...unsealed } = entry;
    expect(hash).toBe(hashEntry(unsealed));
    expect(hash).toMatch(/^[0-9a-f]{64}$/);
  });

  it('keeps the hash of a known entry (the stored format does not drift)', () => {
    const { entry } = sealEntry(input, 1, '2024-01-01T00:00:00.000Z', GENESIS_HASH);
    const text = JSON.stringify({ ...entry, hash: undefined });
    expect(entry.hash).toBe(createHash('sha256').update(GENESIS_HASH).update(text).digest('hex'));
  });
});
