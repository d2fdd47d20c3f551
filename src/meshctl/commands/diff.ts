import type { Command } from 'commander';
import type { ApiClient } from '../api-client.js';
import { ApiError } from '../api-client.js';
import type { CliContext } from '../cli-context.js';
import { itemPath } from '../kinds.js';
import type { DiffSide } from '../resource-diff.js';
import { storedKindOrFail } from '../stored-kind.js';

/** The state of a resource at a revision (the head without one); `resource` is undefined when it did not exist then. */
async function stateAt(
  api: ApiClient,
  path: string,
  revision: string | undefined,
): Promise<DiffSide & { missing?: ApiError }> {
  try {
    const res = await api.request('GET', path, { query: { revision } });
    return {
      label: `${path.slice(1)}@${String(res.headers['x-mesh-revision'] ?? revision)}`,
      resource: res.body,
    };
  } catch (err) {
    // 404: it did not exist at that revision (a bad revision is 400 and ends the command).
    if (err instanceof ApiError && err.status === 404) {
      return { label: `${path.slice(1)}@${revision ?? 'head'}`, resource: undefined, missing: err };
    }
    throw err;
  }
}

/**
 * `meshctl diff <kind> <name> --revision A [--to B]`: a unified diff of the resource's YAML as of
 * revision A and as of B (default: the head), from reads with `?revision=` (decisions §8). A side
 * where the resource did not exist is empty; nothing is printed when both are the same.
 */
export function registerDiff(program: Command, cli: CliContext): void {
  program
    .command('diff')
    .description('what changed in one resource between two revisions, as a unified diff of its YAML')
    .argument('<kind>', 'a stored kind, singular or plural')
    .argument('<name>', 'name of the resource')
    .requiredOption('--revision <A>', 'the revision to compare from')
    .option('--to <B>', 'the revision to compare to (default: the head)')
    .option('-m, --mesh <mesh>', 'mesh of mesh-scoped kinds', 'default')
    .addHelpText(
      'after',
      `
Revisions of a resource's changes: meshctl history <kind> <name>.
Example:
  $ meshctl diff traffic-permission allow-all-default --revision 3 --to 7`,
    )
    .action(async (word: string, name: string, opts: { revision: string; to?: string; mesh: string }) => {
      const kind = storedKindOrFail(word);
      const api = await cli.api();
      const path = itemPath(kind, opts.mesh, name);
      const [from, to] = await Promise.all([stateAt(api, path, opts.revision), stateAt(api, path, opts.to)]);
      if (from.missing && to.missing) throw from.missing;
      const { resourceDiff } = await import('../resource-diff.js');
      cli.stdout.write(resourceDiff(from, to));
    });
}
