/** Separator between mesh and name in view keys: sorts below every legal name character. */
export const SEP = '\u0000';

/** The view key of a resource: mesh (empty for global kinds), the separator, then the name. */
export function viewKey(mesh: string | undefined, name: string): string {
  return `${mesh ?? ''}${SEP}${name}`;
}

/** Key range [from, to) holding every resource of one mesh. */
export function meshRange(mesh: string): { from: string; to: string } {
  return { from: `${mesh}${SEP}`, to: `${mesh}\u0001` };
}
