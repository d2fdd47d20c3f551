import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { envNameOf, listConfigKeys, loadConfig } from '../../../src/config/load.js';
import { configSchema } from '../../../src/config/schema.js';
import { AppError } from '../../../src/util/errors.js';

let dir: string;

beforeEach(() => {
  dir = mkdtempSync(join(tmpdir(), 'mesh-cp-config-'));
});

afterEach(() => {
  rmSync(dir, { recursive: true, force: true });
});

/** Writes `text` to `<tmp>/config.yaml` and returns its path. */
function configFile(text: string): string {
  const file = join(dir, 'config.yaml');
  writeFileSync(file, text);
  return file;
}

/** The AppError that loading throws. */
function loadError(options: Parameters<typeof loadConfig>[0]): AppError {
  try {
    loadConfig(options);
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    const appError = error as AppError;
    expect(appError.code).toBe('BAD_REQUEST');
    expect(appError.title).toBe('invalid configuration');
    return appError;
  }
  throw new Error('loadConfig did not throw');
}

/** The problem lines of the error's message. */
function problemLines(error: AppError): string[] {
  return error.message
    .split('\n')
    .slice(1)
    .map((line) => line.trim());
}

// decisions §1: "Keys that scripts and tests rely on (env name in brackets)".
const DECIDED_ENV_NAMES: [string, string][] = [
  ['mode', 'MESH_MODE'],
  ['environment', 'MESH_ENVIRONMENT'],
  ['apiServer.port', 'MESH_API_SERVER_PORT'],
  ['apiServer.https.port', 'MESH_API_SERVER_HTTPS_PORT'],
  ['apiServer.readOnly', 'MESH_API_SERVER_READ_ONLY'],
  ['xdsServer.grpcPort', 'MESH_XDS_SERVER_GRPC_PORT'],
  ['diagnostics.port', 'MESH_DIAGNOSTICS_PORT'],
  ['store.type', 'MESH_STORE_TYPE'],
  ['store.level.path', 'MESH_STORE_LEVEL_PATH'],
  ['multizone.global.kds.grpcPort', 'MESH_MULTIZONE_GLOBAL_KDS_GRPC_PORT'],
  ['multizone.zone.name', 'MESH_MULTIZONE_ZONE_NAME'],
  ['multizone.zone.globalAddress', 'MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS'],
  ['multizone.zone.kds.token', 'MESH_MULTIZONE_ZONE_KDS_TOKEN'],
  ['multizone.zone.kds.rootCaFile', 'MESH_MULTIZONE_ZONE_KDS_ROOT_CA_FILE'],
  ['multizone.zone.kds.tlsSkipVerify', 'MESH_MULTIZONE_ZONE_KDS_TLS_SKIP_VERIFY'],
];

