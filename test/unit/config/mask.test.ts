import { describe, expect, it } from 'vitest';
import { listConfigKeys } from '../../../src/config/load.js';
import { MASK, SECRET_KEYS, maskConfig } from '../../../src/config/mask.js';
import { configSchema } from '../../../src/config/schema.js';

/** The defaults with every string key set to a non-empty value naming its path, so that any masking shows. */
function configWithEveryStringSet() {
  const config = configSchema.parse({});
  for (const { path } of listConfigKeys()) {
    const segments = path.split('.');
    const section = segments
      .slice(0, -1)
      .reduce<Record<string, unknown>>((value, segment) => value[segment] as Record<string, unknown>, config);
    const leaf = segments[segments.length - 1];
    if (typeof section[leaf] === 'string') section[leaf] = `value of ${path}`;
  }
  return config;
}

describe('SECRET_KEYS', () => {
  it('is the database password and the zone token, and both are config keys', () => {
    expect([...SECRET_KEYS]).toEqual(['store.postgres.password', 'multizone.zone.kds.token']);
    const paths = listConfigKeys().map((key) => key.path);
    for (const key of SECRET_KEYS) expect(paths).toContain(key);
  });

  it('covers every key named like a secret; *File keys are paths and are not secrets', () => {
    const secretLike = listConfigKeys()
      .map((key) => key.path)
      .filter((path) => {
        const leaf = path.split('.').pop() ?? '';
        return /password|token|secret|privatekey/i.test(leaf) && !/File$/.test(leaf);
      });
    expect(secretLike.sort()).toEqual([...SECRET_KEYS].sort());
  });
});

describe('maskConfig', () => {
  it('hides the password and the token and nothing else', () => {
    const config = configWithEveryStringSet();
    const masked = maskConfig(config);
    const expected = structuredClone(config);
    expected.store.postgres.password = MASK;
    expected.multizone.zone.kds.token = MASK;
    expect(masked).toEqual(expected);
    expect(JSON.stringify(masked)).not.toContain('value of store.postgres.password');
    expect(JSON.stringify(masked)).not.toContain('value of multizone.zone.kds.token');
  });

  it('keeps TLS key, CA and certificate paths visible', () => {
    const masked = maskConfig(configWithEveryStringSet()) as ReturnType<typeof configWithEveryStringSet>;
    expect(masked.apiServer.https.tlsKeyFile).toBe('value of apiServer.https.tlsKeyFile');
    expect(masked.sdsServer.tlsKeyFile).toBe('value of sdsServer.tlsKeyFile');
    expect(masked.multizone.zone.kds.rootCaFile).toBe('value of multizone.zone.kds.rootCaFile');
  });

  it('leaves empty secrets empty', () => {
    const masked = maskConfig(configSchema.parse({}));
    expect(masked).toEqual(configSchema.parse({}));
  });

  it('returns a deep copy and leaves the config alone', () => {
    const config = configWithEveryStringSet();
    const masked = maskConfig(config) as ReturnType<typeof configWithEveryStringSet>;
    expect(config.store.postgres.password).toBe('value of store.postgres.password');
    masked.apiServer.corsAllowedDomains.push('changed');
    expect(config.apiServer.corsAllowedDomains).not.toContain('changed');
  });
});
