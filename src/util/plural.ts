/** `1 entry`, `2 entries`: a count with its noun in the right number (`plural` defaults to noun + "s"). */
export function counted(n: number, singular: string, plural = `${singular}s`): string {
  return `${n} ${n === 1 ? singular : plural}`;
}
