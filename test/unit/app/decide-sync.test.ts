import { describe, expect, it } from 'vitest';
import type { Current, DecideState } from '../../../src/app/decide.js';
import { decideDelete, toWire } from '../../../src/app/decide.js';
import type { SyncedChange } from '../../../src/app/decide-sync.js';
import {
  decideSnapshotCleanup,
  decideSynced,
  rulesOnGlobal,
  rulesOnZone,
} from '../../../src/app/decide-sync.js';
import type { Actor, WireResource } from '../../../src/events/types.js';
import { resourceKey } from '../../../src/resources/keys.js';
import { registry } from '../../../src/resources/registry.js';
import { AppError } from '../../../src/util/errors.js';
import { planStart } from '../../../src/zones/entry-sender.js';

const actor: Actor = { name: 'zone/zone-1', groups: ['mesh-system:zone'], address: 'grpcs://10.0.0.1:1' };
const T0 = '2026-01-01T00:00:00.000Z';
const T1 = '2026-01-01T00:00:01.000Z';
const NOW = '2026-06-01T00:00:00.000Z';
const ctx = { actor, now: NOW };
const all = [{ match: { 'mesh.io/service': '*' } }];

/** Given: resources keyed kind/mesh/name with an origin. */
function given(
  resources: Array<{
    kind: string;
    mesh?: string;
    name: string;
    spec?: Record<string, unknown>;
    origin: string;
  }>,
): DecideState {
  const map = new Map<string, { kind: string; current: Current }>();
  for (const r of resources) {
    const desc = registry.get(r.kind);
    map.set(resourceKey(r.kind, r.mesh, r.name), {
      kind: r.kind,
      current: {
        resource: toWire(desc, r.mesh, r.name, T0, T0, r.spec ?? {}),
        revision: 1,
        origin: r.origin,
      },
    });
  }
  return {
    get: (kind, mesh, name) => map.get(resourceKey(kind, mesh, name))?.current,
    inMesh: () => [],
    ownedBy: (origin) =>
      [...map.values()]
        .filter((v) => v.current.origin === origin)
        .map((v) => ({
          kind: v.kind,
          mesh: v.current.resource.mesh,
          name: v.current.resource.name,
          current: v.current,
        })),
  };
}

const dpSpec = {
  networking: { address: '10.0.0.1', inbound: [{ port: 80, tags: { 'mesh.io/service': 'web' } }] },
};
const dp = (name: string, over: Record<string, unknown> = {}): WireResource => ({
  type: 'Dataplane',
  mesh: 'default',
  name,
  creationTime: T0,
  modificationTime: T1,
  ...dpSpec,
  ...over,
});
const change = (over: Partial<SyncedChange>): SyncedChange => ({
  revision: 7,
  kind: 'Dataplane',
  mesh: 'default',
  name: 'dp-1',
  operation: 'create',
  resource: dp('dp-1'),
  ...over,
});

const rejection = (fn: () => unknown): string => {
  try {
    fn();
  } catch (e) {
    if (e instanceof AppError) return e.details;
    throw e;
  }
  throw new Error('expected a rejection');
};

