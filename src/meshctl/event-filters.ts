import type { Command } from 'commander';
import { storedKindOrFail } from './stored-kind.js';

/** Options shared by `watch` and `audit`: the filters of `/_events` (decisions §8). */
export interface EventFilterOptions {
  fromRevision?: string;
  kind?: string;
  mesh?: string;
  name?: string;
  actor?: string;
  changeSet?: string;
  includeSecretData?: boolean;
}

/** Adds the `/_events` filter flags to a command. */
export function eventFilterOptions(command: Command): Command {
  return command
    .option('--from-revision <R>', 'start at this revision')
    .option('--kind <kind>', 'only entries of this stored kind (singular or plural, e.g. dataplanes)')
    .option('-m, --mesh <mesh>', 'only entries in this mesh (and of the mesh itself)')
    .option('--name <name>', 'only entries of resources of this name')
    .option('--actor <name>', 'only changes made by this user')
    .option('--change-set <id>', 'only the entries of this change set (apply -f writes one)')
    .option(
      '--include-secret-data',
      "show secrets' data instead of its sha256 (needs the right to read them)",
    );
}

/** The query of `/_events` for the flags; `--kind` is resolved to the registry's kind name. */
export function eventQuery(opts: EventFilterOptions): Record<string, string | undefined> {
  return {
    fromRevision: opts.fromRevision,
    kind: opts.kind === undefined ? undefined : storedKindOrFail(opts.kind).kind,
    mesh: opts.mesh,
    name: opts.name,
    actor: opts.actor,
    changeSet: opts.changeSet,
    includeSecretData: opts.includeSecretData ? 'true' : undefined,
  };
}
