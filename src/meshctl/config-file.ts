import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join } from 'node:path';

/** How meshctl reaches one control plane (kumactl's `controlPlanes[].coordinates.apiServer`). */
export interface ApiServerCoordinates {
  url: string;
  /** Path of a PEM file with the CA of the server's certificate. */
  caCertFile?: string;
  skipVerify?: boolean;
  authToken?: string;
}

/** One named control plane. */
export interface ControlPlaneEntry {
  name: string;
  coordinates: { apiServer: ApiServerCoordinates };
}

/** A context names a control plane (and may later carry defaults such as a mesh). */
export interface ContextEntry {
  name: string;
  controlPlane: string;
}

/** The content of `~/.meshctl/config.yaml`, in kumactl's shape. */
export interface MeshctlConfig {
  contexts: ContextEntry[];
  controlPlanes: ControlPlaneEntry[];
  currentContext: string;
}

/** The address of the default `local` context (as kumactl). */
export const DEFAULT_ADDRESS = 'http://127.0.0.1:5681';

/** The config a user has before adding any control plane: one `local` context. */
export function defaultConfig(): MeshctlConfig {
  return {
    contexts: [{ name: 'local', controlPlane: 'local' }],
    controlPlanes: [{ name: 'local', coordinates: { apiServer: { url: DEFAULT_ADDRESS } } }],
    currentContext: 'local',
  };
}

/** Where the config lives: `--config-file`, else `MESHCTL_CONFIG`, else `~/.meshctl/config.yaml`. */
export function configPath(flag: string | undefined, env: NodeJS.ProcessEnv): string {
  return flag ?? env.MESHCTL_CONFIG ?? join(homedir(), '.meshctl', 'config.yaml');
}

/** Thrown when the config file cannot be read or makes no sense; main prints the message. */
export class ConfigFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'ConfigFileError';
  }
}

/** Reads the config (the default one when the file does not exist). */
export async function readConfig(path: string): Promise<MeshctlConfig> {
  if (!existsSync(path)) return defaultConfig();
  const text = readFileSync(path, 'utf8');
  let raw: unknown;
  try {
    // meshctl writes JSON (which is YAML too): read without loading the YAML parser (~40 ms).
    raw = JSON.parse(text);
  } catch {
    try {
      // A file a person wrote in YAML.
      const { parse } = await import('./yaml-codec.js');
      raw = parse(text);
    } catch (err) {
      throw new ConfigFileError(`${path}: not valid YAML: ${(err as Error).message}`);
    }
  }
  if (raw === null || raw === undefined) return defaultConfig();
  const c = raw as Partial<MeshctlConfig>;
  if (typeof c !== 'object' || !Array.isArray(c.contexts ?? []) || !Array.isArray(c.controlPlanes ?? [])) {
    throw new ConfigFileError(`${path}: expected an object with contexts and controlPlanes lists`);
  }
  return {
    contexts: c.contexts ?? [],
    controlPlanes: c.controlPlanes ?? [],
    currentContext: c.currentContext ?? '',
  };
}

/** Writes the config as JSON (a YAML document), readable by its owner only (file 0600, directory 0700). */
export function writeConfig(path: string, config: MeshctlConfig): void {
  const dir = dirname(path);
  if (!existsSync(dir)) mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Written beside and renamed, so that a reader never sees half a file. JSON is YAML too, and
  // reading it back needs no YAML parser.
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, `${JSON.stringify(config, null, 2)}\n`, { mode: 0o600 });
  chmodSync(tmp, 0o600);
  renameSync(tmp, path);
}

/** The control plane of a context, or undefined when the context or its control plane is missing. */
export function controlPlaneOf(config: MeshctlConfig, context: string): ControlPlaneEntry | undefined {
  const ctx = config.contexts.find((c) => c.name === context);
  return ctx && config.controlPlanes.find((cp) => cp.name === ctx.controlPlane);
}