describe('decideSynced on Global (a zone sends its own kinds)', () => {
  const mesh = { kind: 'Mesh', name: 'default', origin: 'local' };
  const rules = rulesOnGlobal('zone-1');

  it('given the mesh, when a zone sends a data plane, then it is created as <zone>.<name> with the source times and the zone as origin', () => {
    const e = decideSynced(registry, change({}), given([mesh]), rules, ctx);
    expect(e).toMatchObject({
      kind: 'Dataplane',
      mesh: 'default',
      name: 'zone-1.dp-1',
      operation: 'create',
      origin: 'zone-1',
    });
    expect(e?.resource).toEqual({ ...dp('zone-1.dp-1') });
    expect(e?.actor).toBe(actor);
  });

  it('given the same data plane, when it is sent again (a replay), then nothing is written', () => {
    const state = given([mesh]);
    const first = decideSynced(registry, change({}), state, rules, ctx);
    const replayState: DecideState = {
      ...state,
      get: (k, m, n) =>
        k === 'Dataplane' && n === 'zone-1.dp-1'
          ? { resource: first?.resource as WireResource, revision: 9, origin: 'zone-1' }
          : state.get(k, m, n),
    };
    expect(decideSynced(registry, change({}), replayState, rules, ctx)).toBeUndefined();
    expect(decideSynced(registry, change({ operation: 'update' }), replayState, rules, ctx)).toBeUndefined();
  });

  it('given a changed spec, when it is sent, then it is an update', () => {
    const state = given([
      mesh,
      { kind: 'Dataplane', mesh: 'default', name: 'zone-1.dp-1', spec: dpSpec, origin: 'zone-1' },
    ]);
    const other = dp('dp-1', { networking: { address: '10.0.0.2', inbound: dpSpec.networking.inbound } });
    expect(decideSynced(registry, change({ resource: other }), state, rules, ctx)?.operation).toBe('update');
  });

  it('rejects what it must: a kind that flows down, a missing mesh, an invalid spec, a name owned by another zone, a name too long', () => {
    const state = given([
      mesh,
      { kind: 'Dataplane', mesh: 'default', name: 'zone-1.taken', spec: dpSpec, origin: 'zone-1.other' },
    ]);
    expect(
      rejection(() =>
        decideSynced(
          registry,
          change({
            kind: 'TrafficPermission',
            name: 'tp',
            resource: {
              type: 'TrafficPermission',
              mesh: 'default',
              name: 'tp',
              creationTime: T0,
              modificationTime: T0,
              sources: all,
              destinations: all,
            },
          }),
          state,
          rules,
          ctx,
        ),
      ),
    ).toBe('TrafficPermission does not sync from this peer');
    expect(
      rejection(() =>
        decideSynced(
          registry,
          change({ mesh: 'nope', resource: dp('dp-1', { mesh: 'nope' }) }),
          state,
          rules,
          ctx,
        ),
      ),
    ).toBe('mesh "nope" is not found');
    expect(
      rejection(() =>
        decideSynced(
          registry,
          change({ resource: dp('dp-1', { networking: { address: '0.0.0.0' } }) }),
          state,
          rules,
          ctx,
        ),
      ),
    ).toContain('networking.address');
    expect(
      rejection(() =>
        decideSynced(registry, change({ name: 'taken', resource: dp('taken') }), state, rules, ctx),
      ),
    ).toBe('Dataplane "zone-1.taken" is owned by zone-1.other');
    const long = 'a'.repeat(250);
    expect(
      rejection(() => decideSynced(registry, change({ name: long, resource: dp(long) }), state, rules, ctx)),
    ).toContain('is not a valid name');
  });

  it('rejects control and bidi characters in what a zone sends, and writes them escaped in the reason', () => {
    const state = given([mesh]);
    const ingress = {
      type: 'ZoneIngress',
      name: 'zi',
      creationTime: T0,
      modificationTime: T0,
      zone: 'zone\u202e-1',
      networking: { address: '10.0.0.1', port: 10001 },
    };
    const reason = rejection(() =>
      decideSynced(
        registry,
        change({ kind: 'ZoneIngress', mesh: undefined, name: 'zi', resource: ingress }),
        state,
        rules,
        ctx,
      ),
    );
    expect(reason).toBe(
      'zone: must not contain control characters or bidirectional formatting characters (found U+202E)',
    );
    const tagged = dp('dp-1', {
      networking: {
        address: '10.0.0.1',
        inbound: [{ port: 80, tags: { 'mesh.io/service': 'web', 'v\u0000': 'x' } }],
      },
    });
    expect(rejection(() => decideSynced(registry, change({ resource: tagged }), state, rules, ctx))).toBe(
      'networking.inbound[0].tags["v\\u0000"]: must not contain control characters or bidirectional formatting characters (found U+0000)',
    );
    expect(
      rejection(() =>
        decideSynced(registry, change({ name: 'a\u2066b', resource: dp('a\u2066b') }), state, rules, ctx),
      ),
    ).toBe('"zone-1.a\\u2066b" is not a valid name (1 to 253 characters of [0-9a-z._-])');
  });

  it('a delete of what is gone writes nothing; a delete of its own is a delete; never of another origin', () => {
    const state = given([
      mesh,
      { kind: 'Dataplane', mesh: 'default', name: 'zone-1.dp-1', spec: dpSpec, origin: 'zone-1' },
      { kind: 'Dataplane', mesh: 'default', name: 'zone-1.x', spec: dpSpec, origin: 'zone-1.y' },
    ]);
    const del = (name: string) => change({ name, operation: 'delete', resource: undefined });
    expect(decideSynced(registry, del('gone'), state, rules, ctx)).toBeUndefined();
    expect(decideSynced(registry, del('dp-1'), state, rules, ctx)).toMatchObject({
      operation: 'delete',
      name: 'zone-1.dp-1',
      origin: 'zone-1',
      previous: { name: 'zone-1.dp-1' },
    });
    expect(rejection(() => decideSynced(registry, del('x'), state, rules, ctx))).toContain(
      'owned by zone-1.y',
    );
  });

  it('adjusts an ingress spec (available services computed on Global)', () => {
    const services = [{ tags: { 'mesh.io/service': 'web' }, instances: 2, mesh: 'default' }];
    const withServices = rulesOnGlobal('zone-1', (_d, spec) => ({ ...spec, availableServices: services }));
    const ingress = {
      type: 'ZoneIngress',
      name: 'ingress',
      creationTime: T0,
      modificationTime: T0,
      networking: { address: '10.0.0.9', port: 10001 },
    };
    const e = decideSynced(
      registry,
      change({ kind: 'ZoneIngress', mesh: undefined, name: 'ingress', resource: ingress }),
      given([]),
      withServices,
      ctx,
    );
    expect(e?.resource).toMatchObject({ name: 'zone-1.ingress', availableServices: services });
  });
});

