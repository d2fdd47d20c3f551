import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { positiveInt, tagMap, uint } from '../../../src/resources/fragments.js';
import { dataplane } from '../../../src/resources/kinds/dataplane.js';
import { mesh } from '../../../src/resources/kinds/mesh.js';
import { trafficPermission } from '../../../src/resources/kinds/traffic-permission.js';
import { formatPath, issuesToCauses, messageMap, validateBody } from '../../../src/resources/validate.js';
import { ANY_TO_ANY } from './helpers.js';

/** Causes of parsing `input` with `schema` the way validateBody does. */
function causes(schema: z.ZodType, input: unknown) {
  const r = schema.safeParse(input, { reportInput: true, error: messageMap });
  return r.success ? [] : issuesToCauses(r.error.issues);
}

describe('formatPath', () => {
  it('writes identifiers with dots, indexes and other keys in brackets', () => {
    expect(formatPath(['networking', 'inbound', 0, 'tags', 'mesh.io/service'])).toBe(
      'networking.inbound[0].tags["mesh.io/service"]',
    );
    expect(formatPath([])).toBe('');
    expect(formatPath(['a b'])).toBe('["a b"]');
  });
});

describe('issuesToCauses and messageMap', () => {
  it('says "cannot be empty" for a missing field and names the type otherwise', () => {
    const s = z.strictObject({
      a: z.string(),
      b: z.number(),
      c: z.boolean(),
      d: z.array(z.string()),
      e: z.strictObject({}),
    });
    expect(causes(s, { b: 'x', c: 1, d: {}, e: [] })).toEqual([
      { field: 'a', message: 'cannot be empty' },
      { field: 'b', message: 'must be a number' },
      { field: 'c', message: 'must be a boolean' },
      { field: 'd', message: 'must be an array' },
      { field: 'e', message: 'must be an object' },
    ]);
  });

  it('keeps schema messages and still tells a missing value from a wrong one', () => {
    const s = z.strictObject({ p: uint, q: uint });
    expect(causes(s, { q: 'abc' })).toEqual([
      { field: 'p', message: 'cannot be empty' },
      { field: 'q', message: 'must be an integer' },
    ]);
  });

  it('tells missing values without reportInput from the default message', () => {
    const r = z.strictObject({ a: z.string(), b: z.string() }).safeParse({ b: 1 });
    expect(issuesToCauses(r.error?.issues ?? [])).toEqual([
      { field: 'a', message: 'cannot be empty' },
      { field: 'b', message: 'Invalid input: expected string, received number' },
    ]);
  });

  it('words enums, literals, ranges and lengths', () => {
    const s = z.strictObject({
      e: z.enum(['a', 'b']),
      l: z.literal('x'),
      n: z.number().min(1).max(5),
      m: z.number().gt(0),
      s: z.string().min(1),
      t: z.string().min(3).max(4),
      arr: z.array(z.string()).min(2).max(3),
      u: z.url(),
    });
    const got = causes(s, { e: 'c', l: 'y', n: 6, m: 0, s: '', t: 'ab', arr: ['a'], u: 'x' });
    expect(got).toEqual([
      { field: 'e', message: 'must be one of "a", "b"' },
      { field: 'l', message: 'must be "x"' },
      { field: 'n', message: 'must be less than or equal to 5' },
      { field: 'm', message: 'must be greater than 0' },
      { field: 's', message: 'cannot be empty' },
      { field: 't', message: 'must be at least 3 characters long' },
      { field: 'arr', message: 'must have at least 2 elements' },
      { field: 'u', message: 'must be a valid URL' },
    ]);
    expect(causes(s.shape.t, 'abcde')).toEqual([{ field: '', message: 'must be at most 4 characters long' }]);
    expect(causes(z.array(z.string()).max(1), ['a', 'b'])).toEqual([
      { field: '', message: 'must have at most one element' },
    ]);
  });

  it('reports a bad record key with the key schema’s message, on the key', () => {
    expect(causes(z.strictObject({ tags: tagMap }), { tags: { 'bad key': 'v' } })).toEqual([
      { field: 'tags["bad key"]', message: 'tag key must be non-empty and of [a-zA-Z0-9._:/-]' },
    ]);
  });

  it('reports an unknown discriminator on the discriminator', () => {
    const s = z.discriminatedUnion('type', [
      z.strictObject({ type: z.literal('a') }),
      z.strictObject({ type: z.literal('b') }),
    ]);
    expect(causes(s, { type: 'c' })).toEqual([{ field: 'type', message: 'must be one of "a", "b"' }]);
    expect(causes(s, {})).toEqual([{ field: 'type', message: 'cannot be empty' }]);
  });

  it('reports the closest branch of a plain union', () => {
    const s = z.union([z.strictObject({ a: z.string() }), z.strictObject({ b: z.string(), c: z.string() })]);
    expect(causes(s, { a: 1 })).toEqual([{ field: 'a', message: 'must be a string' }]);
  });

  it('reports one cause per violation of a ranged integer', () => {
    expect(causes(positiveInt, -5)).toEqual([{ field: '', message: 'must be greater than or equal to 1' }]);
    expect(causes(positiveInt, 1.5)).toEqual([{ field: '', message: 'must be an integer' }]);
  });
});

describe('validateBody', () => {
  const target = { mesh: 'default', name: 'tp-1' };
  const tp = { type: 'TrafficPermission', mesh: 'default', name: 'tp-1', ...ANY_TO_ANY };

  it('returns the spec alone, ignoring times', () => {
    const r = validateBody(trafficPermission, { ...tp, creationTime: 'x', modificationTime: 'y' }, target);
    expect(r).toEqual({ ok: true, spec: ANY_TO_ANY });
  });

  it('checks type, name and mesh against the URL', () => {
    const r = validateBody(trafficPermission, { ...tp, type: 'Timeout', name: 'other', mesh: 'm2' }, target);
    expect(r).toEqual({
      ok: false,
      causes: [
        { field: 'type', message: 'must be "TrafficPermission"' },
        { field: 'name', message: 'must be equal to the name in the URL ("tp-1")' },
        { field: 'mesh', message: 'must be equal to the mesh in the URL ("default")' },
      ],
    });
    expect(validateBody(trafficPermission, [], target)).toEqual({
      ok: false,
      causes: [{ field: '', message: 'body must be a JSON object' }],
    });
  });

  it('lists every violation: a body with two errors gets two causes', () => {
    const r = validateBody(
      dataplane,
      {
        type: 'Dataplane',
        mesh: 'default',
        name: 'dp-1',
        networking: { address: 'no pe', inbound: [{ port: 'abc', tags: { 'mesh.io/service': 'a' } }] },
      },
      { mesh: 'default', name: 'dp-1' },
    );
    expect(r).toEqual({
      ok: false,
      causes: [
        { field: 'networking.address', message: 'must be a valid IP address or domain name' },
        { field: 'networking.inbound[0].port', message: 'must be an integer' },
      ],
    });
  });

  it('lists meta and spec violations together', () => {
    const r = validateBody(
      mesh,
      { type: 'Mesh', name: 'Bad_Name', mtls: { enabledBackend: 'x' } },
      { name: 'Bad_Name' },
    );
    expect(r.ok ? [] : r.causes.map((c) => c.field)).toEqual(['name', 'mtls.enabledBackend']);
  });
});
