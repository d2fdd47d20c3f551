import { describe, expect, it } from 'vitest';
import type { Current, DecideState, PutCommand } from '../../../src/app/decide.js';
import { decideDelete, decidePut, toWire } from '../../../src/app/decide.js';
import type { Actor, WireResource } from '../../../src/events/types.js';
import { registry } from '../../../src/resources/registry.js';
import { AppError } from '../../../src/util/errors.js';

const actor: Actor = { name: 'alice', groups: ['ops'], address: '127.0.0.1' };
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:01.000Z';
const all = [{ match: { 'mesh.io/service': '*' } }];

/** Given: a state of resources keyed kind/mesh/name with revisions. */
function given(
  resources: Array<{
    kind: string;
    mesh?: string;
    name: string;
    spec?: Record<string, unknown>;
    revision: number;
  }>,
): DecideState {
  const map = new Map<string, Current>();
  for (const r of resources) {
    const desc = registry.get(r.kind);
    map.set(`${r.kind}/${r.mesh ?? ''}/${r.name}`, {
      resource: toWire(desc, r.mesh, r.name, T0, T0, r.spec ?? {}) as WireResource,
      revision: r.revision,
      origin: 'local',
    });
  }
  return {
    get: (kind, mesh, name) => map.get(`${kind}/${mesh ?? ''}/${name}`),
    inMesh: (mesh) =>
      [...map.entries()]
        .filter(([, c]) => c.resource.mesh === mesh)
        .map(([k, c]) => ({ kind: k.split('/')[0], name: c.resource.name, current: c })),
  };
}

const put = (over: Partial<PutCommand>): PutCommand => ({
  kind: 'TrafficPermission',
  mesh: 'default',
  name: 'tp',
  spec: { sources: all, destinations: all },
  actor,
  origin: 'local',
  now: T1,
  ...over,
});

const opts = { skipDefaultPolicies: false };

const errorOf = (fn: () => unknown): AppError => {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e;
    throw e;
  }
  throw new Error('expected an AppError');
};

describe('decidePut: stored size', () => {
  const meshes = given([{ kind: 'Mesh', name: 'default', revision: 1 }]);

  it('answers the JSON of the resource it decides', () => {
    const d = decidePut(registry, put({}), meshes, opts);
    expect(d.json).toBe(JSON.stringify(d.resource));
  });

  it('refuses a resource stored as more bytes than maxBytes, counting UTF-8 bytes', () => {
    const resource = decidePut(registry, put({}), meshes, opts).resource;
    const bytes = Buffer.byteLength(JSON.stringify(resource));
    expect(decidePut(registry, put({ maxBytes: bytes }), meshes, opts).events).toHaveLength(1);
    const err = errorOf(() => decidePut(registry, put({ maxBytes: bytes - 1 }), meshes, opts));
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
    expect(err.message).toBe(
      `the resource would be stored as ${bytes} bytes of JSON, more than the limit of ${bytes - 1} bytes (apiServer.bodyLimit)`,
    );
    // Two-byte characters: the length in UTF-16 units fits, the bytes do not.
    const spec = { sources: [{ match: { 'mesh.io/service': 'é'.repeat(300) } }], destinations: all };
    const wideJson = decidePut(registry, put({ spec }), meshes, opts).json;
    const wide = put({ spec, maxBytes: wideJson.length + 10 });
    expect(errorOf(() => decidePut(registry, wide, meshes, opts)).code).toBe('PAYLOAD_TOO_LARGE');
  });

  it('sets no limit without maxBytes (start-up writes: defaults and signing keys)', () => {
    const spec = { sources: [{ match: { 'mesh.io/service': 'x'.repeat(2_000_000) } }], destinations: all };
    expect(decidePut(registry, put({ spec }), meshes, opts).events).toHaveLength(1);
  });
});

