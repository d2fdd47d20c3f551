import { describe, expect, it } from 'vitest';
import { listConfigKeys, loadConfig } from '../../../src/config/load.js';

describe('auth config keys', () => {
  it('has env names for the new keys', () => {
    expect(listConfigKeys()).toEqual(
      expect.arrayContaining([
        { path: 'apiServer.auth.clientCertsDir', env: 'MESH_API_SERVER_AUTH_CLIENT_CERTS_DIR' },
        { path: 'apiServer.authz.anonymous', env: 'MESH_API_SERVER_AUTHZ_ANONYMOUS' },
        { path: 'apiServer.authz.groups', env: 'MESH_API_SERVER_AUTHZ_GROUPS' },
        { path: 'apiServer.maxHeaderSize', env: 'MESH_API_SERVER_MAX_HEADER_SIZE' },
        { path: 'apiServer.timeouts.headers', env: 'MESH_API_SERVER_TIMEOUTS_HEADERS' },
        { path: 'apiServer.timeouts.request', env: 'MESH_API_SERVER_TIMEOUTS_REQUEST' },
        { path: 'apiServer.timeouts.idle', env: 'MESH_API_SERVER_TIMEOUTS_IDLE' },
      ]),
    );
  });

  it('reads groups from a JSON env value and merges them over the default groups', () => {
    const config = loadConfig({
      env: { MESH_API_SERVER_AUTHZ_GROUPS: '{"team-a": {"role": "writer", "meshes": ["a"]}}' },
    });
    expect(config.apiServer.authz.groups).toEqual({
      'mesh-system:admin': { role: 'admin' },
      'mesh-system:writer': { role: 'writer' },
      'mesh-system:reader': { role: 'reader' },
      'team-a': { role: 'writer', meshes: ['a'] },
    });
  });

  it('names every problem in a groups value', () => {
    expect(() => loadConfig({ env: { MESH_API_SERVER_AUTHZ_GROUPS: '[1]' } })).toThrow(
      'apiServer.authz.groups (from MESH_API_SERVER_AUTHZ_GROUPS): must be a JSON object',
    );
    let message = '';
    try {
      loadConfig({
        env: {
          MESH_API_SERVER_AUTHZ_GROUPS:
            '{"a": {"role": "owner"}, "b": {"role": "reader", "meshes": ["B!"]}, "c": {"role": "reader", "colour": 1}}',
          MESH_API_SERVER_AUTHZ_ANONYMOUS: 'writer',
        },
      });
    } catch (err) {
      message = (err as Error).message;
    }
    expect(message).toContain(
      'apiServer.authz.anonymous (from MESH_API_SERVER_AUTHZ_ANONYMOUS): must be one of reader, none',
    );
    expect(message).toContain(
      'apiServer.authz.groups.a.role (from MESH_API_SERVER_AUTHZ_GROUPS): must be one of admin, writer, reader, none',
    );
    expect(message).toContain(
      'apiServer.authz.groups.b.meshes[0] (from MESH_API_SERVER_AUTHZ_GROUPS): must be a mesh name',
    );
    expect(message).toContain(
      'apiServer.authz.groups.c.colour (from MESH_API_SERVER_AUTHZ_GROUPS): unknown key',
    );
  });

  it('reads groups from a YAML file', async () => {
    const { mkdtempSync, writeFileSync, rmSync } = await import('node:fs');
    const { join } = await import('node:path');
    const { tmpdir } = await import('node:os');
    const dir = mkdtempSync(join(tmpdir(), 'mesh-cp-'));
    try {
      const file = join(dir, 'config.yaml');
      writeFileSync(
        file,
        'apiServer:\n  authz:\n    anonymous: none\n    groups:\n      viewers: {role: reader}\n',
      );
      const config = loadConfig({ file, env: {} });
      expect(config.apiServer.authz.anonymous).toBe('none');
      expect(config.apiServer.authz.groups.viewers).toEqual({ role: 'reader' });
      expect(config.apiServer.authz.groups['mesh-system:admin']).toEqual({ role: 'admin' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
