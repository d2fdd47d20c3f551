import { describe, expect, it } from 'vitest';
import { configSchema } from '../../../src/config/schema.js';

/** The issues of an invalid input as `path: message` lines. */
function issuesOf(input: unknown): string[] {
  const result = configSchema.safeParse(input);
  expect(result.success).toBe(false);
  return (result.error?.issues ?? []).map((issue) => `${issue.path.join('.')}: ${issue.message}`);
}

describe('configSchema', () => {
  it('parses {} to the full effective config with every default', () => {
    expect(configSchema.parse({})).toEqual({
      mode: 'standalone',
      environment: 'universal',
      apiServer: {
        port: 5681,
        bindAddress: '0.0.0.0',
        readOnly: false,
        corsAllowedDomains: [],
        allowedHosts: [],
        externalUrl: '',
        https: { enabled: true, port: 5682, bindAddress: '0.0.0.0', tlsCertFile: '', tlsKeyFile: '' },
        auth: { clientCertsDir: '' },
        authn: { localhostIsAdmin: true, anonymousWrite: false },
        authz: {
          anonymous: 'reader',
          groups: {
            'mesh-system:admin': { role: 'admin' },
            'mesh-system:writer': { role: 'writer' },
            'mesh-system:reader': { role: 'reader' },
          },
        },
        bodyLimit: 1048576,
        maxHeaderSize: 16384,
        timeouts: { headers: '10s', request: '30s', idle: '2m' },
        gui: { enabled: true },
        watch: { heartbeatInterval: '15s', bufferLimit: 4194304 },
      },
      adminServer: {
        apis: { dataplaneToken: { enabled: true } },
        local: { port: 5679 },
        public: {
          enabled: false,
          interface: '',
          port: 5682,
          clientCertsDir: '',
          tlsCertFile: '',
          tlsKeyFile: '',
        },
      },
      bootstrapServer: {
        port: 5682,
        params: {
          adminAccessLogPath: '/dev/null',
          adminAddress: '127.0.0.1',
          adminPort: 0,
          xdsConnectTimeout: '1s',
          xdsHost: '',
          xdsPort: 0,
        },
      },
      dataplaneTokenServer: {
        enabled: true,
        local: { port: 5679 },
        public: {
          enabled: false,
          interface: '',
          port: 0,
          clientCertsDir: '',
          tlsCertFile: '',
          tlsKeyFile: '',
        },
      },
      defaults: { skipMeshCreation: false, skipDefaultPolicies: false, mesh: '' },
      diagnostics: { port: 5680, bindAddress: '0.0.0.0' },
      discovery: { universal: { pollingInterval: '1s' } },
      general: { advertisedHostname: 'localhost' },
      monitoringAssignmentServer: { assignmentRefreshInterval: '1s', grpcPort: 5676 },
      reports: { enabled: false },
      runtime: { kubernetes: { admissionServer: { address: '', certDir: '', port: 5443 } } },
      sdsServer: { grpcPort: 5677, tlsCertFile: '', tlsKeyFile: '' },
      store: {
        type: 'level',
        level: { path: './data' },
        snapshot: { every: 10000 },
        kubernetes: { systemNamespace: 'mesh-system' },
        postgres: {
          connectionTimeout: 5,
          dbName: 'mesh',
          host: '127.0.0.1',
          password: '',
          port: 5432,
          user: 'mesh',
          maxOpenConnections: 10,
          tls: { mode: 'disable', caPath: '' },
        },
      },
      xdsServer: {
        dataplaneConfigurationRefreshInterval: '1s',
        dataplaneStatusFlushInterval: '250ms',
        diagnosticsPort: 5680,
        grpcPort: 5678,
        bindAddress: '0.0.0.0',
        advertisedAddress: '',
      },
      dpServer: { authn: { type: 'dpToken' } },
      multizone: {
        global: { kds: { grpcPort: 5685, bindAddress: '0.0.0.0', tlsCertFile: '', tlsKeyFile: '' } },
        zone: { name: '', globalAddress: '', kds: { token: '', rootCaFile: '', tlsSkipVerify: false } },
      },
      log: { level: 'info', format: 'json' },
    });
  });

  it('fills the defaults of a partly given section and keeps what was given', () => {
    const config = configSchema.parse({ apiServer: { https: { port: 0 } }, store: { type: 'memory' } });
    expect(config.apiServer.https).toEqual({
      enabled: true,
      port: 0,
      bindAddress: '0.0.0.0',
      tlsCertFile: '',
      tlsKeyFile: '',
    });
    expect(config.apiServer.port).toBe(5681);
    expect(config.store.type).toBe('memory');
    expect(config.store.level.path).toBe('./data');
  });

  it('does not share default arrays between parses', () => {
    const first = configSchema.parse({});
    first.apiServer.corsAllowedDomains.push('changed');
    expect(configSchema.parse({}).apiServer.corsAllowedDomains).toEqual([]);
  });

  it('accepts ports 0 to 65535 and rejects the rest', () => {
    expect(configSchema.parse({ apiServer: { port: 0 } }).apiServer.port).toBe(0);
    expect(configSchema.parse({ apiServer: { port: 65535 } }).apiServer.port).toBe(65535);
    for (const port of [-1, 65536, 1.5, '5681']) {
      expect(issuesOf({ apiServer: { port } })).toEqual([
        'apiServer.port: must be an integer between 0 and 65535',
      ]);
    }
  });

  it('rejects unknown keys at every depth', () => {
    const result = configSchema.safeParse({ colour: 1, apiServer: { https: { prot: 1 } } });
    expect(result.success).toBe(false);
    const unknown = result.error?.issues.filter((issue) => issue.code === 'unrecognized_keys');
    expect(unknown?.map((issue) => `${issue.path.join('.')}: ${issue.keys.join()}`).sort()).toEqual([
      ': colour',
      'apiServer.https: prot',
    ]);
  });

  it('rejects bad values with messages that say what is expected', () => {
    expect(
      issuesOf({
        mode: 'solo',
        apiServer: { readOnly: 'yes', corsAllowedDomains: ['(' as string] },
        xdsServer: { dataplaneStatusFlushInterval: 'soon' },
        log: { level: 'loud' },
        sdsServer: 5,
      }),
    ).toEqual([
      'mode: must be one of standalone, global, zone',
      'apiServer.readOnly: must be true or false',
      'apiServer.corsAllowedDomains.0: must be a valid regular expression',
      'sdsServer: must be a mapping of keys to values',
      'xdsServer.dataplaneStatusFlushInterval: must be a duration such as 300ms, 5s, 1.5s, 10m, 1h30m',
      'log.level: must be one of fatal, error, warn, info, debug, trace, silent',
    ]);
  });

  describe('cross-field checks', () => {
    it('needs the zone name and the Global address in zone mode', () => {
      expect(issuesOf({ mode: 'zone' })).toEqual([
        'multizone.zone.name: must be set when mode is zone',
        'multizone.zone.globalAddress: must be set when mode is zone (the Global sync address, such as grpcs://global.example:5685)',
      ]);
    });

    it('accepts a zone with a name and a grpcs:// address', () => {
      for (const globalAddress of [
        'grpcs://127.0.0.1:5685',
        'grpcs://global.example:5685',
        'grpcs://[::1]:5685',
      ]) {
        const config = configSchema.parse({
          mode: 'zone',
          multizone: { zone: { name: 'zone-1', globalAddress } },
        });
        expect(config.multizone.zone.globalAddress).toBe(globalAddress);
      }
    });

    it('rejects a Global address that is not a grpc(s) URL', () => {
      const zone = (globalAddress: string) => ({
        mode: 'zone',
        multizone: { zone: { name: 'z1', globalAddress } },
      });
      for (const address of ['https://127.0.0.1:5685', '127.0.0.1:5685', 'grpc://127.0.0.1:5685']) {
        expect(issuesOf(zone(address))).toEqual([
          'multizone.zone.globalAddress: must start with grpcs:// (Global serves its sync port over TLS only)',
        ]);
      }
      expect(issuesOf(zone('grpcs://global example:5685'))).toEqual([
        'multizone.zone.globalAddress: must be a URL such as grpcs://global.example:5685',
      ]);
      expect(issuesOf(zone('grpcs://global.example:99999'))).toEqual([
        'multizone.zone.globalAddress: must be a URL such as grpcs://global.example:5685',
      ]);
      expect(issuesOf(zone('grpcs://'))).toEqual([
        'multizone.zone.globalAddress: must name a host, such as grpcs://global.example:5685',
      ]);
      expect(issuesOf(zone('grpcs://global.example:5685/path'))).toEqual([
        'multizone.zone.globalAddress: must be only a scheme, a host and a port, such as grpcs://global.example:5685',
      ]);
    });

    it('rejects a zone name that cannot name a Zone resource', () => {
      expect(
        issuesOf({ mode: 'zone', multizone: { zone: { name: 'Zone 1', globalAddress: 'grpcs://g:5685' } } }),
      ).toEqual([
        'multizone.zone.name: must be 1 to 253 characters of [0-9a-z._-], starting with a letter or digit',
      ]);
    });

    it('does not need zone settings outside zone mode', () => {
      expect(configSchema.parse({ mode: 'global' }).mode).toBe('global');
      expect(configSchema.parse({ mode: 'standalone' }).multizone.zone.name).toBe('');
    });

    it('takes the postgres store and checks its keys', () => {
      const parsed = configSchema.parse({
        store: { type: 'postgres', postgres: { dbName: 'cp', port: 6432 } },
      });
      expect(parsed.store).toMatchObject({ type: 'postgres', postgres: { dbName: 'cp', port: 6432 } });
      expect(
        issuesOf({ store: { postgres: { dbName: '', maxOpenConnections: 0, tls: { mode: 'require' } } } }),
      ).toEqual([
        'store.postgres.dbName: must not be empty',
        'store.postgres.maxOpenConnections: must be an integer of at least 5',
        'store.postgres.tls.mode: must be one of disable, verifyNone, verifyCa, verifyFull',
      ]);
    });

    it('needs a TLS certificate and key file together', () => {
      expect(issuesOf({ apiServer: { https: { tlsCertFile: '/tls/cert.pem' } } })).toEqual([
        'apiServer.https.tlsKeyFile: must be set together with tlsCertFile',
      ]);
      expect(issuesOf({ multizone: { global: { kds: { tlsKeyFile: '/tls/key.pem' } } } })).toEqual([
        'multizone.global.kds.tlsCertFile: must be set together with tlsKeyFile',
      ]);
    });

    it('runs even when other keys are invalid, so one start-up lists every problem', () => {
      expect(
        issuesOf({ mode: 'zone', apiServer: { port: -1, https: { tlsCertFile: '/tls/cert.pem' } } }),
      ).toEqual([
        'apiServer.port: must be an integer between 0 and 65535',
        'multizone.zone.name: must be set when mode is zone',
        'multizone.zone.globalAddress: must be set when mode is zone (the Global sync address, such as grpcs://global.example:5685)',
        'apiServer.https.tlsKeyFile: must be set together with tlsCertFile',
      ]);
    });
  });
});