describe('decideSynced on a zone (Global sends what flows down)', () => {
  const rules = rulesOnZone();
  const meshRes = { type: 'Mesh', name: 'm1', creationTime: T0, modificationTime: T0 };

  it('takes the defaults Global names after a mesh of 253 characters, which are longer than 253', () => {
    const long = 'm'.repeat(253);
    const key = `dataplane-token-signing-key-${long}-1`;
    const secret = {
      type: 'Secret',
      mesh: long,
      name: key,
      creationTime: T0,
      modificationTime: T0,
      data: 'YQ==',
    };
    const e = decideSynced(
      registry,
      change({ kind: 'Secret', mesh: long, name: key, resource: secret }),
      given([]),
      rules,
      ctx,
    );
    expect(e).toMatchObject({ kind: 'Secret', mesh: long, name: key });
    const tooLong = `${key}x`.padEnd(400, 'x');
    expect(
      rejection(() =>
        decideSynced(
          registry,
          change({ kind: 'Secret', mesh: long, name: tooLong, resource: { ...secret, name: tooLong } }),
          given([]),
          rules,
          ctx,
        ),
      ),
    ).toContain('is not a valid name');
  });

  it('creates a mesh without the defaults of an API write (they arrive as their own entries)', () => {
    const e = decideSynced(
      registry,
      change({ kind: 'Mesh', mesh: undefined, name: 'm1', resource: meshRes }),
      given([]),
      rules,
      ctx,
    );
    expect(e).toMatchObject({ kind: 'Mesh', name: 'm1', origin: 'global', resource: meshRes });
  });

  it('takes other zones ingresses, replaces leftovers of its own down kinds, never its own zone kinds', () => {
    const ingress = {
      type: 'ZoneIngress',
      name: 'zone-2.ingress',
      creationTime: T0,
      modificationTime: T0,
      networking: { port: 10001 },
    };
    expect(
      decideSynced(
        registry,
        change({ kind: 'ZoneIngress', mesh: undefined, name: 'zone-2.ingress', resource: ingress }),
        given([]),
        rules,
        ctx,
      )?.name,
    ).toBe('zone-2.ingress');
    const state = given([
      { kind: 'Mesh', name: 'm1', origin: 'local' },
      { kind: 'ZoneIngress', name: 'mine', spec: { networking: { port: 10001 } }, origin: 'local' },
    ]);
    expect(
      decideSynced(
        registry,
        change({ kind: 'Mesh', mesh: undefined, name: 'm1', resource: { ...meshRes, modificationTime: T1 } }),
        state,
        rules,
        ctx,
      )?.operation,
    ).toBe('update');
    expect(
      rejection(() =>
        decideSynced(
          registry,
          change({
            kind: 'ZoneIngress',
            mesh: undefined,
            name: 'mine',
            resource: { ...ingress, name: 'mine' },
          }),
          state,
          rules,
          ctx,
        ),
      ),
    ).toBe('ZoneIngress "mine" is owned by local');
    expect(rejection(() => decideSynced(registry, change({}), state, rules, ctx))).toBe(
      'Dataplane does not sync from this peer',
    );
  });
});

