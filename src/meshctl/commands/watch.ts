import type { Command } from 'commander';
import type { EventItem } from '../wire-types.js';
import type { CliContext } from '../cli-context.js';
import { parseOutputFormat } from '../cli-context.js';
import { eventRow } from '../event-rows.js';
import type { EventFilterOptions } from '../event-filters.js';
import { eventFilterOptions, eventQuery } from '../event-filters.js';

/**
 * `meshctl watch`: follows `/_events` as a stream, one line per entry (revision, time, operation,
 * kind, mesh/name, actor), resuming with `Last-Event-ID` when the connection drops, until SIGINT.
 */
export function registerWatch(program: Command, cli: CliContext): void {
  eventFilterOptions(
    program
      .command('watch')
      .description('follow changes as they commit, one line per change (Ctrl-C stops)')
      .option(
        '-o, --output <format>',
        'table (one line per change), json (one object per line) or yaml',
        'table',
      ),
  )
    .addHelpText(
      'after',
      `
Without --from-revision only what commits from now on is shown.
Examples:
  $ meshctl watch
  $ meshctl watch --from-revision 1 --kind dataplanes --mesh default`,
    )
    .action(async (opts: EventFilterOptions & { output: string }) => {
      const format = parseOutputFormat(opts.output);
      const query = eventQuery(opts);
      const api = await cli.api();
      const { followEvents } = await import('../follow-events.js');
      const stringify = format === 'yaml' ? (await import('../yaml-codec.js')).stringify : undefined;
      const print = (e: EventItem): void => {
        if (format === 'json') cli.stdout.write(`${JSON.stringify(e)}\n`);
        else if (stringify) cli.stdout.write(`---\n${stringify(e)}`);
        else cli.stdout.write(`${eventRow(e).join('  ')}\n`);
      };
      const stop = new AbortController();
      const onSignal = (): void => {
        stop.abort();
        // A connection still being made (an address that does not answer) does not hold the exit.
        setTimeout(() => process.exit(), 1000).unref();
      };
      process.once('SIGINT', onSignal);
      process.once('SIGTERM', onSignal);
      try {
        await followEvents(api, {
          query,
          signal: stop.signal,
          onEvent: print,
          onNotice: (text) => cli.stderr.write(`meshctl watch: ${text}\n`),
        });
      } finally {
        process.off('SIGINT', onSignal);
        process.off('SIGTERM', onSignal);
      }
    });
}
