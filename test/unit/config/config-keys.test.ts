import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { configDocsMarkdown, defaultText } from '../../../src/config/config-docs.js';
import { configKeyTable, envNameOf, inertKeysSet } from '../../../src/config/config-keys.js';
import { loadConfig } from '../../../src/config/load.js';
import { configSchema } from '../../../src/config/schema.js';
import { tempDir } from '../../helpers/control-plane.js';
import { REPO_ROOT } from '../../helpers/process.js';

/** The keys found, by reading the code, to be accepted but not acted on. */
const INERT = [
  'adminServer.apis.dataplaneToken.enabled',
  'adminServer.local.port',
  'adminServer.public.enabled',
  'adminServer.public.interface',
  'adminServer.public.port',
  'adminServer.public.clientCertsDir',
  'adminServer.public.tlsCertFile',
  'adminServer.public.tlsKeyFile',
  'bootstrapServer.port',
  'bootstrapServer.params.adminAccessLogPath',
  'bootstrapServer.params.adminAddress',
  'bootstrapServer.params.adminPort',
  'bootstrapServer.params.xdsConnectTimeout',
  'dataplaneTokenServer.enabled',
  'dataplaneTokenServer.local.port',
  'dataplaneTokenServer.public.enabled',
  'dataplaneTokenServer.public.interface',
  'dataplaneTokenServer.public.port',
  'dataplaneTokenServer.public.clientCertsDir',
  'dataplaneTokenServer.public.tlsCertFile',
  'dataplaneTokenServer.public.tlsKeyFile',
  'discovery.universal.pollingInterval',
  'monitoringAssignmentServer.assignmentRefreshInterval',
  'monitoringAssignmentServer.grpcPort',
  'reports.enabled',
  'runtime.kubernetes.admissionServer.address',
  'runtime.kubernetes.admissionServer.certDir',
  'runtime.kubernetes.admissionServer.port',
  'sdsServer.grpcPort',
  'sdsServer.tlsCertFile',
  'sdsServer.tlsKeyFile',
  'store.kubernetes.systemNamespace',
  'xdsServer.dataplaneConfigurationRefreshInterval',
  'xdsServer.diagnosticsPort',
];

/** The leaf paths of a value (objects walked, arrays and records of groups as leaves where the schema has them). */
function leafPaths(value: unknown, path: string[] = []): string[] {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return [path.join('.')];
  if (path.join('.') === 'apiServer.authz.groups') return [path.join('.')];
  return Object.entries(value).flatMap(([name, child]) => leafPaths(child, [...path, name]));
}

describe('the config key table', () => {
  const table = configKeyTable();

  it('has every leaf of the effective config, each with its env name, default and one line of meaning', () => {
    const defaults = configSchema.parse({});
    expect(table.map((row) => row.path)).toEqual(leafPaths(defaults));
    for (const row of table) {
      expect(row.env, row.path).toBe(envNameOf(row.path.split('.')));
      expect(row.default, row.path).toEqual(
        row.path.split('.').reduce<unknown>((v, s) => (v as Record<string, unknown>)[s], defaults),
      );
      expect(row.meaning.length, row.path).toBeGreaterThan(10);
      expect(row.meaning, row.path).not.toContain('\n');
    }
  });

  it('marks exactly the keys that the server accepts and does not act on as inert', () => {
    expect(table.filter((row) => row.inert).map((row) => row.path)).toEqual(INERT);
  });

  it('has a bindAddress, default 0.0.0.0, for every listener', () => {
    const bind = table.filter((row) => row.path.endsWith('.bindAddress'));
    expect(bind.map((row) => [row.path, row.env, row.default, row.inert])).toEqual([
      ['apiServer.bindAddress', 'MESH_API_SERVER_BIND_ADDRESS', '0.0.0.0', false],
      ['apiServer.https.bindAddress', 'MESH_API_SERVER_HTTPS_BIND_ADDRESS', '0.0.0.0', false],
      ['diagnostics.bindAddress', 'MESH_DIAGNOSTICS_BIND_ADDRESS', '0.0.0.0', false],
      ['xdsServer.bindAddress', 'MESH_XDS_SERVER_BIND_ADDRESS', '0.0.0.0', false],
      ['multizone.global.kds.bindAddress', 'MESH_MULTIZONE_GLOBAL_KDS_BIND_ADDRESS', '0.0.0.0', false],
    ]);
  });

  it('shows defaults as text: strings bare, empty as "", other values as JSON', () => {
    expect(defaultText({ default: 'localhost' })).toBe('localhost');
    expect(defaultText({ default: '' })).toBe('""');
    expect(defaultText({ default: 5681 })).toBe('5681');
    expect(defaultText({ default: false })).toBe('false');
    expect(defaultText({ default: [] })).toBe('[]');
  });
});

describe('inert keys set at start', () => {
  it('none by default', () => {
    expect(inertKeysSet(loadConfig({ env: {} }))).toEqual([]);
  });

  it('names each inert key set to another value from the environment, and no live key', () => {
    const config = loadConfig({
      env: {
        MESH_REPORTS_ENABLED: 'true',
        MESH_STORE_POSTGRES_PASSWORD: 'secret',
        MESH_STORE_KUBERNETES_SYSTEM_NAMESPACE: 'cp',
        MESH_SDS_SERVER_GRPC_PORT: '5677',
        MESH_LOG_LEVEL: 'warn',
        MESH_BOOTSTRAP_SERVER_PARAMS_XDS_HOST: 'xds.example',
      },
    });
    expect(inertKeysSet(config)).toEqual([
      { key: 'reports.enabled', env: 'MESH_REPORTS_ENABLED' },
      { key: 'store.kubernetes.systemNamespace', env: 'MESH_STORE_KUBERNETES_SYSTEM_NAMESPACE' },
    ]);
  });

  it('names an inert key set in the config file', () => {
    const dir = tempDir('config-keys-');
    try {
      const file = join(dir.path, 'mesh-cp.yaml');
      writeFileSync(file, 'discovery:\n  universal:\n    pollingInterval: 5s\ndefaults:\n  mesh: ""\n');
      expect(inertKeysSet(loadConfig({ file, env: {} }))).toEqual([
        { key: 'discovery.universal.pollingInterval', env: 'MESH_DISCOVERY_UNIVERSAL_POLLING_INTERVAL' },
      ]);
    } finally {
      dir.cleanup();
    }
  });
});

describe('docs/config.md', () => {
  it('is what `npm run docs:config` writes from the key table (run it after changing a key)', () => {
    const file = readFileSync(join(REPO_ROOT, 'docs', 'config.md'), 'utf8');
    expect(file).toBe(configDocsMarkdown());
  });

  it('lists every key with its default, env name and an inert marker where one applies', () => {
    const markdown = configDocsMarkdown();
    for (const row of configKeyTable()) {
      const line = markdown.split('\n').find((l) => l.startsWith(`| \`${row.path}\` |`));
      expect(line, row.path).toBeDefined();
      expect(line).toContain(`\`${row.env}\``);
      expect(line?.includes('**inert**'), row.path).toBe(row.inert);
    }
  });
});
