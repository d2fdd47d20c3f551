import { readFileSync } from 'node:fs';
import type { ApiClient, ApiTarget } from './api-client.js';
import { createApiClient } from './api-client.js';
import type { MeshctlConfig } from './config-file.js';
import { ConfigFileError, configPath, controlPlaneOf, readConfig } from './config-file.js';
import { formatTable } from './table.js';

/** Where a command writes. */
export interface Writer {
  write(text: string): void;
}

/** The flags every command takes (declared on the program in main.ts). */
export interface GlobalOptions {
  configFile?: string;
  /** Use this context instead of the current one. */
  context?: string;
  /** `--api-address`: talk to this address instead of the context's. */
  apiAddress?: string;
  /** `--api-token`: send this token instead of the context's. */
  apiToken?: string;
}

/** The output formats of `-o`. */
export type OutputFormat = 'table' | 'yaml' | 'json';

/** A table: headers and rows of text, plus an optional line printed after it. */
export interface Table {
  headers: string[];
  rows: string[][];
  footer?: string;
}

/** What every command gets: the API of the current context, writers and printers. */
export interface CliContext {
  /** A client for the current context (or the one `--context` names), honouring the global flags. */
  api(): Promise<ApiClient>;
  /** The global flags as given. */
  globals(): GlobalOptions;
  /** The path of the config file in use. */
  configPath(): string;
  /** The config file's content (the default config when there is no file). */
  config(): Promise<MeshctlConfig>;
  stdout: Writer;
  stderr: Writer;
  printTable(table: Table): void;
  /** YAML of one value, or of several as a multi-document stream. */
  printYaml(value: unknown, opts?: { documents?: boolean }): Promise<void>;
  printJson(value: unknown): void;
  /** Prints `value` as `format` says; `table` is called only for the table format. */
  print(format: OutputFormat, value: unknown, table: () => Table): Promise<void>;
}

/** Checks an `-o` value. */
export function parseOutputFormat(value: string): OutputFormat {
  if (value === 'table' || value === 'yaml' || value === 'json') return value;
  throw new UsageError(`output format must be table, yaml or json, not "${value}"`);
}

/** A mistake in the command line (exit 1 with the message; no request made). */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** Creates the context of one run; `globals` reads the parsed global flags when called. */
export function createCliContext(deps: {
  globals: () => GlobalOptions;
  env: NodeJS.ProcessEnv;
  stdout: Writer;
  stderr: Writer;
}): CliContext {
  const { stdout } = deps;
  const path = (): string => configPath(deps.globals().configFile, deps.env);
  let config: Promise<MeshctlConfig> | undefined;
  const readOnce = (): Promise<MeshctlConfig> => (config ??= readConfig(path()));

  const target = async (): Promise<ApiTarget> => {
    const g = deps.globals();
    const cfg = g.apiAddress !== undefined && g.context === undefined ? undefined : await readOnce();
    const name = g.context ?? cfg?.currentContext ?? 'local';
    const cp = cfg && controlPlaneOf(cfg, name);
    if (cfg && !cp && g.apiAddress === undefined) {
      if (name === '') {
        throw new ConfigFileError(
          `no context is current in ${path()} (\`meshctl config control-planes add\` or \`switch\`)`,
        );
      }
      throw new ConfigFileError(
        `context "${name}" is not in ${path()} (see \`meshctl config control-planes list\`)`,
      );
    }
    const api = cp?.coordinates.apiServer;
    let caCert: string | undefined;
    if (api?.caCertFile && g.apiAddress === undefined) {
      try {
        caCert = readFileSync(api.caCertFile, 'utf8');
      } catch (err) {
        throw new ConfigFileError(
          `context "${name}": cannot read the CA certificate: ${(err as Error).message}`,
        );
      }
    }
    return {
      address: g.apiAddress ?? api?.url ?? 'http://127.0.0.1:5681',
      context: g.apiAddress !== undefined ? undefined : name,
      authToken: g.apiToken ?? (g.apiAddress === undefined ? api?.authToken : undefined),
      caCert,
      skipVerify: g.apiAddress === undefined ? api?.skipVerify : undefined,
    };
  };

  const printYaml = async (value: unknown, opts: { documents?: boolean } = {}): Promise<void> => {
    const { stringify } = await import('./yaml-codec.js');
    if (opts.documents && Array.isArray(value)) {
      stdout.write(value.map((v) => stringify(v)).join('---\n'));
    } else {
      stdout.write(stringify(value));
    }
  };
  const printJson = (value: unknown): void => stdout.write(`${JSON.stringify(value, null, 2)}\n`);
  const printTable = (t: Table): void => {
    stdout.write(formatTable(t.headers, t.rows));
    if (t.footer) stdout.write(`\n${t.footer}\n`);
  };

  return {
    api: async () => createApiClient(await target()),
    globals: deps.globals,
    configPath: path,
    config: readOnce,
    stdout,
    stderr: deps.stderr,
    printTable,
    printYaml,
    printJson,
    async print(format, value, table) {
      if (format === 'json') printJson(value);
      else if (format === 'yaml') await printYaml(value);
      else printTable(table());
    },
  };
}
