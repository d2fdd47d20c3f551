import { describe, expect, it } from 'vitest';
import { listConfigKeys, loadConfig } from '../../../src/config/load.js';
import { AppError } from '../../../src/util/errors.js';

/** Refusal of one env setting: the AppError's details, which must name the variable. */
function refusal(env: Record<string, string>): string {
  try {
    loadConfig({ env });
  } catch (error) {
    expect(error).toBeInstanceOf(AppError);
    return (error as AppError).details;
  }
  throw new Error(`loadConfig accepted ${JSON.stringify(env)}`);
}

/** Config keys of the xDS server: the bootstrap's xDS address and the proxy authentication type. */
describe('xds config keys', () => {
  it('have their MESH_* names and defaults', () => {
    const keys = new Map(listConfigKeys().map((k) => [k.path, k.env]));
    expect(keys.get('xdsServer.advertisedAddress')).toBe('MESH_XDS_SERVER_ADVERTISED_ADDRESS');
    expect(keys.get('dpServer.authn.type')).toBe('MESH_DP_SERVER_AUTHN_TYPE');
    const config = loadConfig({ env: {} });
    expect(config.xdsServer.advertisedAddress).toBe('');
    expect(config.dpServer.authn.type).toBe('dpToken');
  });

  it('take values from the environment', () => {
    const config = loadConfig({
      env: { MESH_XDS_SERVER_ADVERTISED_ADDRESS: 'cp.example:15678', MESH_DP_SERVER_AUTHN_TYPE: 'none' },
    });
    expect(config.xdsServer.advertisedAddress).toBe('cp.example:15678');
    expect(config.dpServer.authn.type).toBe('none');
  });

  it('accept host names, IPv4 and bracketed IPv6 addresses with a port', () => {
    for (const address of [
      'localhost:5678',
      '10.0.0.7:1',
      'cp-1.zone.example:65535',
      '[::1]:5678',
      '[fd00::7]:80',
    ]) {
      expect(
        loadConfig({ env: { MESH_XDS_SERVER_ADVERTISED_ADDRESS: address } }).xdsServer.advertisedAddress,
      ).toBe(address);
    }
  });

  it('refuse an address that is not host:port, naming the variable and the expected form', () => {
    for (const address of [
      'cp.example',
      'grpc://cp.example:5678',
      'cp.example:0',
      'cp.example:65536',
      '::1:5678',
      ':5678',
      'a b:1',
    ]) {
      const details = refusal({ MESH_XDS_SERVER_ADVERTISED_ADDRESS: address });
      expect(details, address).toContain('MESH_XDS_SERVER_ADVERTISED_ADDRESS');
      expect(details, address).toContain('must be host:port');
    }
  });

  it('refuse an unknown authentication type, listing the known ones', () => {
    const details = refusal({ MESH_DP_SERVER_AUTHN_TYPE: 'mtls' });
    expect(details).toContain(
      'dpServer.authn.type (from MESH_DP_SERVER_AUTHN_TYPE): must be one of dpToken, none',
    );
  });
});
