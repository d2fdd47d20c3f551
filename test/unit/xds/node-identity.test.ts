import { describe, expect, it } from 'vitest';
import { nodeIdSplits } from '../../../src/resources/keys.js';
import { nodeIdentity, proxyToken } from '../../../src/xds/node-identity.js';
import { lookupOf, sidecar } from '../../helpers/xds.js';

const web = sidecar('default', 'web-1', { 'mesh.io/service': 'web' });

describe('nodeIdSplits', () => {
  it('reads the id at each dot, first dot first, skipping empty meshes and names', () => {
    expect(nodeIdSplits('a.b.c')).toEqual([
      { mesh: 'a', name: 'b.c' },
      { mesh: 'a.b', name: 'c' },
    ]);
    expect(nodeIdSplits('.a.')).toEqual([]);
    expect(nodeIdSplits('plain')).toEqual([]);
  });

  it('keeps only the readings whose two sides are names (at most 253 characters, starting alphanumeric)', () => {
    expect(nodeIdSplits('a..b')).toEqual([{ mesh: 'a.', name: 'b' }]);
    const long = `${'m'.repeat(253)}.${'n'.repeat(253)}`;
    expect(nodeIdSplits(long)).toEqual([{ mesh: 'm'.repeat(253), name: 'n'.repeat(253) }]);
    // 505 dots, one reading: each side at most 253 characters.
    expect(nodeIdSplits(`${'b.'.repeat(253)}b`)).toHaveLength(1);
  });
});

describe('nodeIdentity (decisions §11)', () => {
  it('finds the Dataplane named by node.id <mesh>.<name>', () => {
    const id = nodeIdentity({ id: 'default.web-1' }, lookupOf(web));
    expect(id).toEqual({ ok: true, mesh: 'default', name: 'web-1', dataplane: web, alsoNamed: [] });
  });

  it('finds a Dataplane of a mesh whose name has dots, and one whose name has dots', () => {
    const inDottedMesh = sidecar('team.prod', 'api', { 'mesh.io/service': 'api' });
    const dottedName = sidecar('default', 'api.v2', { 'mesh.io/service': 'api' });
    const lookup = lookupOf(inDottedMesh, dottedName);
    expect(nodeIdentity({ id: 'team.prod.api' }, lookup)).toMatchObject({
      ok: true,
      mesh: 'team.prod',
      name: 'api',
    });
    expect(nodeIdentity({ id: 'default.api.v2' }, lookup)).toMatchObject({
      ok: true,
      mesh: 'default',
      name: 'api.v2',
    });
  });

  it('chooses the first dot when two splits name Dataplanes, and names the other', () => {
    const a = sidecar('a', 'b.c', { 'mesh.io/service': 'x' });
    const ab = sidecar('a.b', 'c', { 'mesh.io/service': 'y' });
    const id = nodeIdentity({ id: 'a.b.c' }, lookupOf(ab, a));
    expect(id).toEqual({
      ok: true,
      mesh: 'a',
      name: 'b.c',
      dataplane: a,
      alsoNamed: [{ mesh: 'a.b', name: 'c' }],
    });
  });

  it('lets node.metadata dataplane.mesh and dataplane.name win over node.id', () => {
    const other = sidecar('other', 'api', { 'mesh.io/service': 'api' });
    const id = nodeIdentity(
      { id: 'default.web-1', metadata: { 'dataplane.mesh': 'other', 'dataplane.name': 'api' } },
      lookupOf(web, other),
    );
    expect(id).toMatchObject({ ok: true, mesh: 'other', name: 'api', dataplane: other });
  });

  it('refuses a missing Dataplane with NOT_FOUND and says how to create it', () => {
    expect(nodeIdentity({ id: 'default.web-2' }, lookupOf(web))).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      message:
        'node.id "default.web-2" names no Dataplane: Dataplane "web-2" in mesh "default" not found; create it first (PUT /meshes/default/dataplanes/web-2), or fix node.id',
    });
    expect(nodeIdentity({ id: 'a.b.c' }, lookupOf(web))).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      message:
        'node.id "a.b.c" names no Dataplane: none of Dataplane "b.c" in mesh "a", Dataplane "c" in mesh "a.b" exists; create it first, or fix node.id',
    });
    expect(
      nodeIdentity(
        { id: 'default.web-1', metadata: { 'dataplane.mesh': 'default', 'dataplane.name': 'nope' } },
        lookupOf(web),
      ),
    ).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      message:
        'Dataplane "nope" in mesh "default" (named by node.metadata) not found: create it first (PUT /meshes/default/dataplanes/nope), or fix node.metadata',
    });
  });

  it('names an id of many readings once, with their count', () => {
    const id = nodeIdentity({ id: 'a.b.c.d' }, lookupOf(web));
    expect(id).toEqual({
      ok: false,
      code: 'NOT_FOUND',
      message:
        'node.id "a.b.c.d" names no Dataplane: none of its 3 readings as <mesh>.<name> (one at each dot) names an existing Dataplane; create it first, or fix node.id',
    });
  });

  it('refuses an id longer than a mesh and a name, or with characters names do not have, before any lookup', () => {
    const lookup = () => {
      throw new Error('looked up');
    };
    expect(nodeIdentity({ id: 'x'.repeat(508) }, lookup)).toEqual({
      ok: false,
      code: 'INVALID_ARGUMENT',
      message:
        'node.id is 508 characters long; at most 507 (<mesh>.<name>, each at most 253 characters): fix node.id',
    });
    const control = nodeIdentity({ id: 'default.web\n1' }, lookup);
    expect(control).toMatchObject({ ok: false, code: 'INVALID_ARGUMENT' });
    expect(control.ok ? '' : control.message).toMatch(
      /^node\.id "default\.web\\n1" has characters no mesh or Dataplane name has \(names are \[0-9a-z\._-\]\)/,
    );
    const metadata = nodeIdentity(
      { metadata: { 'dataplane.mesh': 'default', 'dataplane.name': 'W'.repeat(300) } },
      lookup,
    );
    expect(metadata.ok ? '' : metadata.message).toBe(
      `node.metadata "dataplane.name" is "${'W'.repeat(63)}…", which is not a name: 1 to 253 characters of [0-9a-z._-], starting with a letter or digit`,
    );
  });

  it('refuses a node without a usable id or with half the metadata pair with INVALID_ARGUMENT', () => {
    const lookup = lookupOf(web);
    const cases: Array<[Parameters<typeof nodeIdentity>[0], string]> = [
      [{}, 'the node has no id: set node.id to <mesh>.<name>'],
      [{ id: 'web-1' }, 'node.id "web-1" is not <mesh>.<name>'],
      [{ id: 'default.' }, 'node.id "default." is not <mesh>.<name>'],
      [
        { id: 'default.web-1', metadata: { 'dataplane.mesh': 'default' } },
        'node.metadata has "dataplane.mesh" but not "dataplane.name"',
      ],
      [
        { id: 'default.web-1', metadata: { 'dataplane.name': 'web-1' } },
        'node.metadata has "dataplane.name" but not "dataplane.mesh"',
      ],
      [
        { metadata: { 'dataplane.mesh': 'default', 'dataplane.name': 7 } },
        'node.metadata "dataplane.name" must be a non-empty string',
      ],
      [
        { metadata: { 'dataplane.mesh': '', 'dataplane.name': 'web-1' } },
        'node.metadata "dataplane.mesh" must be a non-empty string',
      ],
    ];
    for (const [node, message] of cases) {
      const id = nodeIdentity(node, lookup);
      expect(id, JSON.stringify(node)).toMatchObject({ ok: false, code: 'INVALID_ARGUMENT' });
      expect(id.ok ? '' : id.message).toContain(message);
    }
  });
});

