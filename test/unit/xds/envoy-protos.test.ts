import { existsSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ENVOY_PROTOS_JSON, builtRoot, envoyRoot, parseEnvoyProtos } from '../../../src/xds/envoy-protos.js';
import { tempDir } from '../../helpers/control-plane.js';

/** A protobufjs JSON descriptor as plain data, without the enums' `valuesOptions`. */
function withoutValuesOptions(json: unknown): unknown {
  return JSON.parse(JSON.stringify(json), (key, value: unknown) =>
    key === 'valuesOptions' ? undefined : value,
  );
}

describe('the Envoy protos the build writes as JSON', () => {
  const parsed = JSON.parse(JSON.stringify(parseEnvoyProtos().toJSON())) as unknown;

  it('hold every type, field and option of the .proto files', () => {
    expect(existsSync(ENVOY_PROTOS_JSON), `${ENVOY_PROTOS_JSON} is missing: run npm run build`).toBe(true);
    // A stale file (protos changed since the last build) differs here.
    expect(JSON.parse(readFileSync(ENVOY_PROTOS_JSON, 'utf8')), 'stale: run npm run build').toEqual(parsed);
  });

  it('are only a shortcut: a missing or damaged file is parsed from the .proto files instead', () => {
    const dir = tempDir('mesh-cp-envoy-json-');
    try {
      const damaged = join(dir.path, 'envoy-protos.json');
      writeFileSync(damaged, readFileSync(ENVOY_PROTOS_JSON, 'utf8').slice(0, 1000));
      expect(builtRoot(damaged)).toBeUndefined();
      expect(builtRoot(join(dir.path, 'none.json'))).toBeUndefined();
      expect(builtRoot(ENVOY_PROTOS_JSON)?.lookupType('envoy.config.listener.v3.Listener').name).toBe(
        'Listener',
      );
    } finally {
      dir.cleanup();
    }
  });

  it('build the root the xDS encoder uses, the same as parsing would but for annotations of enum values', () => {
    // protobufjs builds enums from JSON without their values' options (`deprecated` and Envoy's
    // version annotations): they describe a value, and change no encoding.
    expect(withoutValuesOptions(envoyRoot().toJSON())).toEqual(withoutValuesOptions(parsed));
    expect(JSON.stringify(parsed)).toContain('valuesOptions');
  });
});
