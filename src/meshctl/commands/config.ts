import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import type { Command } from 'commander';
import { createApiClient } from '../api-client.js';
import type { CliContext } from '../cli-context.js';
import { UsageError, parseOutputFormat } from '../cli-context.js';
import type { ApiServerCoordinates, MeshctlConfig } from '../config-file.js';
import { writeConfig } from '../config-file.js';

/** A token as `config view` shows it: its first characters and its length, never the whole. */
export function maskToken(token: string): string {
  return `${token.slice(0, 6)}…(masked, ${token.length} characters)`;
}

/** The config with every token masked. */
function masked(config: MeshctlConfig): MeshctlConfig {
  return {
    ...config,
    controlPlanes: config.controlPlanes.map((cp) => {
      const api = cp.coordinates.apiServer;
      if (api.authToken === undefined) return cp;
      return {
        ...cp,
        coordinates: { ...cp.coordinates, apiServer: { ...api, authToken: maskToken(api.authToken) } },
      };
    }),
  };
}

/** Options of `config control-planes add`. */
interface AddOptions {
  name: string;
  address: string;
  caCert?: string;
  skipVerify?: boolean;
  authToken?: string;
  overwrite?: boolean;
  check: boolean;
}

/** Adds (or replaces) a control plane and a context of the same name, and makes it current. */
async function add(cli: CliContext, o: AddOptions): Promise<void> {
  let url: URL;
  try {
    url = new URL(o.address);
  } catch {
    throw new UsageError(`--address must be a URL such as http://127.0.0.1:5681, not "${o.address}"`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    throw new UsageError(`--address must be http:// or https://, not ${url.protocol}//`);
  }
  if (o.caCert && o.skipVerify) throw new UsageError('--ca-cert and --skip-verify do not go together');
  const config = await cli.config();
  const exists = config.controlPlanes.some((c) => c.name === o.name);
  if (exists && !o.overwrite) {
    throw new UsageError(`control plane "${o.name}" already exists (use --overwrite to replace it)`);
  }
  const api: ApiServerCoordinates = { url: o.address.replace(/\/+$/, '') };
  let caCert: string | undefined;
  if (o.caCert) {
    api.caCertFile = resolve(o.caCert);
    try {
      caCert = readFileSync(api.caCertFile, 'utf8');
    } catch (err) {
      throw new UsageError(`--ca-cert: cannot read ${api.caCertFile}: ${(err as Error).message}`);
    }
  }
  if (o.skipVerify) api.skipVerify = true;
  if (o.authToken) api.authToken = o.authToken;
  if (o.check) {
    const client = createApiClient({
      address: api.url,
      context: o.name,
      authToken: api.authToken,
      caCert,
      skipVerify: api.skipVerify,
    });
    await client.request('GET', '/');
  }
  const next: MeshctlConfig = {
    controlPlanes: [
      ...config.controlPlanes.filter((c) => c.name !== o.name),
      { name: o.name, coordinates: { apiServer: api } },
    ],
    contexts: [...config.contexts.filter((c) => c.name !== o.name), { name: o.name, controlPlane: o.name }],
    currentContext: o.name,
  };
  writeConfig(cli.configPath(), next);
  cli.stdout.write(`added control plane "${o.name}" (${api.url}); switched to context "${o.name}"\n`);
}

/** `meshctl config control-planes add|list|switch|remove`: the contexts in the config file. */
export function registerConfig(program: Command, cli: CliContext): void {
  const config = program.command('config').description('manage the control planes meshctl talks to');
  config
    .command('view')
    .description('show the config file (tokens masked)')
    .option('-o, --output <format>', 'output format: yaml or json', 'yaml')
    .action(async (o: { output: string }) => {
      const format = parseOutputFormat(o.output);
      const path = cli.configPath();
      const shown = masked(await cli.config());
      if (format === 'json') {
        cli.printJson(shown);
        return;
      }
      const note = existsSync(path) ? '' : ' (no such file: the defaults)';
      cli.stdout.write(`# ${path}${note}\n`);
      await cli.printYaml(shown);
    });

  const cps = config.command('control-planes').description('add, list, switch and remove control planes');

  cps
    .command('add')
    .description('add a control plane and switch to it (checks that the address answers)')
    .requiredOption('--name <name>', 'name of the control plane and of its context')
    .requiredOption('--address <url>', 'URL of its API server, e.g. https://cp.example.com:5682')
    .option('--ca-cert <file>', 'PEM file of the CA that signed the server certificate')
    .option('--skip-verify', 'do not verify the server certificate')
    .option('--auth-token <token>', 'user token sent with every request')
    .option('--overwrite', 'replace a control plane of the same name')
    .option('--no-check', 'do not check that the address answers')
    .action((o: AddOptions) => add(cli, o));

  cps
    .command('list')
    .description('list the control planes; * marks the current context')
    .action(async () => {
      const c = await cli.config();
      cli.printTable({
        headers: ['ACTIVE', 'NAME', 'ADDRESS'],
        rows: c.contexts.map((ctx) => [
          ctx.name === c.currentContext ? '*' : '',
          ctx.name,
          c.controlPlanes.find((cp) => cp.name === ctx.controlPlane)?.coordinates.apiServer.url ?? '',
        ]),
      });
    });

  cps
    .command('switch')
    .description('make another context current')
    .requiredOption('--name <name>', 'the context')
    .action(async (o: { name: string }) => {
      const c = await cli.config();
      if (!c.contexts.some((x) => x.name === o.name)) {
        throw new UsageError(`there is no context "${o.name}" (see \`meshctl config control-planes list\`)`);
      }
      writeConfig(cli.configPath(), { ...c, currentContext: o.name });
      cli.stdout.write(`switched to context "${o.name}"\n`);
    });

  cps
    .command('remove')
    .description('remove a control plane and its context')
    .requiredOption('--name <name>', 'the control plane')
    .action(async (o: { name: string }) => {
      const c = await cli.config();
      if (!c.controlPlanes.some((x) => x.name === o.name)) {
        throw new UsageError(`there is no control plane "${o.name}"`);
      }
      const contexts = c.contexts.filter((x) => x.controlPlane !== o.name);
      const current = contexts.some((x) => x.name === c.currentContext) ? c.currentContext : '';
      writeConfig(cli.configPath(), {
        controlPlanes: c.controlPlanes.filter((x) => x.name !== o.name),
        contexts,
        currentContext: current,
      });
      cli.stdout.write(`removed control plane "${o.name}"\n`);
      if (current === '' && c.currentContext !== '') {
        cli.stdout.write('no context is current now: add or switch to one\n');
      }
    });
}
