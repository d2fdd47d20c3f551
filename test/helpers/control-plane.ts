import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Config } from '../../src/config/schema.js';
import { loadConfig } from '../../src/config/load.js';
import type { ControlPlane, StartOptions } from '../../src/runtime/control-plane.js';
import { startControlPlane } from '../../src/runtime/control-plane.js';
import { testKeygen } from './signing-keys.js';

/** A fixed clock for deterministic times in golden files. */
export const FIXED_TIME = '2026-01-02T03:04:05.678Z';

/** Builds a config from MESH_* style overrides (memory store unless a path is given). */
export function testConfig(env: Record<string, string> = {}): Config {
  return loadConfig({ env: { MESH_STORE_TYPE: 'memory', ...env } });
}

/**
 * `startControlPlane` for tests: its signing keys come from {@link testKeygen} (kept keys, each
 * handed out once) unless `opts.keygen` is given.
 */
export function startPlane(config: Config, opts: StartOptions = {}): Promise<ControlPlane> {
  return startControlPlane(config, { keygen: testKeygen, ...opts });
}

/** Starts an in-process control plane without listening; `app.inject()` drives it. */
export async function startTestPlane(
  env: Record<string, string> = {},
  opts: { fixedClock?: boolean } = {},
): Promise<ControlPlane> {
  const now = opts.fixedClock ? () => new Date(FIXED_TIME) : undefined;
  const cp = await startPlane(testConfig(env), { listen: false, now });
  await cp.defaultsReady;
  return cp;
}

/** A control plane listening on 127.0.0.1 (free ports, no HTTPS), memory store unless `env` says. */
export async function startListeningPlane(
  env: Record<string, string> = {},
  opts: { logger?: Logger } = {},
): Promise<ControlPlane> {
  const cp = await startPlane(
    testConfig({
      MESH_API_SERVER_PORT: '0',
      MESH_API_SERVER_HTTPS_ENABLED: 'false',
      MESH_DIAGNOSTICS_PORT: '0',
      MESH_XDS_SERVER_GRPC_PORT: '0',
      ...env,
    }),
    { logger: opts.logger },
  );
  await cp.defaultsReady;
  return cp;
}

/**
 * A listening control plane (as {@link startListeningPlane}) that also serves HTTPS on a free port,
 * with a LevelDB store in `dataDir`: the self-signed certificate made at first start is written to
 * `<dataDir>/tls`.
 */
export function startHttpsPlane(dataDir: string): Promise<ControlPlane> {
  return startListeningPlane({
    MESH_STORE_TYPE: 'level',
    MESH_STORE_LEVEL_PATH: dataDir,
    MESH_API_SERVER_HTTPS_ENABLED: 'true',
    MESH_API_SERVER_HTTPS_PORT: '0',
  });
}

/** A temp dir removed by the returned cleanup. */
export function tempDir(prefix = 'mesh-cp-'): { path: string; cleanup: () => void } {
  const path = mkdtempSync(join(tmpdir(), prefix));
  return { path, cleanup: () => rmSync(path, { recursive: true, force: true }) };
}
