import type { Command } from 'commander';
import type { CliContext } from '../cli-context.js';
import { UsageError } from '../cli-context.js';
import { itemPath } from '../kinds.js';
import { kindOrFail } from './get.js';

/** `meshctl delete <kind> <name> [--mesh]`: deletes one resource. */
export function registerDelete(program: Command, cli: CliContext): void {
  program
    .command('delete')
    .description('delete one resource')
    .argument('<kind>', 'kind, singular or plural (mesh, dataplane, traffic-permission, …)')
    .argument('<name>', 'name of the resource')
    .option('-m, --mesh <mesh>', 'mesh of mesh-scoped kinds', 'default')
    .option('--dry-run', 'check that the delete would succeed; delete nothing')
    .action(async (word: string, name: string, o: { mesh: string; dryRun?: boolean }) => {
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
