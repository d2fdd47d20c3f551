import type { Command } from 'commander';
import type { ApiClient } from '../api-client.js';
import { ApiError } from '../api-client.js';
import { UsageError, type CliContext } from '../cli-context.js';
import { actorText, type Page, type TimelineItem } from '../event-rows.js';
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
    .option('--revision <A>', 'the revision to compare from (the resource)')
    .option('--from <A>', "with dataplane NAME: the revision to compare the proxy's served config from")
    .option('--to <B>', 'the revision to compare to (default: the head)')
    .option('-m, --mesh <mesh>', 'mesh of mesh-scoped kinds', 'default')
    .addHelpText(
      'after',
      `
Revisions of a resource's changes: meshctl history <kind> <name>; of a proxy's config:
meshctl history dataplane <name> --config.
Examples:
  $ meshctl diff traffic-permission allow-all-default --revision 3 --to 7
  $ meshctl diff dataplane web-1 --from 40 --to 57      # its served config, and the writes that changed it`,
    )
    .action(
      async (
        word: string,
        name: string,
        opts: { revision?: string; from?: string; to?: string; mesh: string },
      ) => {
        const kind = storedKindOrFail(word);
        if (opts.from !== undefined) {
          if (kind.kind !== 'Dataplane')
            throw new UsageError(`--from goes with dataplane NAME (a proxy's config), not ${word}`);
          if (opts.revision !== undefined)
            throw new UsageError('--revision (the resource) and --from (its config): give one');
          return configDiff(cli, name, opts.mesh, opts.from, opts.to);
        }
        if (opts.revision === undefined) {
          throw new UsageError(
            kind.kind === 'Dataplane'
              ? '--revision A (the Dataplane resource) or --from A (its served config) is required'
              : '--revision A is required',
          );
        }
        const api = await cli.api();
        const path = itemPath(kind, opts.mesh, name);
        const revision = opts.revision;
        const [from, to] = await Promise.all([stateAt(api, path, revision), stateAt(api, path, opts.to)]);
        if (from.missing && to.missing) throw from.missing;
        const { resourceDiff } = await import('../resource-diff.js');
        cli.stdout.write(resourceDiff(from, to));
      },
    );
}

/** What differs in a config dump at every revision, left out of a config diff (versions, times, the point in time). */
const NOT_COMPARED = new Set(['version_info', 'versions', 'last_updated', 'pointInTime']);

/** A config dump without {@link NOT_COMPARED}. */
function comparable(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(comparable);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([k]) => !NOT_COMPARED.has(k))
      .map(([k, v]) => [k, comparable(v)]),
  );
}

/**
 * `meshctl diff dataplane NAME --from A [--to B]`: the unified diff of the config the proxy would
 * be served at A and at B (`…/xds?revision=`), then the writes between that changed it (its config
 * timeline). A side where the proxy did not exist is empty.
 */
async function configDiff(
  cli: CliContext,
  name: string,
  mesh: string,
  from: string,
  to: string | undefined,
): Promise<void> {
  const api = await cli.api();
  const path = `/meshes/${encodeURIComponent(mesh)}/dataplanes/${encodeURIComponent(name)}/xds`;
  const [a, b] = await Promise.all([stateAt(api, path, from), stateAt(api, path, to)]);
  if (a.missing && b.missing) throw a.missing;
  const { resourceDiff } = await import('../resource-diff.js');
  const label = (side: typeof a): string => side.label.replace(/^.*\/dataplanes\//, 'dataplane/');
  cli.stdout.write(
    resourceDiff(
      { label: label(a), resource: a.resource === undefined ? undefined : comparable(a.resource) },
      { label: label(b), resource: b.resource === undefined ? undefined : comparable(b.resource) },
    ),
  );
  // The revisions each side answered at (a side where the proxy did not exist says the one asked for, or the head).
  const at = (side: typeof a, asked: string | undefined): number => {
    const n = Number(side.label.split('@').at(-1));
    return Number.isNaN(n) ? (asked === undefined ? Infinity : Number(asked)) : n;
  };
  const [lo, hi] = [at(a, from), at(b, to)].sort((x, y) => x - y);
  const between: TimelineItem[] = [];
  for (let offset = 0; ;) {
    const page = await api.request<Page<TimelineItem>>('GET', `${path}/_history`, {
      query: { size: 1000, offset },
    });
    between.push(...page.body.items.filter((i) => i.revision > lo && i.revision <= hi));
    offset += page.body.items.length;
    if (page.body.next === null || page.body.items.length === 0) break;
  }
  const range = `between revisions ${lo} and ${hi === Infinity ? 'the head' : hi}`;
  if (between.length === 0) {
    cli.stdout.write(`No write changed the config of ${name} ${range}\n`);
    return;
  }
  cli.stdout.write(`Writes that changed the config of ${name} ${range}:\n`);
  for (const i of between) {
    const w = i.write;
    cli.stdout.write(
      `  ${i.revision}  ${i.time}  ${w.kind} ${w.name} ${w.operation} by ${actorText(w.actor)}: config ${i.config}\n`,
    );
  }
}
