import { join } from 'node:path';
import type { Logger } from 'pino';
import { expect } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { createLogger } from '../../src/runtime/logger.js';
import type { MultizoneOptions } from '../../src/runtime/multizone.js';

/** `MZ_DEBUG=1` logs both sides at debug level (for a failing test). */
const logger = process.env.MZ_DEBUG ? createLogger('debug') : undefined;
import { startPlane, testConfig } from './control-plane.js';

/** Re-exported: the multi-zone tests wait with it (it was first written here). */
export { eventually } from './eventually.js';

/** A TrafficPermission of `mesh` (`default` unless told) from every service to `destination` (every service unless told). */
export const tp = (name: string, mesh = 'default', destination = '*') => ({
  type: 'TrafficPermission',
  mesh,
  name,
  sources: [{ match: { 'mesh.io/service': '*' } }],
  destinations: [{ match: { 'mesh.io/service': destination } }],
});

/** Short sync timers for in-process tests. */
export const FAST_SYNC = {
  timers: { heartbeatMs: 200, idleTimeoutMs: 1500 },
  backoff: { min: 50, max: 300 },
};

/**
 * A Global on 127.0.0.1 port 0 (API over HTTP only) with a LevelDB store in `dir` (its sync certificate
 * lands there); short sync timers unless `opts.multizone` says otherwise.
 */
export async function startGlobal(
  dir: string,
  env: Record<string, string> = {},
  opts: { logger?: Logger; multizone?: MultizoneOptions } = {},
): Promise<ControlPlane> {
  const cp = await startPlane(
    testConfig({
      MESH_MODE: 'global',
      MESH_STORE_TYPE: 'level',
      MESH_STORE_LEVEL_PATH: dir,
      MESH_API_SERVER_PORT: '0',
      MESH_API_SERVER_HTTPS_ENABLED: 'false',
      MESH_DIAGNOSTICS_PORT: '0',
      MESH_XDS_SERVER_GRPC_PORT: '0',
      MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT: '0',
      ...env,
    }),
    { multizone: opts.multizone ?? FAST_SYNC, logger: opts.logger ?? logger },
  );
  await cp.defaultsReady;
  return cp;
}

/** Issues a zone token on Global through `POST /tokens/zone` (as the loopback admin). */
export async function zoneToken(global: ControlPlane, zone: string, scope?: string[]): Promise<string> {
  const res = await global.app.inject({
    method: 'POST',
    url: '/tokens/zone',
    payload: { zone, validFor: '1h', ...(scope ? { scope } : {}) },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.body;
}

/** A zone that dials `global`, verifying it with the certificate Global keeps in `globalDir`. */
export async function startZone(
  global: ControlPlane,
  globalDir: string,
  zone: string,
  token: string,
  env: Record<string, string> = {},
  opts: { logger?: Logger } = {},
): Promise<ControlPlane> {
  return startPlane(
    testConfig({
      MESH_MODE: 'zone',
      MESH_MULTIZONE_ZONE_NAME: zone,
      MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: `grpcs://127.0.0.1:${global.ports.kds}`,
      MESH_MULTIZONE_ZONE_KDS_TOKEN: token,
      MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE: join(globalDir, 'tls', 'cert.pem'),
      MESH_API_SERVER_PORT: '0',
      MESH_API_SERVER_HTTPS_ENABLED: 'false',
      MESH_DIAGNOSTICS_PORT: '0',
      MESH_XDS_SERVER_GRPC_PORT: '0',
      ...env,
    }),
    { multizone: FAST_SYNC, logger: opts.logger ?? logger },
  );
}

/** A logger that keeps its JSON lines in `lines`. */
export function capturingLogger(): { logger: Logger; lines: Array<Record<string, unknown>> } {
  const lines: Array<Record<string, unknown>> = [];
  const logger = createLogger('info', {
    write: (line: string) => {
      lines.push(JSON.parse(line) as Record<string, unknown>);
    },
  });
  return { logger, lines };
}