describe('decideSnapshotCleanup', () => {
  it('deletes what the peer owned that the snapshot lacked, and nothing else', () => {
    const state = given([
      { kind: 'Mesh', name: 'default', origin: 'global' },
      {
        kind: 'TrafficPermission',
        mesh: 'default',
        name: 'kept',
        spec: { sources: all, destinations: all },
        origin: 'global',
      },
      {
        kind: 'TrafficPermission',
        mesh: 'default',
        name: 'stale',
        spec: { sources: all, destinations: all },
        origin: 'global',
      },
      { kind: 'Dataplane', mesh: 'default', name: 'own', spec: dpSpec, origin: 'local' },
    ]);
    const seen = new Set([
      resourceKey('Mesh', undefined, 'default'),
      resourceKey('TrafficPermission', 'default', 'kept'),
    ]);
    const events = decideSnapshotCleanup(registry, state, rulesOnZone(), seen, actor);
    expect(events.map((e) => [e.kind, e.name, e.operation])).toEqual([
      ['TrafficPermission', 'stale', 'delete'],
    ]);
  });
});

describe('planStart (architecture: resume unless the cursor is unavailable)', () => {
  it('resumes after a cursor on this log, at or below the head', () => {
    expect(planStart({ logId: 'a', revision: 10 }, 'a', 10)).toEqual({ start: 'resume', from: 10 });
    expect(planStart({ logId: 'a', revision: 3 }, 'a', 10)).toEqual({ start: 'resume', from: 3 });
  });
  it('sends a snapshot for no cursor, another log, a cursor past the head (a wiped store), or nothing applied', () => {
    expect(planStart(null, 'a', 10)).toEqual({ start: 'snapshot' });
    expect(planStart({ logId: 'b', revision: 3 }, 'a', 10)).toEqual({ start: 'snapshot' });
    expect(planStart({ logId: 'a', revision: 11 }, 'a', 10)).toEqual({ start: 'snapshot' });
    expect(planStart({ logId: 'a', revision: 0 }, 'a', 10)).toEqual({ start: 'snapshot' });
  });
});

describe('decideDelete of a Zone (decisions §3)', () => {
  const zoneState = (connected: boolean): DecideState => ({
    ...given([
      { kind: 'Zone', name: 'zone-1', spec: { enabled: true }, origin: 'local' },
      { kind: 'Dataplane', mesh: 'default', name: 'zone-1.dp-1', spec: dpSpec, origin: 'zone-1' },
      { kind: 'ZoneIngress', name: 'zone-1.ingress', spec: { networking: {} }, origin: 'zone-1' },
      { kind: 'Dataplane', mesh: 'default', name: 'zone-2.dp-1', spec: dpSpec, origin: 'zone-2' },
    ]),
    zoneConnected: () => connected,
  });
  const cmd = { kind: 'Zone', name: 'zone-1', actor, origin: 'local' };

  it('given a connected zone, refuses with 400 (INVALID_BODY) naming why', () => {
    try {
      decideDelete(registry, cmd, zoneState(true));
      throw new Error('expected a refusal');
    } catch (e) {
      expect(e).toBeInstanceOf(AppError);
      expect((e as AppError).code).toBe('INVALID_BODY');
      expect((e as AppError).details).toContain('is connected');
    }
  });

  it('given a disconnected zone, deletes what it owned and then the zone, in one decision', () => {
    const { events } = decideDelete(registry, cmd, zoneState(false));
    expect(events.map((e) => `${e.kind}/${e.name}`)).toEqual([
      'Dataplane/zone-1.dp-1',
      'ZoneIngress/zone-1.ingress',
      'Zone/zone-1',
    ]);
  });

  it('never treats `local` as a zone origin', () => {
    const state = {
      ...given([
        { kind: 'Zone', name: 'local', origin: 'local' },
        { kind: 'Mesh', name: 'm', origin: 'local' },
      ]),
    };
    expect(decideDelete(registry, { ...cmd, name: 'local' }, state).events.map((e) => e.kind)).toEqual([
      'Zone',
    ]);
  });
});
