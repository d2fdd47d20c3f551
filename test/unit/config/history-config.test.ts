import { describe, expect, it } from 'vitest';
import { listConfigKeys, loadConfig } from '../../../src/config/load.js';
import { AppError } from '../../../src/util/errors.js';

/** Config keys of the history: snapshots and the watch streams. */
describe('history config keys', () => {
  it('have their MESH_* names and defaults', () => {
    const keys = new Map(listConfigKeys().map((k) => [k.path, k.env]));
    expect(keys.get('store.snapshot.every')).toBe('MESH_STORE_SNAPSHOT_EVERY');
    expect(keys.get('apiServer.watch.heartbeatInterval')).toBe('MESH_API_SERVER_WATCH_HEARTBEAT_INTERVAL');
    expect(keys.get('apiServer.watch.bufferLimit')).toBe('MESH_API_SERVER_WATCH_BUFFER_LIMIT');
    const config = loadConfig({ env: {} });
    expect(config.store.snapshot.every).toBe(10000);
    expect(config.apiServer.watch).toEqual({ heartbeatInterval: '15s', bufferLimit: 4194304 });
  });

  it('take values from the environment; 0 turns snapshots off', () => {
    const config = loadConfig({
      env: {
        MESH_STORE_SNAPSHOT_EVERY: '0',
        MESH_API_SERVER_WATCH_HEARTBEAT_INTERVAL: '250ms',
        MESH_API_SERVER_WATCH_BUFFER_LIMIT: '65536',
      },
    });
    expect(config.store.snapshot.every).toBe(0);
    expect(config.apiServer.watch).toEqual({ heartbeatInterval: '250ms', bufferLimit: 65536 });
  });

  it('refuse bad values, naming the variable', () => {
    for (const [env, value] of [
      ['MESH_STORE_SNAPSHOT_EVERY', '-1'],
      ['MESH_STORE_SNAPSHOT_EVERY', 'often'],
      ['MESH_API_SERVER_WATCH_HEARTBEAT_INTERVAL', '15'],
      ['MESH_API_SERVER_WATCH_BUFFER_LIMIT', '0'],
    ]) {
      let error: unknown;
      try {
        loadConfig({ env: { [env]: value } });
      } catch (e) {
        error = e;
      }
      expect(error, `${env}=${value}`).toBeInstanceOf(AppError);
      expect((error as AppError).details).toContain(env);
    }
  });
});
