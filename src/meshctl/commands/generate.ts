import type { Command } from 'commander';
import { Option } from 'commander';
import type { CliContext } from '../cli-context.js';
import { UsageError } from '../cli-context.js';

/** Collects a repeatable flag; `--group a,b` counts as `--group a --group b` (kumactl's string slices). */
const list = (value: string, previous: string[] = []): string[] => [
  ...previous,
  ...value
    .split(',')
    .map((v) => v.trim())
    .filter((v) => v !== ''),
];

/** Collects `--tag key=v1,v2` flags into the `tags` of a data plane token request (key → allowed values). */
const tag = (value: string, previous: Record<string, string[]> = {}): Record<string, string[]> => {
  const i = value.indexOf('=');
  if (i <= 0) throw new UsageError(`--tag must be key=value[,value…], not "${value}"`);
  const key = value.slice(0, i);
  return { ...previous, [key]: [...(previous[key] ?? []), ...list(value.slice(i + 1))] };
};

const VALID_FOR = 'how long the token is valid, e.g. 24h, 30m, 720h';

/**
 * `meshctl generate …`: tokens from `POST /tokens/<type>` (admin only) and signing keys made here,
 * as kumactl makes them. Each prints the token or key alone, with no newline unless stdout is a
 * terminal, so that `> file` and `$(…)` hold exactly it.
 */
export function registerGenerate(program: Command, cli: CliContext): void {
  const issue = async (type: string, body: Record<string, unknown>): Promise<void> => {
    const api = await cli.api();
    const res = await api.request('POST', `/tokens/${type}`, { body, accept: 'text/plain' });
    printSecret(res.text);
  };
  const printSecret = (text: string): void => cli.stdout.write(process.stdout.isTTY ? `${text}\n` : text);

  const generate = program.command('generate').description('generate tokens and signing keys');

  generate
    .command('dataplane-token')
    .description('a token that proves a data plane proxy’s identity to the control plane')
    .option('-m, --mesh <mesh>', 'mesh of the proxy', 'default')
    .option('--name <name>', 'name of the Dataplane (any Dataplane of the mesh when left out)')
    .option(
      '--tag <key=values>',
      'tag values the proxy must carry, e.g. mesh.io/service=web,web-api (repeatable)',
      tag,
    )
    .addOption(
      new Option('--proxy-type <type>', 'type of the proxy').choices(['dataplane', 'ingress', 'egress']),
    )
    .option('--valid-for <duration>', `${VALID_FOR} (no expiry when left out)`)
    .action(
      async (opts: {
        mesh: string;
        name?: string;
        tag?: Record<string, string[]>;
        proxyType?: string;
        validFor?: string;
      }) =>
        issue('dataplane', {
          mesh: opts.mesh,
          name: opts.name,
          tags: opts.tag,
          type: opts.proxyType,
          validFor: opts.validFor,
        }),
    );

  generate
    .command('zone-token')
    .description('a token that proves the identity of a zone’s control plane, ingress or egress to Global')
    .requiredOption('--zone <zone>', 'name of the zone')
    .option('--scope <scope>', 'what the token may be: cp, ingress, egress (repeatable; default all)', list)
    .requiredOption('--valid-for <duration>', VALID_FOR)
    .action(async (opts: { zone: string; scope?: string[]; validFor: string }) =>
      issue('zone', { zone: opts.zone, scope: opts.scope, validFor: opts.validFor }),
    );

  generate
    .command('zone-ingress-token')
    .description(
      'a token that proves a zone ingress’s identity (kept for kumactl users: prefer zone-token --scope ingress)',
    )
    .requiredOption('--zone <zone>', 'name of the zone')
    .requiredOption('--valid-for <duration>', VALID_FOR)
    .action(async (opts: { zone: string; validFor: string }) =>
      issue('zone-ingress', { zone: opts.zone, validFor: opts.validFor }),
    );

  generate
    .command('user-token')
    .description('a token that proves a user’s identity to the API (its groups give its role)')
    .requiredOption('--name <name>', 'name of the user')
    .option('--group <group>', 'a group of the user, e.g. mesh-system:admin (repeatable)', list)
    .requiredOption('--valid-for <duration>', VALID_FOR)
    .action(async (opts: { name: string; group?: string[]; validFor: string }) =>
      issue('user', { name: opts.name, groups: opts.group, validFor: opts.validFor }),
    );

  generate
    .command('signing-key')
    .description(
      'a new token signing key (base64 of an RSA-2048 private key PEM), made here, for rotating keys',
    )
    .addHelpText(
      'after',
      `
Example: rotate the user token signing key
  $ key=$(meshctl generate signing-key)
  $ printf 'type: Secret\\nname: user-token-signing-key-2\\ndata: %s\\n' "$key" | meshctl apply -f -`,
    )
    .action(async () => {
      const { generateSigningKey } = await import('../signing-key.js');
      printSecret(await generateSigningKey());
    });
}
