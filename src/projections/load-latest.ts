import type { EventLog } from '../events/event-log.js';
import type { LogEntry } from '../events/types.js';
import type { ResourceViews } from './resource-views.js';
import { resourceKey } from '../resources/keys.js';

/**
 * The fields an entry's JSON starts with, in the order the log writes them (events/hash.ts
 * `sealEntry`): enough to know which resource it changed without parsing the rest.
 */
const PREFIX = /^\{"revision":\d+,"time":"([^"]*)","kind":"([^"]+)",(?:"mesh":"([^"]*)",)?"name":"([^"]*)",/;

/**
 * Loads the views with the state after revision `to`, reading the log newest first: only the last
 * change of each resource is parsed and applied; older changes are skipped unparsed. The views end
 * exactly as a replay of every entry in order would leave them (tested), at a fraction of the
 * parsing and garbage. Returns how many entries were read.
 */
export async function loadLatest(
  log: Pick<EventLog, 'readRawChunks'>,
  views: ResourceViews,
  range: { from?: number; to: number },
): Promise<number> {
  const seen = new Set<string>();
  let read = 0;
  for await (const chunk of log.readRawChunks({ from: range.from, to: range.to, reverse: true })) {
    const batch: LogEntry[] = [];
    for (const json of chunk) {
      read++;
      const m = PREFIX.exec(json);
      let entry: LogEntry | undefined;
      let key: string;
      if (m) key = resourceKey(m[2], m[3], m[4]);
      else {
        entry = JSON.parse(json) as LogEntry;
        key = resourceKey(entry.kind, entry.mesh, entry.name);
      }
      if (seen.has(key)) continue;
      seen.add(key);
      batch.push(entry ?? (JSON.parse(json) as LogEntry));
    }
    // A delete of a resource the views never held changes nothing but tells listeners its time.
    views.apply(batch);
  }
  views.advance(range.to);
  return read;
}
