import type { Command } from 'commander';
import { ConnectionError } from '../api-client.js';
import type { CliContext } from '../cli-context.js';
import { connectionHint } from '../connection-hint.js';

/** `GET /` (decisions §9): what a control plane says of itself. */
interface IndexBody {
  tagline?: string;
  version?: string;
  mode?: string;
}

/**
 * `meshctl version`: this client's version, then the server's from `GET /` (as kumactl). A server
 * that cannot be reached is said on stderr; the command still succeeds, having printed what it knows.
 */
export function registerVersion(program: Command, cli: CliContext): void {
  program
    .command('version')
    .description('print the version of meshctl and of the control plane it talks to')
    .action(async () => {
      cli.stdout.write(`Client: ${program.name()} ${program.version() ?? 'unknown'}\n`);
      try {
        const api = await cli.api();
        const res = await api.request<IndexBody>('GET', '/');
        const { tagline = 'unknown', version = 'unknown', mode } = res.body;
        const how = mode ? `, ${mode}` : '';
        cli.stdout.write(`Server: ${tagline} ${version} (${api.target.address}${how})\n`);
      } catch (err) {
        const hint = err instanceof ConnectionError ? connectionHint(err) : undefined;
        // Unreachable, or it answered an error (a refused token), or the config is broken.
        const what = err instanceof ConnectionError ? 'unreachable' : 'unknown';
        cli.stderr.write(`Server: ${what}: ${err instanceof Error ? err.message : String(err)}\n`);
        if (hint !== undefined) cli.stderr.write(`${hint}\n`);
      }
    });
}
