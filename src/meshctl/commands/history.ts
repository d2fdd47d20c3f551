import type { Command } from 'commander';
import type { HistoryItem } from '../wire-types.js';
import type { CliContext } from '../cli-context.js';
import { parseOutputFormat, UsageError, type OutputFormat } from '../cli-context.js';
import type { Page } from '../event-rows.js';
import {
  HISTORY_HEADERS,
  historyRow,
  TIMELINE_HEADERS,
  timelineRow,
  type TimelineItem,
} from '../event-rows.js';
import { itemPath } from '../kinds.js';
import { nextOffset } from '../resource-table.js';
import { storedKindOrFail } from '../stored-kind.js';
import { positiveInt } from './get.js';

/** `meshctl history <kind> <name>`: the changes of one resource, oldest first (`GET …/_history`). */
export function registerHistory(program: Command, cli: CliContext): void {
  program
    .command('history')
    .description('the changes of one resource, oldest first: revision, time, operation, actor')
    .argument('<kind>', 'a stored kind, singular or plural (mesh, dataplanes, traffic-permission, …)')
    .argument('<name>', 'name of the resource (it may have been deleted)')
    .option('-m, --mesh <mesh>', 'mesh of mesh-scoped kinds', 'default')
    .option('-o, --output <format>', 'output format: table, yaml or json (with each state)', 'table')
    .option('--size <n>', 'page size (server default 100)', positiveInt('size'))
    .option('--offset <k>', 'where the page starts (from "Rest of the history")')
    .option(
      '--config',
      "with dataplane NAME: the proxy's config timeline (when its served config changed, and which write did it)",
    )
    .option('--from <time>', 'with --config: changes at or after this time (RFC 3339)')
    .option('--to <time>', 'with --config: changes at or before this time (RFC 3339)')
    .option(
      '--include-secret-data',
      "show a secret's data instead of its sha256 (needs the right to read it)",
    )
    .addHelpText(
      'after',
      `
Examples:
  $ meshctl history traffic-permission allow-all-default
  $ meshctl history mesh default -o yaml
  $ meshctl history dataplane web-1 --config                           # what changed its served config
  $ meshctl diff traffic-permission allow-all-default --revision 3     # what changed since revision 3`,
    )
    .action(
      async (
        word: string,
        name: string,
        opts: {
          mesh: string;
          output: string;
          size?: number;
          offset?: string;
          includeSecretData?: boolean;
          config?: boolean;
          from?: string;
          to?: string;
        },
      ) => {
        const kind = storedKindOrFail(word);
        const format = parseOutputFormat(opts.output);
        if (opts.config) return configTimeline(cli, word, name, kind.kind, format, opts);
        if (opts.from !== undefined || opts.to !== undefined)
          throw new UsageError("--from and --to go with --config (a dataplane's config timeline)");
        const api = await cli.api();
        const res = await api.request<Page<HistoryItem>>(
          'GET',
          `${itemPath(kind, opts.mesh, name)}/_history`,
          {
            query: {
              size: opts.size,
              offset: opts.offset,
              includeSecretData: opts.includeSecretData ? 'true' : undefined,
            },
          },
        );
        await cli.print(format, res.body, () => {
          const offset = nextOffset(res.body.next);
          const mesh = kind.scope === 'mesh' && opts.mesh !== 'default' ? ` --mesh ${opts.mesh}` : '';
          const size = opts.size !== undefined ? ` --size ${opts.size}` : '';
          const data = opts.includeSecretData ? ' --include-secret-data' : '';
          return {
            headers: HISTORY_HEADERS,
            rows: res.body.items.map(historyRow),
            footer:
              offset === undefined
                ? undefined
                : `Rest of the history: meshctl history ${word} ${name}${mesh}${size}${data} --offset ${offset}`,
          };
        });
      },
    );
}

/** `meshctl history dataplane NAME --config`: the proxy's config timeline (`GET …/xds/_history`). */
async function configTimeline(
  cli: CliContext,
  word: string,
  name: string,
  kind: string,
  format: OutputFormat,
  opts: {
    mesh: string;
    size?: number;
    offset?: string;
    from?: string;
    to?: string;
    includeSecretData?: boolean;
  },
): Promise<void> {
  if (kind !== 'Dataplane')
    throw new UsageError(`--config goes with dataplane NAME (a proxy's config), not ${word}`);
  if (opts.includeSecretData) throw new UsageError('--include-secret-data does not go with --config');
  const api = await cli.api();
  const res = await api.request<Page<TimelineItem>>(
    'GET',
    `/meshes/${encodeURIComponent(opts.mesh)}/dataplanes/${encodeURIComponent(name)}/xds/_history`,
    { query: { size: opts.size, offset: opts.offset, from: opts.from, to: opts.to } },
  );
  await cli.print(format, res.body, () => {
    const offset = nextOffset(res.body.next);
    const flags = [
      ...(opts.mesh !== 'default' ? [`--mesh ${opts.mesh}`] : []),
      ...(opts.from !== undefined ? [`--from ${opts.from}`] : []),
      ...(opts.to !== undefined ? [`--to ${opts.to}`] : []),
      ...(opts.size !== undefined ? [`--size ${opts.size}`] : []),
    ].join(' ');
    return {
      headers: TIMELINE_HEADERS,
      rows: res.body.items.map(timelineRow),
      footer:
        offset === undefined
          ? undefined
          : `Rest of the timeline: meshctl history ${word} ${name} --config ${flags ? `${flags} ` : ''}--offset ${offset}`,
    };
  });
}
