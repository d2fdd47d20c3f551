import { describe, expect, it } from 'vitest';
import { dataplane } from '../../../src/resources/kinds/dataplane.js';
import { selectorTags } from '../../../src/resources/proxy-fields.js';
import { issuesToCauses } from '../../../src/resources/validate.js';
import { causesOf } from '../../unit/resources/helpers.js';

// Kuma 2.0.0 pkg/core/resources/apis/mesh/validators_test.go, entry by entry: its AllowedValuesHint
// table (how a cause lists the values allowed) and its selector tag key table.

/** The causes of `tags` as selector tags forbidding `forbidden`, under the path `given`. */
function selectorCauses(tags: Record<string, string>, forbidden: readonly string[]) {
  const r = selectorTags({ forbiddenKeys: forbidden }).safeParse(tags);
  return r.success ? [] : issuesToCauses(r.error.issues, ['given']);
}

const sidecar = (extra: Record<string, unknown>) => ({
  networking: {
    address: '10.0.0.1',
    inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web', ...extra } }],
  },
});

describe('Kuma 2.0.0 validator conformance: tag rules', () => {
  describe('AllowedValuesHint()', () => {
    // Kuma formats a list of allowed values with a helper; we have none of our own. Our causes list
    // the values a field allows where Kuma's do, and these cases check those causes instead.
    it('nil list', () => {
      // Cannot apply: no field of ours allows no value at all (Kuma prints "(none)" for one). What
      // we do instead: a value-set field names its values, here Kuma's five protocols.
      expect(causesOf(dataplane, sidecar({ 'mesh.io/protocol': 'mongo' }))).toEqual([
        {
          field: 'networking.inbound[0].tags["mesh.io/protocol"]',
          message:
            'tag "mesh.io/protocol" has an invalid value "mongo"; allowed values: grpc, http, http2, kafka, tcp',
        },
      ]);
    });
    it('empty list', () => {
      // Cannot apply, as for the nil list: an empty value is refused with the values allowed.
      const causes = causesOf(dataplane, sidecar({ 'mesh.io/protocol': '' })).map((c) => c.message);
      expect(causes).toContain('tag value must be non-empty');
      expect(causes.some((m) => m.endsWith('allowed values: grpc, http, http2, kafka, tcp'))).toBe(true);
    });
    it('one-item list', () => {
      // One allowed value is named alone (Kuma: `Allowed values: http`).
      const spec = { ...sidecar({}), metrics: { type: 'statsd' } };
      expect(causesOf(dataplane, spec)).toEqual([{ field: 'metrics.type', message: 'must be "prometheus"' }]);
    });
    it('multi-item list', () => {
      // Several are joined by ", " (Kuma: `Allowed values: grpc, http, http2, mongo, mysql, redis, tcp`).
      const [cause] = causesOf(dataplane, sidecar({ 'mesh.io/protocol': 'redis' }));
      expect(cause.message).toContain('allowed values: grpc, http, http2, kafka, tcp');
    });
  });

  describe('selector tag keys', () => {
    it('noop', () => {
      expect(selectorCauses({ foo: 'bar' }, [])).toEqual([]);
    });
    it('selector key is not in set', () => {
      expect(selectorCauses({ baz: 'bar', boo: 'bar', bar: 'bar' }, ['foo', 'bar'])).toEqual([
        { field: 'given.bar', message: 'tag name must not be "bar"' },
      ]);
    });
    it('selector key is not matched in set', () => {
      expect(selectorCauses({ baz: 'bar', boo: 'bar', bar: 'bar' }, ['not', 'there'])).toEqual([]);
    });
  });
});
