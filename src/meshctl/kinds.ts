import type { KindInfo } from './kind-table.js';
import { KIND_TABLE } from './kind-table.js';

/** Lower case without dashes: `Traffic-Permissions` and `trafficpermissions` look the same. */
const norm = (s: string): string => s.toLowerCase().replace(/-/g, '');

/** The names a user may give a kind: its kind name, path and aliases, singular or plural. */
export function kindNames(k: KindInfo): string[] {
  const kind = norm(k.kind);
  const forms = [kind, `${kind}s`, k.path, ...k.aliases, ...k.itemAliases];
  if (k.path.endsWith('s')) forms.push(k.path.slice(0, -1));
  if (kind.endsWith('y')) forms.push(`${kind.slice(0, -1)}ies`);
  if (kind.endsWith('s')) forms.push(`${kind}es`);
  return [...new Set(forms.map(norm))];
}

let byName: Map<string, KindInfo> | undefined;

/** The kind a user's word names (`dataplane`, `traffic-permissions`, `trafficpermissions`), if any. */
export function findKind(word: string): KindInfo | undefined {
  if (!byName) {
    byName = new Map();
    // Earlier kinds win a clash of names: the registry lists stored kinds before derived ones.
    for (const k of KIND_TABLE) for (const n of kindNames(k)) if (!byName.has(n)) byName.set(n, k);
  }
  return byName.get(norm(word));
}

/** The kind of a document's `type`: mesh-scoped when the document names a mesh. */
export function kindOfType(type: string, hasMesh: boolean): KindInfo | undefined {
  const candidates = KIND_TABLE.filter((k) => !k.derived && k.acceptedTypes.includes(type));
  return (
    candidates.find((k) => (k.scope === 'mesh') === hasMesh) ??
    candidates.find((k) => k.wireType === type) ??
    candidates[0]
  );
}

/** The collection URL of a kind (`/meshes/default/traffic-permissions`, `/zones`). */
export function collectionPath(k: KindInfo, mesh: string | undefined): string {
  return k.scope === 'mesh' && mesh !== undefined
    ? `/meshes/${encodeURIComponent(mesh)}/${k.path}`
    : `/${k.path}`;
}

/** The URL of one resource. */
export function itemPath(k: KindInfo, mesh: string | undefined, name: string): string {
  return `${collectionPath(k, mesh)}/${encodeURIComponent(name)}`;
}
