import type { Command } from 'commander';
import type { ApiClient } from '../api-client.js';
import type { EventItem } from '../wire-types.js';
import type { CliContext } from '../cli-context.js';
import { UsageError, parseOutputFormat } from '../cli-context.js';
import { emptyListText } from '../empty-list.js';
import type { EventFilterOptions } from '../event-filters.js';
import { eventFilterOptions, eventQuery } from '../event-filters.js';
import type { Page } from '../event-rows.js';
import { EVENT_HEADERS, eventRow } from '../event-rows.js';
import { nextOffset } from '../resource-table.js';
import { positiveInt } from './get.js';

/** Options of `meshctl audit`. */
interface AuditOptions extends EventFilterOptions {
  output: string;
  size?: number;
  offset?: string;
  tail?: number;
  newestFirst?: boolean;
}

/** The server's largest page (decisions §5). */
const MAX_PAGE = 1000;

/**
 * The newest entries: `count` of them, `skip` newest left out, in log order. The first request
 * counts the matching entries; the log only grows at its end, so the offsets it gives stay those
 * of the same entries while the rest is read.
 */
async function newest(
  api: ApiClient,
  query: Record<string, string | undefined>,
  count: number,
  skip: number,
): Promise<{ total: number; start: number; items: EventItem[] }> {
  const read = (offset: number, size: number) =>
    api.request<Page<EventItem>>('GET', '/_events', { query: { ...query, offset, size } });
  const { total } = (await read(0, 1)).body;
  const end = Math.max(0, total - skip);
  const start = Math.max(0, end - count);
  const items: EventItem[] = [];
  while (start + items.length < end) {
    const page = await read(start + items.length, Math.min(MAX_PAGE, end - start - items.length));
    if (page.body.items.length === 0) break;
    items.push(...page.body.items);
  }
  return { total, start, items: items.slice(0, end - start) };
}

/** `meshctl audit`: a page of the audit log (`GET /_events`), filtered; or its newest entries. */
export function registerAudit(program: Command, cli: CliContext): void {
  eventFilterOptions(
    program
      .command('audit')
      .description('the audit log: who changed what and when (oldest first, or the newest with --tail)')
      .option('-o, --output <format>', 'output format: table, yaml or json (with each state)', 'table')
      .option('--tail <n>', 'the newest N entries (in log order)', positiveInt('tail'))
      .option('--newest-first', 'newest entries on top; --offset then counts from the newest')
      .option('--size <n>', 'page size (server default 100)', positiveInt('size'))
      .option('--offset <k>', 'where the page starts (from "Rest of the log")'),
  )
    .addHelpText(
      'after',
      `
Examples:
  $ meshctl audit --tail 20
  $ meshctl audit --newest-first --actor alice
  $ meshctl audit --kind traffic-permissions --mesh default --from-revision 100 --size 20`,
    )
    .action(async (opts: AuditOptions) => {
      const format = parseOutputFormat(opts.output);
      if (opts.tail !== undefined && opts.offset !== undefined) {
        throw new UsageError('--tail and --offset do not go together (--tail is the newest entries)');
      }
      if (opts.tail !== undefined && opts.size !== undefined) {
        throw new UsageError('--tail N gives the size: leave --size out');
      }
      const skip = opts.newestFirst && opts.offset !== undefined ? Number(opts.offset) : 0;
      if (!Number.isSafeInteger(skip) || skip < 0) {
        throw new UsageError(`--offset must be a non-negative integer, not "${opts.offset}"`);
      }
      const query = eventQuery(opts);
      const api = await cli.api();
      let page: { total: number; items: EventItem[]; next?: string | null };
      let rest: string | undefined;
      if (opts.tail !== undefined || opts.newestFirst) {
        const got = await newest(api, query, opts.tail ?? opts.size ?? 100, skip);
        const items = opts.newestFirst ? [...got.items].reverse() : got.items;
        page = { total: got.total, items };
        if (opts.tail === undefined && got.start > 0) rest = String(skip + got.items.length);
      } else {
        const res = await api.request<Page<EventItem>>('GET', '/_events', {
          query: { ...query, size: opts.size, offset: opts.offset },
        });
        page = res.body;
        rest = nextOffset(res.body.next);
      }
      if (format === 'table' && page.items.length === 0) {
        cli.stderr.write(
          emptyListText({
            noun: 'audit entries',
            mesh: opts.mesh,
            qualifiers: [
              ...(opts.kind !== undefined ? [`of kind ${opts.kind}`] : []),
              ...(opts.name !== undefined ? [`named ${opts.name}`] : []),
              ...(opts.actor !== undefined ? [`by actor ${opts.actor}`] : []),
              ...(opts.fromRevision !== undefined ? [`from revision ${opts.fromRevision}`] : []),
            ],
            offset: opts.offset,
            total: page.total,
          }),
        );
        return;
      }
      await cli.print(format, page, () => ({
        headers: EVENT_HEADERS,
        rows: page.items.map(eventRow),
        footer: rest === undefined ? undefined : `Rest of the log: ${restCommand(opts, rest)}`,
      }));
    });
}

/** The `meshctl audit` command line of the next page. */
function restCommand(opts: AuditOptions, offset: string): string {
  const flags: Array<[string, string | number | undefined]> = [
    ['--from-revision', opts.fromRevision],
    ['--kind', opts.kind],
    ['--mesh', opts.mesh],
    ['--name', opts.name],
    ['--actor', opts.actor],
    ['--newest-first', opts.newestFirst ? '' : undefined],
    ['--include-secret-data', opts.includeSecretData ? '' : undefined],
    ['--size', opts.size],
    ['--offset', offset],
  ];
  return [
    'meshctl audit',
    ...flags.filter(([, v]) => v !== undefined).map(([f, v]) => `${f} ${v}`.trim()),
  ].join(' ');
}
