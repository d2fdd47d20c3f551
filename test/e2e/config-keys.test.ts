import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { listConfigKeys } from '../../src/config/load.js';
import { meshCp, REPO_ROOT, startMeshCp } from '../helpers/process.js';

/** The fatal line (pino level 60) of a start-up that failed. */
const fatalOf = (stdout: string): string | undefined =>
  stdout
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as { level: number; msg: string })
    .find((line) => line.level === 60)?.msg;

const FREE_PORTS = {
  MESH_STORE_TYPE: 'memory',
  MESH_API_SERVER_PORT: '0',
  MESH_API_SERVER_HTTPS_ENABLED: 'false',
  MESH_DIAGNOSTICS_PORT: '0',
  MESH_XDS_SERVER_GRPC_PORT: '0',
};

describe('mesh-cp config-keys', () => {
  it('--format json: every key with its env name, default, meaning and inert flag', async () => {
    const result = await meshCp(['config-keys', '--format', 'json']);
    expect(result.code).toBe(0);
    const rows = JSON.parse(result.stdout) as Array<Record<string, unknown>>;
    expect(rows.map((row) => ({ path: row.path, env: row.env }))).toEqual(listConfigKeys());
    expect(rows.find((row) => row.path === 'apiServer.port')).toEqual({
      path: 'apiServer.port',
      env: 'MESH_API_SERVER_PORT',
      default: 5681,
      meaning: 'port of the HTTP API',
      inert: false,
    });
    expect(rows.find((row) => row.path === 'reports.enabled')).toMatchObject({ default: false, inert: true });
  }, 15_000);

  it('prints tab-separated lines when stdout is not a terminal: path and env first, as before', async () => {
    const result = await meshCp(['config-keys']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines.map((line) => line.split('\t').slice(0, 2).join('\t'))).toEqual(
      listConfigKeys().map((key) => `${key.path}\t${key.env}`),
    );
    expect(lines).toContain(
      'sdsServer.grpcPort\tMESH_SDS_SERVER_GRPC_PORT\t5677\tinert\tport of the secret discovery server (no SDS server here)',
    );
    expect((await meshCp(['config-keys', '--format', 'tsv'])).stdout).toBe(result.stdout);
  }, 15_000);

  it('--format table aligns the columns for people and marks inert keys', async () => {
    const result = await meshCp(['config-keys', '--format', 'table']);
    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(/^KEY +DEFAULT +ENV +MEANING$/);
    const envColumn = lines[0].indexOf('ENV');
    for (const line of lines.slice(1)) expect(line.slice(envColumn), line).toMatch(/^MESH_/);
    expect(lines.find((line) => line.startsWith('reports.enabled '))).toContain('(inert) ');
  }, 15_000);

  it('--format markdown is docs/config.md; an unknown format is refused', async () => {
    const result = await meshCp(['config-keys', '--format', 'markdown']);
    expect(result.stdout).toBe(readFileSync(join(REPO_ROOT, 'docs', 'config.md'), 'utf8'));
    const bad = await meshCp(['config-keys', '--format', 'yaml']);
    expect(bad.code).not.toBe(0);
    expect(bad.stderr).toContain('must be one of table, tsv, json, markdown');
  }, 15_000);
});

describe('an inert key set at start', () => {
  it('logs one warning naming the key and its env, never its value; a live key logs none', async () => {
    const cp = startMeshCp({
      ...FREE_PORTS,
      MESH_REPORTS_ENABLED: 'true',
      MESH_STORE_KUBERNETES_SYSTEM_NAMESPACE: 'hunter2-namespace',
      MESH_STORE_POSTGRES_PASSWORD: 'hunter2-secret',
      MESH_BOOTSTRAP_SERVER_PARAMS_XDS_PORT: '15678',
    });
    try {
      await cp.ready;
      const warnings = cp.lines.filter((line) => line.level === 40 && typeof line.key === 'string');
      expect(warnings.map((line) => [line.key, line.env, line.msg])).toEqual([
        [
          'reports.enabled',
          'MESH_REPORTS_ENABLED',
          'config key reports.enabled (MESH_REPORTS_ENABLED) is set, but mesh-cp does not act on it (see mesh-cp config-keys)',
        ],
        [
          'store.kubernetes.systemNamespace',
          'MESH_STORE_KUBERNETES_SYSTEM_NAMESPACE',
          'config key store.kubernetes.systemNamespace (MESH_STORE_KUBERNETES_SYSTEM_NAMESPACE) is set, but mesh-cp does not act on it (see mesh-cp config-keys)',
        ],
      ]);
      expect(JSON.stringify(cp.lines)).not.toContain('hunter2-namespace');
      expect(JSON.stringify(cp.lines)).not.toContain('hunter2-secret');
    } finally {
      cp.proc.kill('SIGTERM');
      expect((await cp.exited).code).toBe(0);
    }
  }, 20_000);
});

describe('a bad bind address stops start-up with exit 2, naming the key', () => {
  it('one that is not an IP address: refused with the config, naming the key and variable', async () => {
    const result = await meshCp(['run'], { ...FREE_PORTS, MESH_DIAGNOSTICS_BIND_ADDRESS: 'localhost' });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'diagnostics.bindAddress (from MESH_DIAGNOSTICS_BIND_ADDRESS): must be an IP address',
    );
  }, 15_000);

  it.each([
    ['apiServer.bindAddress', 'MESH_API_SERVER_BIND_ADDRESS'],
    ['xdsServer.bindAddress', 'MESH_XDS_SERVER_BIND_ADDRESS'],
  ])(
    'an address that is not this machine’s (%s)',
    async (key, env) => {
      // 192.0.2.1 is TEST-NET-1 (RFC 5737): no machine has it.
      const result = await meshCp(['run'], { ...FREE_PORTS, [env]: '192.0.2.1' });
      expect(result.code).toBe(2);
      expect(fatalOf(result.stdout)).toBe(
        `address 192.0.2.1 (${key}) is not an address of this machine; set ${key} (${env}) ` +
          'to one of its addresses, or 0.0.0.0 for every one',
      );
    },
    15_000,
  );
});
