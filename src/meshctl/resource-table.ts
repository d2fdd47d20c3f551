import type { Table } from './cli-context.js';
import type { KindInfo } from './kind-table.js';
import { age } from './table.js';

/** A resource as the API answers it. */
export type Resource = Record<string, unknown>;

/** A list answer (decisions §5). */
export interface ListBody {
  total?: number;
  items: Resource[];
  next: string | null;
}

/** `k=v` pairs of every tag set of a resource, deduplicated, sorted, comma-separated. */
export function formatTags(sets: Array<Record<string, string>>): string {
  const pairs = new Set<string>();
  for (const set of sets) for (const [k, v] of Object.entries(set)) pairs.add(`${k}=${v}`);
  return [...pairs].sort().join(',');
}

/** The table of resources of one kind: MESH (mesh-scoped kinds), NAME, TAGS (kinds with tags), AGE. */
export function resourceTable(kind: KindInfo, items: Resource[], now = Date.now()): Table {
  const mesh = kind.scope === 'mesh';
  const tags = kind.tagSets;
  const headers = [...(mesh ? ['MESH'] : []), 'NAME', ...(tags ? ['TAGS'] : []), 'AGE'];
  const rows = items.map((r) => [
    ...(mesh ? [String(r.mesh ?? '')] : []),
    String(r.name ?? ''),
    ...(tags ? [formatTags(tags(r))] : []),
    age(r.creationTime, now),
  ]);
  return { headers, rows };
}

/** The `offset` of a `next` URL, if there is a next page. */
export function nextOffset(next: string | null | undefined): string | undefined {
  if (!next) return undefined;
  try {
    return new URL(next).searchParams.get('offset') ?? undefined;
  } catch {
    return undefined;
  }
}
