import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { UsageError, parseOutputFormat } from '../cli-context.js';
import type { KindInfo } from '../kind-table.js';
import { KIND_TABLE } from '../kind-table.js';
import { emptyListText } from '../empty-list.js';
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

/** Collects a repeatable flag's values. */
export const repeatable = (v: string, acc: string[]): string[] => [...acc, v];

/** The `tag=key:value` query values of `--tag key=value` flags (decisions §5). */
export function tagQuery(tags: readonly string[]): string[] {
  return tags.map((t) => {
    const i = t.indexOf('=');
    if (i <= 0 || i === t.length - 1) throw new UsageError(`--tag takes key=value, not "${t}"`);
    return `${t.slice(0, i)}:${t.slice(i + 1)}`;
  });
}

/** Checks `-A` against a kind: only mesh-scoped kinds with a list of every mesh (spec 4.5) take it. */
export function checkAllMeshes(kind: KindInfo): void {
  if (kind.scope !== 'mesh')
    throw new UsageError(`${kind.path} are not in a mesh: -A applies to mesh-scoped kinds`);
  if (!kind.crossMeshList) throw new UsageError(`the API has no list of ${kind.path} across meshes`);
}

/** Options of `meshctl get`. */
interface GetOptions {
  mesh: string;
  allMeshes?: boolean;
  tag: string[];
  output: string;
  size?: number;
  offset?: string;
}

/** `meshctl get <kind> [name]`: lists or shows resources of any kind of the registry. */
export function registerGet(program: Command, cli: CliContext): void {
  program
    .command('get')
    .description('show resources of a kind: a page of them, or one by name')
    .argument('<kind>', 'kind, singular or plural (meshes, dataplane, traffic-permissions, …)')
    .argument('[name]', 'name of one resource')
    .option('-m, --mesh <mesh>', 'mesh of mesh-scoped kinds', 'default')
    .option('-A, --all-meshes', 'list a mesh-scoped kind in every mesh')
    .option(
      '--tag <key=value>',
      'only dataplanes or external services with this tag (repeatable)',
      repeatable,
      [],
    )
    .option('-o, --output <format>', 'output format: table, yaml or json', 'table')
    .option('--size <n>', 'page size (server default 100)', positiveInt('size'))
    .option('--offset <k>', 'where the page starts (from "Rest of the list")')
    .action(async (word: string, name: string | undefined, opts: GetOptions) => {
      const kind = kindOrFail(word);
      const format = parseOutputFormat(opts.output);
      const tags = tagQuery(opts.tag);
      if (tags.length > 0 && (!kind.tagSets || name !== undefined)) {
        throw new UsageError(
          `--tag filters dataplanes and external-services lists (inspect dataplanes takes it too), not ${name === undefined ? kind.path : 'one resource'}`,
        );
      }
      if (opts.allMeshes) {
        checkAllMeshes(kind);
        if (name !== undefined) throw new UsageError('-A lists; one resource is in the mesh --mesh names');
      }
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
      const mesh = opts.allMeshes ? undefined : opts.mesh;
      const res = await api.request<ListBody>('GET', collectionPath(kind, mesh), {
        query: { tag: tags, size: opts.size, offset: opts.offset },
      });
      if (format === 'table' && res.body.items.length === 0) {
        cli.stderr.write(
          emptyListText({
            noun: kind.path,
            mesh: kind.scope === 'mesh' ? opts.mesh : undefined,
            allMeshes: opts.allMeshes,
            tags: opts.tag,
            offset: opts.offset,
            total: res.body.total,
          }),
        );
        return;
      }
      await cli.print(format, res.body, () => {
        const table = resourceTable(kind, res.body.items);
        const offset = nextOffset(res.body.next);
        if (offset !== undefined) {
          const flags = [
            ...(opts.allMeshes
              ? ['-A']
              : kind.scope === 'mesh' && opts.mesh !== 'default'
                ? [`--mesh ${opts.mesh}`]
                : []),
            ...opts.tag.map((t) => `--tag ${t}`),
            ...(opts.size !== undefined ? [`--size ${opts.size}`] : []),
          ];
          table.footer = ['Rest of the list: meshctl get', word, ...flags, `--offset ${offset}`].join(' ');
        }
        return table;
      });
    });
}
