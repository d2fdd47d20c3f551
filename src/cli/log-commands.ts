import type { Command } from 'commander';
import type { logTools as LogToolsValue } from './log-tools.js';

type LogTools = typeof LogToolsValue;

/** An action that loads the log tools when it runs: `mesh-cp run` starts without them. */
const lazy =
  (name: keyof LogTools) =>
  async (...args: unknown[]): Promise<void> => {
    const { logTools } = await import('./log-tools.js');
    await (logTools[name] as (...a: unknown[]) => Promise<void>)(...args);
  };

/** Adds `mesh-cp log verify|replay|export|import|snapshot`: offline tools on a data dir or PostgreSQL. */
export function registerLogCommands(program: Command): void {
  const log = program
    .command('log')
    .description(
      'offline tools for the event log of a data dir, or of PostgreSQL with store.type postgres (stop mesh-cp first, or copy the dir)',
    );
  const data = (cmd: Command): Command =>
    cmd
      .option(
        '-d, --data <dir>',
        'a LevelDB data dir (default: the store of the config: store.level.path, or store.postgres.* with store.type postgres)',
      )
      .option('-c, --config <file>', 'YAML config file (as for run; MESH_* env vars apply)');
  data(log.command('verify'))
    .description('check the hash chain, the revision sequence and the history index; exit 1 on damage')
    .action(lazy('verify'));
  data(log.command('replay'))
    .description('print the state at a revision as YAML, one document per resource')
    .option('-r, --to-revision <revision>', 'the revision (default: the head)')
    .action(lazy('replay'));
  data(log.command('export'))
    .description('write every entry as NDJSON, verified; exit 1 on damage')
    .option('-o, --out <file>', 'output file ("-" or none: stdout)')
    .action(lazy('exportLog'));
  data(log.command('import'))
    .description('import an export into an empty data dir or database, verifying the chain; exit 1 on damage')
    .argument('<file>', 'NDJSON file written by log export ("-": stdin)')
    .action(lazy('importLog'));
  data(log.command('snapshot'))
    .description('write a snapshot of the state at the head now (or --delete every snapshot); LevelDB only')
    .option('--delete', 'delete every snapshot (start-up then replays the whole log)')
    .action(lazy('snapshot'));
}
