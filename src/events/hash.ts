import { hash } from 'node:crypto';

import type { EventInput, LogEntry } from './types.js';

/** The `prevHash` of revision 1: 64 zeros. */
export const GENESIS_HASH = '0'.repeat(64);

/** How the JSON of an entry whose `hash` is still empty ends. */
const EMPTY_HASH_TAIL = ',"hash":""}';

/** A log entry before it is sealed: every field but `hash`, keys in the order they are hashed. */
export type UnsealedEntry = Omit<LogEntry, 'hash'>;

/** Result of {@link verifyEntries}: the head of a sound chain, or the first entry that breaks it. */
export type VerifyResult = { ok: true; head: number } | { ok: false; revision: number; reason: string };

/** sha256 hex of `prevHash` followed by `json`, the JSON of the entry without its `hash`. */
export function hashJson(prevHash: string, json: string): string {
  // One-shot: a Hash object per entry cost more than hashing the ~1 KB of text.
  return hash('sha256', prevHash + json, 'hex');
}

/** The hash of an entry: sha256 hex of its `prevHash` + the JSON of the entry without `hash`. */
export function hashEntry(entry: UnsealedEntry): string {
  return hashJson(entry.prevHash, JSON.stringify(entry));
}

/**
 * Builds the entry for `input` at `revision` (keys in hashed order) and hashes it; `json` is the
 * entry's JSON as stored, serialized once here so later changes to `input` cannot alter it.
 */
export function sealEntry(
  input: EventInput,
  revision: number,
  time: string,
  prevHash: string,
): { entry: LogEntry; json: string } {
  // Built by assignment in hashed key order (no spread copies), with `hash` last: the JSON of the
  // unsealed entry is the JSON of this object without its closing `,"hash":""}`.
  const entry = { revision, time, kind: input.kind } as LogEntry;
  if (input.mesh !== undefined) entry.mesh = input.mesh;
  entry.name = input.name;
  entry.operation = input.operation;
  if (input.resource !== undefined) entry.resource = input.resource;
  if (input.previous !== undefined) entry.previous = input.previous;
  entry.actor = input.actor;
  entry.origin = input.origin;
  if (input.changeSet !== undefined) entry.changeSet = input.changeSet;
  entry.prevHash = prevHash;
  entry.hash = '';
  // The entry's JSON up to its `prevHash` (no closing brace): hashed with the brace, stored with the
  // hash after it. Built from the pieces when the resource's JSON is given, so no copy of the whole
  // text is made before hashing it.
  const body =
    input.resourceJson !== undefined && input.resource !== undefined
      ? entryBody(entry, input.resourceJson)
      : JSON.stringify(entry).slice(0, -EMPTY_HASH_TAIL.length);
  entry.hash = hashJson(prevHash, `${body}}`);
  return { entry, json: `${body},"hash":"${entry.hash}"}` };
}

/**
 * `JSON.stringify(entry)` of an entry with a resource and an empty hash, without its closing
 * `,"hash":""}`, the resource's JSON (`JSON.stringify(entry.resource)`) given: the same text (keys
 * in the order sealEntry assigns them, each value as JSON.stringify writes it), without serializing
 * the resource again, ~1 µs of every write (test/unit/events/seal-entry.test.ts compares the two).
 */
function entryBody(entry: LogEntry, resourceJson: string): string {
  const str = JSON.stringify;
  const mesh = entry.mesh !== undefined ? `,"mesh":${str(entry.mesh)}` : '';
  const previous = entry.previous !== undefined ? `"previous":${str(entry.previous)},` : '';
  const changeSet = entry.changeSet !== undefined ? `"changeSet":${str(entry.changeSet)},` : '';
  return (
    `{"revision":${str(entry.revision)},"time":${str(entry.time)},"kind":${str(entry.kind)}${mesh},` +
    `"name":${str(entry.name)},"operation":${str(entry.operation)},"resource":${resourceJson},${previous}` +
    `"actor":${str(entry.actor)},"origin":${str(entry.origin)},${changeSet}"prevHash":${str(entry.prevHash)}`
  );
}

/**
 * Checks that revisions run gap-free from 1, that each `prevHash` is the hash of the entry before
 * and that each `hash` matches its entry; reports the first entry that does not.
 */
export async function verifyEntries(
  entries: Iterable<LogEntry> | AsyncIterable<LogEntry>,
): Promise<VerifyResult> {
  let head = 0;
  let prevHash = GENESIS_HASH;
  for await (const entry of entries) {
    const { hash, ...unsealed } = entry;
    if (entry.revision !== head + 1) {
      return { ok: false, revision: entry.revision, reason: `expected revision ${head + 1}` };
    }
    if (entry.prevHash !== prevHash) {
      const what = head === 0 ? 'the genesis hash' : `the hash of revision ${head}`;
      return { ok: false, revision: entry.revision, reason: `prevHash is not ${what}` };
    }
    if (hashEntry(unsealed) !== hash) {
      return { ok: false, revision: entry.revision, reason: 'hash does not match the entry' };
    }
    head = entry.revision;
    prevHash = hash;
  }
  return { ok: true, head };
}
