import type { Command } from 'commander';
import { ApiError } from '../api-client.js';
import type { CliContext } from '../cli-context.js';
import { UsageError } from '../cli-context.js';
import { itemPath } from '../kinds.js';
import { DocumentError, locate, readTargets } from './apply.js';
import { kindOrFail, repeatable } from './get.js';

/** Options of `meshctl delete`. */
interface DeleteOptions {
  mesh: string;
  dryRun?: boolean;
  file?: string;
  var: string[];
  ignoreNotFound?: boolean;
}

/**
 * `delete -f`: the resources of the documents, last document first (a file applies a mesh before
 * what is in it; deleting goes the other way). One line each; a resource that is not there is said
 * and the others still deleted, then the run fails unless `--ignore-not-found`.
 */
async function deleteFiles(cli: CliContext, file: string, o: DeleteOptions): Promise<void> {
  const targets = await readTargets(file, o.var);
  if (targets.length === 0) throw new UsageError('no resource to delete');
  const api = await cli.api();
  const suffix = o.dryRun ? ' (dry run)' : '';
  let missing = 0;
  for (const t of [...targets].reverse()) {
    try {
      await api.request('DELETE', itemPath(t.kind, t.mesh, t.name), {
        query: { dryRun: o.dryRun || undefined },
      });
      cli.stdout.write(`${t.label} deleted${suffix}\n`);
    } catch (err) {
      if (!(err instanceof ApiError)) throw err;
      if (err.status !== 404) throw new DocumentError(`${locate(t.doc)} (${t.label})`, err);
      missing++;
      cli.stdout.write(`${t.label} not found\n`);
    }
  }
  if (missing > 0 && !o.ignoreNotFound) {
    throw new UsageError(
      `${missing} of ${targets.length} resources not found (--ignore-not-found makes that no error)`,
    );
  }
}

/** `meshctl delete <kind> <name> [--mesh]` and `meshctl delete -f FILE|DIR|-`. */
export function registerDelete(program: Command, cli: CliContext): void {
  program
    .command('delete')
    .description('delete one resource, or the resources of YAML or JSON documents (-f)')
    .argument('[kind]', 'kind, singular or plural (mesh, dataplane, traffic-permission, …)')
    .argument('[name]', 'name of the resource')
    .option('-m, --mesh <mesh>', 'mesh of mesh-scoped kinds', 'default')
    .option('-f, --file <path>', 'delete what these documents name: a file, a directory or - for stdin')
    .option('-v, --var <key=value>', 'with -f: value of a {{ key }} placeholder (repeatable)', repeatable, [])
    .option('--ignore-not-found', 'with -f: a resource that is not there is no error')
    .option('--dry-run', 'check that the delete would succeed; delete nothing')
    .action(async (word: string | undefined, name: string | undefined, o: DeleteOptions) => {
      if (o.file !== undefined) {
        if (word !== undefined) throw new UsageError('delete takes either <kind> <name> or -f, not both');
        return deleteFiles(cli, o.file, o);
      }
      if (word === undefined || name === undefined) {
        throw new UsageError('delete takes either <kind> <name> or -f FILE');
      }
      const kind = kindOrFail(word);
      if (kind.derived || kind.singleton) {
        throw new UsageError(`${kind.path} are computed by the control plane and cannot be deleted`);
      }
      const api = await cli.api();
      await api.request('DELETE', itemPath(kind, o.mesh, name), { query: { dryRun: o.dryRun || undefined } });
      const where = kind.scope === 'mesh' ? ` from mesh "${o.mesh}"` : '';
      cli.stdout.write(`${o.dryRun ? 'would delete' : 'deleted'} ${kind.kind} "${name}"${where}\n`);
    });
}