describe('decidePut', () => {
  it('creates a resource with both times set to now', () => {
    const d = decidePut(registry, put({}), given([{ kind: 'Mesh', name: 'default', revision: 1 }]), opts);
    expect(d.created).toBe(true);
    expect(d.events).toHaveLength(1);
    expect(d.events[0]).toMatchObject({
      kind: 'TrafficPermission',
      mesh: 'default',
      name: 'tp',
      operation: 'create',
      actor,
    });
    expect(d.resource).toEqual({
      type: 'TrafficPermission',
      mesh: 'default',
      name: 'tp',
      creationTime: T1,
      modificationTime: T1,
      sources: all,
      destinations: all,
    });
  });

  it('updates keep the creation time and replace the whole spec', () => {
    const state = given([
      { kind: 'Mesh', name: 'default', revision: 1 },
      {
        kind: 'Timeout',
        mesh: 'default',
        name: 't',
        spec: { sources: all, destinations: all, conf: { connectTimeout: '1s' } },
        revision: 2,
      },
    ]);
    const d = decidePut(
      registry,
      put({ kind: 'Timeout', name: 't', spec: { sources: all, destinations: all } }),
      state,
      opts,
    );
    expect(d.created).toBe(false);
    expect(d.events[0].operation).toBe('update');
    expect(d.resource.creationTime).toBe(T0);
    expect(d.resource.modificationTime).toBe(T1);
    expect(d.resource.conf).toBeUndefined();
  });

  it('an identical PUT changes nothing and answers with the current revision', () => {
    const state = given([
      { kind: 'Mesh', name: 'default', revision: 1 },
      {
        kind: 'TrafficPermission',
        mesh: 'default',
        name: 'tp',
        spec: { sources: all, destinations: all },
        revision: 7,
      },
    ]);
    const d = decidePut(registry, put({}), state, opts);
    expect(d.events).toEqual([]);
    expect(d.unchangedRevision).toBe(7);
  });

  it('refuses a mesh-scoped resource in a missing mesh, but not a secret', () => {
    const e = errorOf(() => decidePut(registry, put({ mesh: 'nope' }), given([]), opts));
    expect(e.code).toBe('INVALID_BODY');
    expect(e.causes).toEqual([{ field: 'mesh', message: 'Mesh is not found' }]);
    const s = decidePut(
      registry,
      put({ kind: 'Secret', mesh: 'nope', name: 's', spec: { data: 'YQ==' } }),
      given([]),
      opts,
    );
    expect(s.created).toBe(true);
  });

  it('If-Match must name the current revision; If-None-Match: * refuses an existing resource', () => {
    const state = given([
      { kind: 'Mesh', name: 'default', revision: 1 },
      { kind: 'TrafficPermission', mesh: 'default', name: 'tp', revision: 5 },
    ]);
    expect(errorOf(() => decidePut(registry, put({ ifMatch: '"4"' }), state, opts)).code).toBe(
      'PRECONDITION_FAILED',
    );
    expect(decidePut(registry, put({ ifMatch: '"5"' }), state, opts).events).toHaveLength(1);
    expect(decidePut(registry, put({ ifMatch: 'W/"3", "5"' }), state, opts).events).toHaveLength(1);
    expect(errorOf(() => decidePut(registry, put({ ifNoneMatch: '*' }), state, opts)).code).toBe(
      'PRECONDITION_FAILED',
    );
    expect(errorOf(() => decidePut(registry, put({ name: 'new', ifMatch: '*' }), state, opts)).code).toBe(
      'PRECONDITION_FAILED',
    );
    expect(decidePut(registry, put({ name: 'new', ifNoneMatch: '*' }), state, opts).created).toBe(true);
  });

  it('a new mesh gets its default policies and signing key in the same decision', () => {
    const d = decidePut(
      registry,
      put({ kind: 'Mesh', mesh: undefined, name: 'm', spec: {}, signingKey: 'a2V5' }),
      given([]),
      opts,
    );
    expect(d.events.map((e) => `${e.kind}/${e.name}`)).toEqual([
      'Mesh/m',
      'TrafficPermission/allow-all-m',
      'TrafficRoute/route-all-m',
      'Timeout/timeout-all-m',
      'CircuitBreaker/circuit-breaker-all-m',
      'Retry/retry-all-m',
      'Secret/dataplane-token-signing-key-m-1',
    ]);
    const skipped = decidePut(
      registry,
      put({ kind: 'Mesh', mesh: undefined, name: 'm', spec: {}, signingKey: 'a2V5' }),
      given([]),
      {
        skipDefaultPolicies: true,
      },
    );
    expect(skipped.events.map((e) => e.kind)).toEqual(['Mesh', 'Secret']);
  });
});

describe('decideDelete', () => {
  it('404 for a missing resource', () => {
    expect(
      errorOf(() => decideDelete(registry, { kind: 'Zone', name: 'z', actor, origin: 'local' }, given([])))
        .code,
    ).toBe('NOT_FOUND');
  });

  it('a mesh with data planes is refused with a cause on mesh', () => {
    const state = given([
      { kind: 'Mesh', name: 'm', revision: 1 },
      { kind: 'Dataplane', mesh: 'm', name: 'dp', revision: 2 },
    ]);
    const e = errorOf(() =>
      decideDelete(registry, { kind: 'Mesh', name: 'm', actor, origin: 'local' }, state),
    );
    expect(e.code).toBe('INVALID_BODY');
    expect(e.causes[0].field).toBe('mesh');
  });

  it('a mesh is deleted with everything in it, one entry per resource, mesh last', () => {
    const state = given([
      { kind: 'Mesh', name: 'm', revision: 1 },
      { kind: 'TrafficPermission', mesh: 'm', name: 'a', revision: 2 },
      { kind: 'Secret', mesh: 'm', name: 's', revision: 3 },
      { kind: 'Mesh', name: 'other', revision: 4 },
      { kind: 'TrafficPermission', mesh: 'other', name: 'b', revision: 5 },
    ]);
    const d = decideDelete(registry, { kind: 'Mesh', name: 'm', actor, origin: 'local' }, state);
    expect(d.events.map((e) => `${e.operation} ${e.kind}/${e.mesh ?? ''}/${e.name}`)).toEqual([
      'delete TrafficPermission/m/a',
      'delete Secret/m/s',
      'delete Mesh//m',
    ]);
    expect(d.events.every((e) => e.previous !== undefined)).toBe(true);
  });

  it('honours If-Match', () => {
    const state = given([{ kind: 'Zone', name: 'z', revision: 9 }]);
    expect(
      errorOf(() =>
        decideDelete(registry, { kind: 'Zone', name: 'z', actor, origin: 'local', ifMatch: '"8"' }, state),
      ).code,
    ).toBe('PRECONDITION_FAILED');
    expect(
      decideDelete(registry, { kind: 'Zone', name: 'z', actor, origin: 'local', ifMatch: '"9"' }, state)
        .events,
    ).toHaveLength(1);
  });
});