describe('proxyToken (decisions §11)', () => {
  it('reads node.metadata dataplane.token, or an authorization Bearer value, or none', () => {
    expect(proxyToken({ metadata: { 'dataplane.token': 'abc' } })).toEqual({ ok: true, token: 'abc' });
    expect(proxyToken({}, ['Bearer xyz'])).toEqual({ ok: true, token: 'xyz' });
    expect(proxyToken({}, ['bearer  xyz'])).toEqual({ ok: true, token: 'xyz' });
    expect(proxyToken({ metadata: { 'dataplane.token': 'abc' } }, ['Bearer abc'])).toEqual({
      ok: true,
      token: 'abc',
    });
    expect(proxyToken({ metadata: null })).toEqual({ ok: true, token: undefined });
  });

  it('refuses malformed or conflicting tokens with UNAUTHENTICATED', () => {
    const cases: Array<[Parameters<typeof proxyToken>, string]> = [
      [
        [{ metadata: { 'dataplane.token': 5 } }],
        'node.metadata "dataplane.token" must be a data plane token',
      ],
      [
        [{ metadata: { 'dataplane.token': ' ' } }],
        'node.metadata "dataplane.token" must be a data plane token',
      ],
      [[{}, ['Basic abc']], 'must be "Bearer <data plane token>"'],
      [[{}, ['Bearer a', 'Bearer b']], 'the call carries 2 authorization values'],
      [[{ metadata: { 'dataplane.token': 'a' } }, ['Bearer b']], 'carry different tokens'],
    ];
    for (const [args, message] of cases) {
      const result = proxyToken(...args);
      expect(result, JSON.stringify(args)).toMatchObject({ ok: false, code: 'UNAUTHENTICATED' });
      expect(result.ok ? '' : result.message).toContain(message);
    }
  });
});
