import type { Command } from 'commander';
import type { EventItem } from '../wire-types.js';
import type { CliContext } from '../cli-context.js';
import { parseOutputFormat } from '../cli-context.js';
import type { EventFilterOptions } from '../event-filters.js';
import { eventFilterOptions, eventQuery } from '../event-filters.js';
import type { Page } from '../event-rows.js';
import { EVENT_HEADERS, eventRow } from '../event-rows.js';
import { nextOffset } from '../resource-table.js';
import { positiveInt } from './get.js';

/** `meshctl audit`: a page of the audit log (`GET /_events`), filtered, oldest first. */
export function registerAudit(program: Command, cli: CliContext): void {
  eventFilterOptions(
    program
      .command('audit')
      .description('the audit log: who changed what and when, oldest first')
      .option('-o, --output <format>', 'output format: table, yaml or json (with each state)', 'table')
      .option('--size <n>', 'page size (server default 100)', positiveInt('size'))
      .option('--offset <k>', 'where the page starts (from "Rest of the log")'),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ meshctl audit --actor alice
  $ meshctl audit --kind traffic-permissions --mesh default --from-revision 100 --size 20`,
    )
    .action(async (opts: EventFilterOptions & { output: string; size?: number; offset?: string }) => {
      const format = parseOutputFormat(opts.output);
      const api = await cli.api();
      const res = await api.request<Page<EventItem>>('GET', '/_events', {
        query: { ...eventQuery(opts), size: opts.size, offset: opts.offset },
      });
      await cli.print(format, res.body, () => {
        const offset = nextOffset(res.body.next);
        return {
          headers: EVENT_HEADERS,
          rows: res.body.items.map(eventRow),
          footer: offset === undefined ? undefined : `Rest of the log: ${restCommand(opts, offset)}`,
        };
      });
    });
}

/** The `meshctl audit` command line of the next page. */
function restCommand(opts: EventFilterOptions & { size?: number }, offset: string): string {
  const flags: Array<[string, string | number | undefined]> = [
    ['--from-revision', opts.fromRevision],
    ['--kind', opts.kind],
    ['--mesh', opts.mesh],
    ['--name', opts.name],
    ['--actor', opts.actor],
    ['--size', opts.size],
    ['--offset', offset],
  ];
  return ['meshctl audit', ...flags.filter(([, v]) => v !== undefined).map(([f, v]) => `${f} ${v}`)].join(
    ' ',
  );
}