describe('env names', () => {
  it.each(DECIDED_ENV_NAMES)('%s is %s (decisions §1)', (path, env) => {
    expect(envNameOf(path.split('.'))).toBe(env);
    expect(listConfigKeys()).toContainEqual({ path, env });
  });

  it('gives every leaf key of the schema one unique env name', () => {
    const keys = listConfigKeys();
    expect(keys.length).toBeGreaterThan(60);
    expect(new Set(keys.map((key) => key.env)).size).toBe(keys.length);
    for (const key of keys) {
      expect(key.env).toBe(envNameOf(key.path.split('.')));
      expect(key.env).toMatch(/^MESH_[A-Z0-9]+(_[A-Z0-9]+)*$/);
    }
  });

  it('lists the keys of the brief that are not in the decisions table', () => {
    expect(listConfigKeys()).toEqual(
      expect.arrayContaining([
        { path: 'apiServer.corsAllowedDomains', env: 'MESH_API_SERVER_CORS_ALLOWED_DOMAINS' },
        { path: 'apiServer.authn.localhostIsAdmin', env: 'MESH_API_SERVER_AUTHN_LOCALHOST_IS_ADMIN' },
        {
          path: 'adminServer.apis.dataplaneToken.enabled',
          env: 'MESH_ADMIN_SERVER_APIS_DATAPLANE_TOKEN_ENABLED',
        },
        { path: 'store.postgres.dbName', env: 'MESH_STORE_POSTGRES_DB_NAME' },
        { path: 'log.level', env: 'MESH_LOG_LEVEL' },
      ]),
    );
  });

  it('sets every listed key from its env name', () => {
    const defaults = configSchema.parse({});
    for (const { path, env } of listConfigKeys()) {
      const segments = path.split('.');
      const current = segments.reduce<unknown>(
        (value, segment) => (value as Record<string, unknown>)[segment],
        defaults,
      );
      // A value of the key's type that differs from its default (or equals it where no other one is valid alone).
      const text =
        typeof current === 'boolean'
          ? String(!current)
          : typeof current === 'number'
            ? String(current + 1)
            : Array.isArray(current)
              ? 'a,b'
              : undefined;
      if (text === undefined) continue;
      const config = loadConfig({ env: { [env]: text } });
      const value = segments.reduce<unknown>((v, segment) => (v as Record<string, unknown>)[segment], config);
      expect(value, env).not.toEqual(current);
    }
  });

  it('reaches every string key by its env name', () => {
    const config = loadConfig({
      env: {
        MESH_STORE_LEVEL_PATH: '/var/lib/mesh',
        MESH_GENERAL_ADVERTISED_HOSTNAME: 'cp.example',
        MESH_MULTIZONE_ZONE_KDS_TOKEN: 'zone-token',
        MESH_BOOTSTRAP_SERVER_PARAMS_XDS_CONNECT_TIMEOUT: '300ms',
        MESH_LOG_LEVEL: 'debug',
      },
    });
    expect(config.store.level.path).toBe('/var/lib/mesh');
    expect(config.general.advertisedHostname).toBe('cp.example');
    expect(config.multizone.zone.kds.token).toBe('zone-token');
    expect(config.bootstrapServer.params.xdsConnectTimeout).toBe('300ms');
    expect(config.log.level).toBe('debug');
  });
});

