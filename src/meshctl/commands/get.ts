import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { UsageError, parseOutputFormat } from '../cli-context.js';
import type { KindInfo } from '../kind-table.js';
import { KIND_TABLE } from '../kind-table.js';
import { collectionPath, findKind, itemPath } from '../kinds.js';
import type { ListBody, Resource } from '../resource-table.js';
import { nextOffset, resourceTable } from '../resource-table.js';

/** The kind a user's word names, or a usage error listing the kinds. */
export function kindOrFail(word: string): KindInfo {
  const k = findKind(word);
  if (!k) {
    throw new UsageError(`unknown kind "${word}"; kinds: ${KIND_TABLE.map((x) => x.path).join(', ')}`);
  }
  return k;
}

/** Parses a positive integer flag. */
export function positiveInt(name: string): (v: string) => number {
  return (v) => {
    const n = Number(v);
    if (!Number.isInteger(n) || n < 1)
      throw new UsageError(`--${name} must be a positive integer, not "${v}"`);
    return n;
  };
}

/** `meshctl get <kind> [name]`: lists or shows resources of any kind of the registry. */
export function registerGet(program: Command, cli: CliContext): void {
  program
    .command('get')
    .description('show resources of a kind: a page of them, or one by name')
    .argument('<kind>', 'kind, singular or plural (meshes, dataplane, traffic-permissions, …)')
    .argument('[name]', 'name of one resource')
    .option('-m, --mesh <mesh>', 'mesh of mesh-scoped kinds', 'default')
    .option('-o, --output <format>', 'output format: table, yaml or json', 'table')
    .option('--size <n>', 'page size (server default 100)', positiveInt('size'))
    .option('--offset <k>', 'where the page starts (from "Rest of the list")')
    .action(
      async (
        word: string,
        name: string | undefined,
        opts: { mesh: string; output: string; size?: number; offset?: string },
      ) => {
        const kind = kindOrFail(word);
        const format = parseOutputFormat(opts.output);
        const api = await cli.api();
        if (kind.singleton) {
          const res = await api.request<Resource>('GET', `/${kind.path}`);
          await cli.print(format === 'table' ? 'yaml' : format, res.body, () => ({ headers: [], rows: [] }));
          return;
        }
        if (name !== undefined) {
          const res = await api.request<Resource>('GET', itemPath(kind, opts.mesh, name));
          await cli.print(format, res.body, () => resourceTable(kind, [res.body]));
          return;
        }
        const res = await api.request<ListBody>('GET', collectionPath(kind, opts.mesh), {
          query: { size: opts.size, offset: opts.offset },
        });
        await cli.print(format, res.body, () => {
          const table = resourceTable(kind, res.body.items);
          const offset = nextOffset(res.body.next);
          if (offset !== undefined) {
            const mesh = kind.scope === 'mesh' && opts.mesh !== 'default' ? ` --mesh ${opts.mesh}` : '';
            const size = opts.size !== undefined ? ` --size ${opts.size}` : '';
            table.footer = `Rest of the list: meshctl get ${word}${mesh}${size} --offset ${offset}`;
          }
          return table;
        });
      },
    );
}
