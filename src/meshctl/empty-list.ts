/** Where a list was read and with which filters, for the line that says it is empty. */
export interface EmptyListScope {
  /** What the list holds, plural: `dataplanes`, `data plane proxies`, `zone egresses`. */
  noun: string;
  /** The mesh of a mesh-scoped list; absent for global kinds. */
  mesh?: string;
  /** `-A`: every mesh. */
  allMeshes?: boolean;
  /** The `--tag key=value` filters. */
  tags?: readonly string[];
  /** Other filters, in words (`that are gateways`). */
  qualifiers?: readonly string[];
  /** The `--offset` given, and the total the server counted: a page past the end. */
  offset?: string;
  total?: number;
}

/**
 * The line an empty table prints instead of a bare header (as kubectl's "No resources found"):
 * `no dataplanes in mesh "demo" with tag version=v9`, `no meshes at offset 50 (there are 3)`.
 */
export function emptyListText(s: EmptyListScope): string {
  const parts = [`no ${s.noun}`];
  if (s.allMeshes) parts.push('in any mesh');
  else if (s.mesh !== undefined) parts.push(`in mesh "${s.mesh}"`);
  if (s.tags && s.tags.length > 0) parts.push(`with tag${s.tags.length > 1 ? 's' : ''} ${s.tags.join(', ')}`);
  parts.push(...(s.qualifiers ?? []));
  if (s.offset !== undefined && s.offset !== '0' && (s.total ?? 0) > 0) {
    parts.push(`at offset ${s.offset} (there are ${s.total})`);
  }
  return `${parts.join(' ')}\n`;
}