describe('loadConfig', () => {
  it('gives the defaults with no file and no env', () => {
    expect(loadConfig({ env: {} })).toEqual(configSchema.parse({}));
  });

  it('ignores variables without the MESH_ prefix', () => {
    expect(loadConfig({ env: { PATH: '/bin', HOME: '/root', mesh_mode: 'zone' } }).mode).toBe('standalone');
  });

  it('applies defaults, then the file, then env vars', () => {
    const file = configFile(
      [
        'apiServer:',
        '  port: 7000',
        '  readOnly: true',
        'store:',
        '  type: memory',
        'diagnostics:',
        '  port: 7001',
      ].join('\n'),
    );
    const config = loadConfig({ file, env: { MESH_API_SERVER_PORT: '8000', MESH_DIAGNOSTICS_PORT: '0' } });
    expect(config.apiServer.port).toBe(8000); // env beats file
    expect(config.diagnostics.port).toBe(0); // env beats file, 0 is a value
    expect(config.apiServer.readOnly).toBe(true); // file beats default
    expect(config.store.type).toBe('memory');
    expect(config.apiServer.https.port).toBe(5682); // default
    expect(config.store.level.path).toBe('./data');
  });

  it('reads an empty file or a file of comments as no settings', () => {
    expect(loadConfig({ file: configFile(''), env: {} })).toEqual(configSchema.parse({}));
    expect(loadConfig({ file: configFile('# nothing here\n'), env: {} })).toEqual(configSchema.parse({}));
  });

  it('coerces booleans from true/false/1/0', () => {
    for (const [text, value] of [
      ['true', true],
      ['1', true],
      ['TRUE', true],
      ['false', false],
      ['0', false],
    ] as const) {
      expect(loadConfig({ env: { MESH_API_SERVER_READ_ONLY: text } }).apiServer.readOnly).toBe(value);
    }
    const error = loadError({ env: { MESH_API_SERVER_READ_ONLY: 'yes' } });
    expect(problemLines(error)).toEqual([
      'apiServer.readOnly (from MESH_API_SERVER_READ_ONLY): must be true, false, 1 or 0',
    ]);
  });

  it('coerces lists from comma-separated text or a JSON array', () => {
    const list = (text: string) =>
      loadConfig({ env: { MESH_API_SERVER_CORS_ALLOWED_DOMAINS: text } }).apiServer.corsAllowedDomains;
    expect(list('https://a\\.example, https://b\\.example')).toEqual([
      'https://a\\.example',
      'https://b\\.example',
    ]);
    expect(list('["^a{1,3}$"]')).toEqual(['^a{1,3}$']);
    expect(list('')).toEqual([]);
    expect(problemLines(loadError({ env: { MESH_API_SERVER_CORS_ALLOWED_DOMAINS: '[1, 2]' } }))).toEqual([
      'apiServer.corsAllowedDomains (from MESH_API_SERVER_CORS_ALLOWED_DOMAINS): must be a JSON array of strings or a comma-separated list',
    ]);
    expect(problemLines(loadError({ env: { MESH_API_SERVER_CORS_ALLOWED_DOMAINS: '.*,(' } }))).toEqual([
      'apiServer.corsAllowedDomains[1] (from MESH_API_SERVER_CORS_ALLOWED_DOMAINS): must be a valid regular expression',
    ]);
  });

  it('takes integers only for numbers', () => {
    expect(loadConfig({ env: { MESH_API_SERVER_BODY_LIMIT: '2048' } }).apiServer.bodyLimit).toBe(2048);
    for (const text of ['abc', '1.5', '', '5e3', '0x10']) {
      expect(problemLines(loadError({ env: { MESH_API_SERVER_PORT: text } }))).toEqual([
        'apiServer.port (from MESH_API_SERVER_PORT): must be an integer between 0 and 65535',
      ]);
    }
    expect(problemLines(loadError({ env: { MESH_API_SERVER_PORT: '70000' } }))).toEqual([
      'apiServer.port (from MESH_API_SERVER_PORT): must be an integer between 0 and 65535',
    ]);
    expect(problemLines(loadError({ env: { MESH_API_SERVER_BODY_LIMIT: '0' } }))).toEqual([
      'apiServer.bodyLimit (from MESH_API_SERVER_BODY_LIMIT): must be an integer of at least 1',
    ]);
  });

  it('refuses a duration longer than a timer can hold (596h), however many digits, naming the key', () => {
    expect(loadConfig({ env: { MESH_API_SERVER_TIMEOUTS_IDLE: '596h' } }).apiServer.timeouts.idle).toBe(
      '596h',
    );
    for (const text of ['597h', '1000h', '9999999999999h', `${'9'.repeat(400)}h`, `${'9'.repeat(400)}ns`]) {
      expect(problemLines(loadError({ env: { MESH_API_SERVER_WATCH_HEARTBEAT_INTERVAL: text } }))).toEqual([
        'apiServer.watch.heartbeatInterval (from MESH_API_SERVER_WATCH_HEARTBEAT_INTERVAL): must be at most 596h (the longest timer Node.js can set)',
      ]);
    }
    const file = configFile('apiServer:\n  timeouts:\n    idle: 9999999999999h\n');
    expect(problemLines(loadError({ file }))).toEqual([
      `apiServer.timeouts.idle (from ${file}): must be at most 596h (the longest timer Node.js can set)`,
    ]);
  });

  it('names an unknown MESH_ variable and suggests the nearest name', () => {
    expect(problemLines(loadError({ env: { MESH_API_SERVER_PROT: '1' } }))).toEqual([
      'MESH_API_SERVER_PROT (from environment): unknown variable: no config key has this env name; did you mean MESH_API_SERVER_PORT?',
    ]);
    expect(problemLines(loadError({ env: { MESH_COLOUR: 'blue' } }))).toEqual([
      'MESH_COLOUR (from environment): unknown variable: no config key has this env name',
    ]);
  });

  it('names an unknown key in the file with the file as its source', () => {
    const file = configFile('apiServer:\n  prot: 5681\ncolour: blue\n');
    const lines = problemLines(loadError({ file, env: {} }));
    expect(lines).toEqual([
      `apiServer.prot (from ${file}): unknown key; did you mean port?`,
      `colour (from ${file}): unknown key`,
    ]);
  });

  it('names the key and the file for a bad value in the file', () => {
    const file = configFile('apiServer:\n  port: "5681"\nmode: solo\nxdsServer: 5\n');
    expect(problemLines(loadError({ file, env: {} }))).toEqual([
      `apiServer.port (from ${file}): must be an integer between 0 and 65535`,
      `mode (from ${file}): must be one of standalone, global, zone`,
      `xdsServer (from ${file}): must be a mapping of keys to values`,
    ]);
  });

  it('lists every problem from the file and the env at once, with causes', () => {
    const file = configFile('apiServer:\n  prot: 1\nstore:\n  postgres:\n    maxOpenConnections: 0\n');
    const error = loadError({
      file,
      env: {
        MESH_API_SERVER_PORT: 'x',
        MESH_API_SERVER_READ_ONLY: 'maybe',
        MESH_MODE: 'zone',
        MESH_NOPE: '1',
      },
    });
    expect(error.message.split('\n')[0]).toBe('invalid configuration (7 problems):');
    expect(problemLines(error)).toEqual([
      'MESH_NOPE (from environment): unknown variable: no config key has this env name',
      'apiServer.port (from MESH_API_SERVER_PORT): must be an integer between 0 and 65535',
      `apiServer.prot (from ${file}): unknown key; did you mean port?`,
      'apiServer.readOnly (from MESH_API_SERVER_READ_ONLY): must be true, false, 1 or 0',
      'multizone.zone.globalAddress (not set; env MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS): must be set when mode is zone (the Global sync address, such as grpcs://global.example:5685)',
      'multizone.zone.name (not set; env MESH_MULTIZONE_ZONE_NAME): must be set when mode is zone',
      `store.postgres.maxOpenConnections (from ${file}): must be an integer of at least 5`,
    ]);
    expect(error.causes.map((cause) => cause.field)).toEqual([
      'MESH_NOPE',
      'apiServer.port',
      'apiServer.prot',
      'apiServer.readOnly',
      'multizone.zone.globalAddress',
      'multizone.zone.name',
      'store.postgres.maxOpenConnections',
    ]);
  });

  it('loads a zone from the env alone', () => {
    const config = loadConfig({
      env: {
        MESH_MODE: 'zone',
        MESH_MULTIZONE_ZONE_NAME: 'zone-1',
        MESH_MULTIZONE_ZONE_GLOBAL_ADDRESS: 'grpcs://127.0.0.1:5685',
        MESH_MULTIZONE_ZONE_KDS_TLS_SKIP_VERIFY: '1',
      },
    });
    expect(config.mode).toBe('zone');
    expect(config.multizone.zone).toEqual({
      name: 'zone-1',
      globalAddress: 'grpcs://127.0.0.1:5685',
      kds: { token: '', rootCaFile: '', tlsSkipVerify: true },
    });
  });

  it('checks a zone name given in the file against the mode given in the env', () => {
    const file = configFile(
      'multizone:\n  zone:\n    name: zone-1\n    globalAddress: https://global:5685\n',
    );
    expect(problemLines(loadError({ file, env: { MESH_MODE: 'zone' } }))).toEqual([
      `multizone.zone.globalAddress (from ${file}): must start with grpcs:// (Global serves its sync port over TLS only)`,
    ]);
  });

  it('names the file, line and column of a YAML syntax error', () => {
    const file = configFile('apiServer:\n  port: 5681\n  https: [1, 2\nmode: zone\n');
    const error = loadError({ file, env: {} });
    expect(error.message).toMatch(
      new RegExp(`^${file.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}:4:1: YAML syntax error: `),
    );
  });

  it('rejects duplicate keys in the file', () => {
    const file = configFile('mode: zone\nmode: global\n');
    expect(loadError({ file, env: {} }).message).toContain(
      `${file}:2:1: YAML syntax error: Map keys must be unique`,
    );
  });

  it('refuses a file nested deeper than the YAML bounds, naming where (no stack overflow)', () => {
    const file = configFile(`apiServer:\n  corsAllowedDomains: ${'['.repeat(1000)}${']'.repeat(1000)}\n`);
    expect(loadError({ file, env: {} }).message).toBe(
      `${file}:2:85: YAML too large or too deep: it nests more than 64 levels of arrays and objects`,
    );
  });

  it('refuses a file of several YAML documents', () => {
    const file = configFile('mode: zone\n---\nmode: global\n');
    expect(loadError({ file, env: {} }).message).toContain(
      `${file}:2:1: YAML syntax error: a config file is one YAML document`,
    );
  });

  it('rejects a file whose top level is not a mapping', () => {
    const file = configFile('- a\n- b\n');
    expect(loadError({ file, env: {} }).message).toBe(
      `${file}: the top level must be a mapping of config keys`,
    );
  });

  it('names a file it cannot read', () => {
    const file = join(dir, 'missing.yaml');
    expect(loadError({ file, env: {} }).message).toContain(`cannot read the config file ${file}: ENOENT`);
  });
});
