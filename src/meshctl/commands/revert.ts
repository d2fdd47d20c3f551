import type { Command } from 'commander';
import type { ApiClient } from '../api-client.js';
import { ApiError } from '../api-client.js';
import type { CliContext } from '../cli-context.js';
import { parseOutputFormat } from '../cli-context.js';
import { itemPath } from '../kinds.js';
import { storedKindOrFail } from '../stored-kind.js';

type Resource = Record<string, unknown>;

/** The resource now and its ETag, or undefined when it does not exist. */
async function current(
  api: ApiClient,
  path: string,
): Promise<{ resource: Resource; etag?: string } | undefined> {
  try {
    const res = await api.request<Resource>('GET', path);
    return { resource: res.body, etag: res.headers.etag };
  } catch (err) {
    if (err instanceof ApiError && err.status === 404) return undefined;
    throw err;
  }
}

/**
 * `meshctl revert <kind> <name> --to-revision R`: `POST …/_revert?toRevision=R` (decisions §8), one
 * new write that restores the resource as it was at R, or deletes it when it did not exist then.
 * `--dry-run` writes nothing and prints the diff the revert would make.
 */
export function registerRevert(program: Command, cli: CliContext): void {
  program
    .command('revert')
    .description(
      'restore one resource as it was at a revision (a new write; deletes it if it did not exist then)',
    )
    .argument('<kind>', 'a stored kind, singular or plural')
    .argument('<name>', 'name of the resource')
    .requiredOption('--to-revision <R>', 'the revision to restore')
    .option('--dry-run', 'write nothing: print the diff the revert would make')
    .option('-m, --mesh <mesh>', 'mesh of mesh-scoped kinds', 'default')
    .option('-o, --output <format>', 'print the server’s answer instead of a summary: yaml or json')
    .addHelpText(
      'after',
      `
Examples:
  $ meshctl history traffic-permission allow-all-default        # find the revision
  $ meshctl revert traffic-permission allow-all-default --to-revision 3 --dry-run
  $ meshctl revert traffic-permission allow-all-default --to-revision 3`,
    )
    .action(
      async (
        word: string,
        name: string,
        opts: { toRevision: string; dryRun?: boolean; mesh: string; output?: string },
      ) => {
        const kind = storedKindOrFail(word);
        const format = opts.output === undefined ? undefined : parseOutputFormat(opts.output);
        const api = await cli.api();
        const path = itemPath(kind, opts.mesh, name);
        const before = await current(api, path);
        const res = await api.request<Resource>('POST', `${path}/_revert`, {
          query: { toRevision: opts.toRevision, dryRun: opts.dryRun ? 'true' : undefined },
        });
        // A revert to a state where it did not exist answers `{}` (the DELETE's answer).
        const deleted = Object.keys(res.body).length === 0;
        if (format !== undefined && format !== 'table') {
          await cli.print(format, res.body, () => ({ headers: [], rows: [] }));
          return;
        }
        const what = `${kind.kind} "${name}"${kind.scope === 'mesh' ? ` in mesh "${opts.mesh}"` : ''}`;
        if (opts.dryRun) {
          const { resourceDiff } = await import('../resource-diff.js');
          const label = path.slice(1);
          const diff = resourceDiff(
            { label: `${label} (now)`, resource: before?.resource },
            { label: `${label} (at revision ${opts.toRevision})`, resource: deleted ? undefined : res.body },
          );
          cli.stdout.write(
            diff === ''
              ? `${what} is as it was at revision ${opts.toRevision}: nothing to revert (dry run)\n`
              : `${diff}(dry run: nothing written)\n`,
          );
          return;
        }
        const revision = String(res.headers['x-mesh-revision']);
        const outcome = deleted
          ? `deleted (revision ${revision})`
          : res.status === 201
            ? `created (revision ${revision})`
            : res.headers.etag === before?.etag
              ? 'unchanged: it already is as it was then'
              : `updated (revision ${revision})`;
        cli.stdout.write(`${what} reverted to revision ${opts.toRevision}: ${outcome}\n`);
      },
    );
}
