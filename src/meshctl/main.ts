#!/usr/bin/env node
import { Command } from 'commander';
import { createRequire } from 'node:module';
import { ApiError, ConnectionError } from './api-client.js';
import type { CliContext, GlobalOptions } from './cli-context.js';
import { createCliContext } from './cli-context.js';
import { DocumentError, registerApply } from './commands/apply.js';
import { registerAudit } from './commands/audit.js';
import { COMPLETE_COMMAND, registerCompletion, runComplete } from './commands/completion.js';
import { registerConfig } from './commands/config.js';
import { registerDelete } from './commands/delete.js';
import { registerDiff } from './commands/diff.js';
import { registerGenerate } from './commands/generate.js';
import { registerGet } from './commands/get.js';
import { registerHistory } from './commands/history.js';
import { registerInspect } from './commands/inspect.js';
import { registerRevert } from './commands/revert.js';
import { registerVersion } from './commands/version.js';
import { registerWatch } from './commands/watch.js';
import { connectionHint } from './connection-hint.js';

/** The package's version: package.json is two folders up from both src/meshctl and dist/bin. */
function packageVersion(): string {
  return (createRequire(import.meta.url)('../../package.json') as { version: string }).version;
}

/** The command groups, each adding its commands to the program; add a group with one line here. */
const GROUPS: Array<(program: Command, cli: CliContext) => void> = [
  registerConfig,
  registerGet,
  registerInspect,
  registerApply,
  registerDelete,
  registerGenerate,
  registerHistory,
  registerDiff,
  registerRevert,
  registerWatch,
  registerAudit,
  registerCompletion,
  registerVersion,
];

/** What went wrong, in words: the server's title, details and each cause on its own line. */
function errorText(err: unknown): string {
  if (err instanceof DocumentError) return `${err.location}: ${errorText(err.inner)}`;
  if (err instanceof ApiError) {
    const lines = [`${err.title}${err.details ? `: ${err.details}` : ''} (HTTP ${err.status})`];
    for (const c of err.causes) lines.push(`  ${c.field ? `${c.field}: ` : ''}${c.message}`);
    return lines.join('\n');
  }
  if (err instanceof ConnectionError) {
    const hint = connectionHint(err);
    return hint === undefined ? err.message : `${err.message}\n${hint}`;
  }
  return err instanceof Error ? err.message : String(err);
}

// A reader that stops early (`meshctl get dataplanes | head`) is not a failure.
process.stdout.on('error', (err: NodeJS.ErrnoException) => {
  if (err.code === 'EPIPE') process.exit(0);
  throw err;
});

const program = new Command('meshctl')
  .description('Command-line client of mesh-cp, the service-mesh control plane')
  .version(packageVersion())
  .option('--config-file <path>', 'config file (default $MESHCTL_CONFIG or ~/.meshctl/config.yaml)')
  .option('--context <name>', 'use this context instead of the current one')
  // Not `--address`: `config control-planes add` has its own, and a program option takes them all.
  .option('--api-address <url>', 'talk to this control plane instead of the context’s')
  .option('--api-token <token>', 'send this user token instead of the context’s')
  .showHelpAfterError()
  .configureOutput({
    writeOut: (s) => process.stdout.write(s),
    writeErr: (s) => process.stderr.write(s),
  });

const cli = createCliContext({
  globals: () => program.opts<GlobalOptions>(),
  env: process.env,
  stdout: { write: (s) => process.stdout.write(s) },
  stderr: { write: (s) => process.stderr.write(s) },
});
for (const register of GROUPS) register(program, cli);

try {
  // The completion scripts' question, before commander parses: the words are the user's line.
  if (process.argv[2] === COMPLETE_COMMAND) {
    let out = '';
    await runComplete(program, process.argv.slice(3), {
      env: process.env,
      stdout: { write: (s) => (out += s) },
      stderr: { write: () => undefined },
    });
    // A request to a server that did not answer in time may still be open: end once printed.
    process.stdout.write(out, () => process.exit(0));
  } else {
    await program.parseAsync(process.argv);
  }
} catch (err) {
  process.stderr.write(`Error: ${errorText(err)}\n`);
  process.exitCode = 1;
}
