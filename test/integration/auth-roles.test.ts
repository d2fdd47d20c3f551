import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { REMOTE, b64, bearer, issueUserToken } from '../helpers/auth.js';
import { startTestPlane } from '../helpers/control-plane.js';
import { putDataplane } from '../helpers/xds.js';

type Role = 'admin' | 'writer' | 'reader' | 'anonymous';
const ROLES: Role[] = ['admin', 'writer', 'reader', 'anonymous'];
const all = [{ match: { 'mesh.io/service': '*' } }];

/** One request of the table, per role: the URL and body are built from the role so writes do not collide. */
interface Row {
  what: string;
  method: 'GET' | 'HEAD' | 'PUT' | 'DELETE' | 'POST';
  url: (role: Role) => string;
  body?: (role: Role) => Record<string, unknown>;
  expected: Record<Role, number>;
}

const tp = (role: Role) => `tp-${role}`;
const dp = (role: Role) => `dp-${role}`;
const secret = (role: Role) => `s-${role}`;
const mesh = (role: Role) => `m-${role}`;

const everyone = (status: number): Record<Role, number> => ({
  admin: status,
  writer: status,
  reader: status,
  anonymous: status,
});
const writers = (ok: number): Record<Role, number> => ({
  admin: ok,
  writer: ok,
  reader: 403,
  anonymous: 403,
});
const adminOnly = (ok: number): Record<Role, number> => ({
  admin: ok,
  writer: 403,
  reader: 403,
  anonymous: 403,
});

/** Role × method × kind → status. Rows run in order: a PUT creates what the DELETE below removes. */
const TABLE: Row[] = [
  // A policy.
  {
    what: 'list policies',
    method: 'GET',
    url: () => '/meshes/default/traffic-permissions',
    expected: everyone(200),
  },
  {
    what: 'get a policy',
    method: 'GET',
    url: () => '/meshes/default/traffic-permissions/allow-all-default',
    expected: everyone(200),
  },
  {
    what: 'put a policy',
    method: 'PUT',
    url: (r) => `/meshes/default/traffic-permissions/${tp(r)}`,
    body: (r) => ({
      type: 'TrafficPermission',
      mesh: 'default',
      name: tp(r),
      sources: all,
      destinations: all,
    }),
    expected: writers(201),
  },
  {
    what: 'delete a policy',
    method: 'DELETE',
    url: (r) => `/meshes/default/traffic-permissions/${tp(r)}`,
    expected: writers(200),
  },
  // A data plane.
  {
    what: 'get a data plane',
    method: 'GET',
    url: () => '/meshes/default/dataplanes/web-1',
    expected: everyone(200),
  },
  {
    what: 'put a data plane',
    method: 'PUT',
    url: (r) => `/meshes/default/dataplanes/${dp(r)}`,
    body: (r) => ({
      type: 'Dataplane',
      mesh: 'default',
      name: dp(r),
      networking: { address: '10.0.0.2', inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }] },
    }),
    expected: writers(201),
  },
  {
    what: 'delete a data plane',
    method: 'DELETE',
    url: (r) => `/meshes/default/dataplanes/${dp(r)}`,
    expected: writers(200),
  },
  // Secret (mesh-scoped).
  { what: 'list secrets', method: 'GET', url: () => '/meshes/default/secrets', expected: adminOnly(200) },
  {
    what: 'get a secret',
    method: 'GET',
    url: () => '/meshes/default/secrets/dataplane-token-signing-key-default-1',
    expected: adminOnly(200),
  },
  {
    what: 'head a secret (a read: same rights as GET)',
    method: 'HEAD',
    url: () => '/meshes/default/secrets/dataplane-token-signing-key-default-1',
    expected: adminOnly(200),
  },
  {
    what: 'put a secret',
    method: 'PUT',
    url: (r) => `/meshes/default/secrets/${secret(r)}`,
    body: (r) => ({ type: 'Secret', mesh: 'default', name: secret(r), data: b64('hush') }),
    expected: adminOnly(201),
  },
  {
    what: 'delete a secret',
    method: 'DELETE',
    url: (r) => `/meshes/default/secrets/${secret(r)}`,
    expected: adminOnly(200),
  },
  // GlobalSecret.
  { what: 'list global secrets', method: 'GET', url: () => '/global-secrets', expected: adminOnly(200) },
  {
    what: 'get a global secret',
    method: 'GET',
    url: () => '/global-secrets/user-token-signing-key-1',
    expected: adminOnly(200),
  },
  {
    what: 'put a global secret',
    method: 'PUT',
    url: (r) => `/global-secrets/${secret(r)}`,
    body: (r) => ({ type: 'Secret', name: secret(r), data: b64('hush') }),
    expected: adminOnly(201),
  },
  {
    what: 'delete a global secret',
    method: 'DELETE',
    url: (r) => `/global-secrets/${secret(r)}`,
    expected: adminOnly(200),
  },
  // Mesh.
  { what: 'list meshes', method: 'GET', url: () => '/meshes', expected: everyone(200) },
  { what: 'get a mesh', method: 'GET', url: () => '/meshes/default', expected: everyone(200) },
  {
    what: 'put a mesh',
    method: 'PUT',
    url: (r) => `/meshes/${mesh(r)}`,
    body: (r) => ({ type: 'Mesh', name: mesh(r) }),
    expected: writers(201),
  },
  { what: 'delete a mesh', method: 'DELETE', url: (r) => `/meshes/${mesh(r)}`, expected: writers(200) },
  // Control plane routes and token endpoints.
  { what: 'read /config', method: 'GET', url: () => '/config', expected: everyone(200) },
  { what: 'read /', method: 'GET', url: () => '/', expected: everyone(200) },
  { what: 'read insights', method: 'GET', url: () => '/mesh-insights/default', expected: everyone(200) },
  {
    what: 'issue a user token',
    method: 'POST',
    url: () => '/tokens/user',
    body: () => ({ name: 'someone', validFor: '1h' }),
    expected: adminOnly(200),
  },
  {
    what: 'issue a user token with PUT',
    method: 'PUT',
    url: () => '/tokens/user',
    body: () => ({ name: 'someone', validFor: '1h' }),
    expected: adminOnly(200),
  },
  {
    what: 'issue a data plane token',
    method: 'POST',
    url: () => '/tokens/dataplane',
    body: () => ({ name: 'web-1', mesh: 'default' }),
    expected: adminOnly(200),
  },
  // Paths that name no kind are 404 for every caller, not 403 (nothing there to refuse).
  {
    what: 'list an unknown kind',
    method: 'GET',
    url: () => '/meshes/default/no-such-kind',
    expected: everyone(404),
  },
  {
    what: 'write an unknown kind',
    method: 'PUT',
    url: () => '/no-such-kind/x',
    body: () => ({}),
    expected: everyone(404),
  },
  {
    what: 'delete an unknown kind',
    method: 'DELETE',
    url: () => '/meshes/default/nope/x',
    expected: everyone(404),
  },
  {
    what: 'revert an unknown kind',
    method: 'POST',
    url: () => '/nope/x/_revert?toRevision=1',
    expected: everyone(404),
  },
];

describe('authorization: role × method × kind → status', () => {
  let cp: ControlPlane;
  const headers: Record<Role, Record<string, string>> = {
    admin: {},
    writer: {},
    reader: {},
    anonymous: {},
  };

  beforeAll(async () => {
    cp = await startTestPlane();
    headers.admin = bearer(await issueUserToken(cp.app, { name: 'ada', groups: ['mesh-system:admin'] }));
    headers.writer = bearer(await issueUserToken(cp.app, { name: 'wes', groups: ['mesh-system:writer'] }));
    headers.reader = bearer(await issueUserToken(cp.app, { name: 'rita', groups: ['mesh-system:reader'] }));
    await putDataplane(cp.app, 'default', 'web-1', {
      address: '10.0.0.1',
      inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }],
    });
  });
  afterAll(async () => {
    await cp.close();
  });

  for (const row of TABLE) {
    it.each(ROLES)(`${row.what} (${row.method}) as %s`, async (role) => {
      const res = await cp.app.inject({
        method: row.method,
        url: row.url(role),
        headers: headers[role],
        // Every caller is remote: the loopback admin rule must not decide the table.
        remoteAddress: REMOTE,
        ...(row.body ? { payload: row.body(role) } : {}),
      });
      expect(res.statusCode, res.body).toBe(row.expected[role]);
      if (row.method === 'HEAD') expect(res.body).toBe('');
      else if (res.statusCode === 403) {
        const who =
          role === 'anonymous'
            ? 'anonymous caller (no credentials)'
            : `user "${{ admin: 'ada', writer: 'wes', reader: 'rita' }[role]}" (groups: mesh-system:${role})`;
        expect(res.json().title).toBe('Forbidden');
        expect(res.json().details).toMatch(
          new RegExp(`^${who.replace(/[()]/g, '\\$&')} may not ${row.method} `),
        );
      }
    });
  }

  it('names the user, the method, the kind and the mesh in a 403', async () => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/traffic-permissions/x',
      headers: headers.reader,
      payload: { type: 'TrafficPermission', mesh: 'default', name: 'x', sources: all, destinations: all },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toEqual({
      title: 'Forbidden',
      details: 'user "rita" (groups: mesh-system:reader) may not PUT TrafficPermission in mesh "default"',
    });
  });

  it('records the token user, groups and address as the actor of a write', async () => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/traffic-permissions/by-wes',
      headers: headers.writer,
      remoteAddress: REMOTE,
      payload: {
        type: 'TrafficPermission',
        mesh: 'default',
        name: 'by-wes',
        sources: all,
        destinations: all,
      },
    });
    expect(res.statusCode).toBe(201);
    const entries = [];
    for await (const e of cp.log.history('TrafficPermission', 'default', 'by-wes')) entries.push(e);
    expect(entries.map((e) => e.actor)).toEqual([
      { name: 'wes', groups: ['mesh-system:writer'], address: REMOTE },
    ]);
    const local = await cp.app.inject({
      method: 'DELETE',
      url: '/meshes/default/traffic-permissions/by-wes',
    });
    expect(local.statusCode).toBe(200);
    const after = [];
    for await (const e of cp.log.history('TrafficPermission', 'default', 'by-wes')) after.push(e);
    expect(after[1].actor).toEqual({ name: 'admin', groups: ['mesh-system:admin'], address: '127.0.0.1' });
  });
});

describe('authorization settings', () => {
  it('anonymous "none" refuses everything to callers without credentials; a reader token still reads', async () => {
    const cp = await startTestPlane({ MESH_API_SERVER_AUTHZ_ANONYMOUS: 'none' });
    try {
      const refused: Array<[string, string]> = [
        ['/', 'GET /'],
        ['/config', 'GET /config'],
        ['/meshes', 'GET Mesh'],
        ['/meshes/default/traffic-permissions', 'GET TrafficPermission in mesh "default"'],
      ];
      for (const [url, what] of refused) {
        const res = await cp.app.inject({ method: 'GET', url, remoteAddress: REMOTE });
        expect(res.statusCode, url).toBe(403);
        expect(res.json().details).toBe(`anonymous caller (no credentials) may not ${what}`);
      }
      const reader = bearer(await issueUserToken(cp.app, { name: 'rita', groups: ['mesh-system:reader'] }));
      const res = await cp.app.inject({
        method: 'GET',
        url: '/meshes',
        headers: reader,
        remoteAddress: REMOTE,
      });
      expect(res.statusCode).toBe(200);
      const noGroup = bearer(await issueUserToken(cp.app, { name: 'nobody', groups: ['unknown-group'] }));
      const denied = await cp.app.inject({
        method: 'GET',
        url: '/meshes',
        headers: noGroup,
        remoteAddress: REMOTE,
      });
      expect(denied.statusCode).toBe(403);
      expect(denied.json().details).toBe('user "nobody" (groups: unknown-group) may not GET Mesh');
    } finally {
      await cp.close();
    }
  });

  it('anonymousWrite lets callers without credentials write every kind but secrets', async () => {
    const cp = await startTestPlane({ MESH_API_SERVER_AUTHN_ANONYMOUS_WRITE: 'true' });
    try {
      const put = await cp.app.inject({
        method: 'PUT',
        url: '/meshes/default/traffic-permissions/anon',
        remoteAddress: REMOTE,
        payload: {
          type: 'TrafficPermission',
          mesh: 'default',
          name: 'anon',
          sources: all,
          destinations: all,
        },
      });
      expect(put.statusCode).toBe(201);
      const entries = [];
      for await (const e of cp.log.history('TrafficPermission', 'default', 'anon')) entries.push(e);
      expect(entries[0].actor).toEqual({ name: 'anonymous', groups: [], address: REMOTE });
      const secret = await cp.app.inject({
        method: 'PUT',
        url: '/global-secrets/anon',
        remoteAddress: REMOTE,
        payload: { type: 'Secret', name: 'anon', data: b64('x') },
      });
      expect(secret.statusCode).toBe(403);
    } finally {
      await cp.close();
    }
  });

  it('localhostIsAdmin false makes loopback callers anonymous', async () => {
    const cp = await startTestPlane({ MESH_API_SERVER_AUTHN_LOCALHOST_IS_ADMIN: 'false' });
    try {
      const res = await cp.app.inject({ method: 'DELETE', url: '/meshes/default' });
      expect(res.statusCode).toBe(403);
      expect(res.json().details).toBe(
        'anonymous caller (no credentials) may not DELETE Mesh in mesh "default"',
      );
      const token = await cp.app.inject({
        method: 'POST',
        url: '/tokens/user',
        payload: { name: 'a', validFor: '1h' },
      });
      expect(token.statusCode).toBe(403);
    } finally {
      await cp.close();
    }
  });

  it('a role limited to some meshes covers requests in those meshes only', async () => {
    const cp = await startTestPlane({
      MESH_API_SERVER_AUTHZ_ANONYMOUS: 'none',
      MESH_API_SERVER_AUTHZ_GROUPS: JSON.stringify({
        'team-a': { role: 'writer', meshes: ['a'] },
        'ops-a': { role: 'admin', meshes: ['a'] },
      }),
    });
    try {
      for (const name of ['a', 'b']) {
        const res = await cp.app.inject({
          method: 'PUT',
          url: `/meshes/${name}`,
          payload: { type: 'Mesh', name },
        });
        expect(res.statusCode).toBe(201);
      }
      const teamA = bearer(await issueUserToken(cp.app, { name: 'tess', groups: ['team-a'] }));
      const opsA = bearer(await issueUserToken(cp.app, { name: 'otto', groups: ['ops-a'] }));
      const req = (headers: Record<string, string>, method: 'GET' | 'PUT', url: string, payload?: object) =>
        cp.app.inject({ method, url, headers, remoteAddress: REMOTE, ...(payload ? { payload } : {}) });
      const policy = (m: string) => ({
        type: 'TrafficPermission',
        mesh: m,
        name: 'p',
        sources: all,
        destinations: all,
      });

      expect((await req(teamA, 'PUT', '/meshes/a/traffic-permissions/p', policy('a'))).statusCode).toBe(201);
      const other = await req(teamA, 'PUT', '/meshes/b/traffic-permissions/p', policy('b'));
      expect(other.statusCode).toBe(403);
      expect(other.json().details).toBe(
        'user "tess" (groups: team-a) may not PUT TrafficPermission in mesh "b"',
      );
      expect((await req(teamA, 'GET', '/meshes/a')).statusCode).toBe(200);
      expect((await req(teamA, 'GET', '/mesh-insights/a')).statusCode).toBe(200);
      expect((await req(teamA, 'GET', '/meshes/a/traffic-permissions')).statusCode).toBe(200);
      expect((await req(teamA, 'GET', '/meshes/b')).statusCode).toBe(403);
      // The inspect API is a read of the proxy's or the policy's kind in that mesh.
      expect((await req(teamA, 'GET', '/meshes/a/traffic-permissions/p/dataplanes')).statusCode).toBe(200);
      expect((await req(teamA, 'GET', '/meshes/b/traffic-permissions/p/dataplanes')).statusCode).toBe(403);
      expect((await req(teamA, 'GET', '/meshes/a/dataplanes/x/policies')).statusCode).toBe(404);
      const inspectB = await req(teamA, 'GET', '/meshes/b/dataplanes/x/policies');
      expect(inspectB.statusCode).toBe(403);
      expect(inspectB.json().details).toBe('user "tess" (groups: team-a) may not GET Dataplane in mesh "b"');
      expect((await req(teamA, 'GET', '/meshes/b/meshgateways/g/dataplanes')).statusCode).toBe(403);
      // Lists across meshes and global kinds are outside any one mesh.
      expect((await req(teamA, 'GET', '/meshes')).statusCode).toBe(403);
      expect((await req(teamA, 'GET', '/traffic-permissions')).statusCode).toBe(403);
      expect((await req(teamA, 'GET', '/zones')).statusCode).toBe(403);
      // A writer of mesh a still may not touch its secrets; an admin of mesh a may, but nothing global.
      expect((await req(teamA, 'GET', '/meshes/a/secrets/dataplane-token-signing-key-a-1')).statusCode).toBe(
        403,
      );
      expect((await req(opsA, 'GET', '/meshes/a/secrets/dataplane-token-signing-key-a-1')).statusCode).toBe(
        200,
      );
      expect((await req(opsA, 'GET', '/meshes/b/secrets/dataplane-token-signing-key-b-1')).statusCode).toBe(
        403,
      );
      expect((await req(opsA, 'GET', '/global-secrets/user-token-signing-key-1')).statusCode).toBe(403);
      const token = await cp.app.inject({
        method: 'POST',
        url: '/tokens/user',
        headers: opsA,
        remoteAddress: REMOTE,
        payload: { name: 'x', validFor: '1h' },
      });
      expect(token.statusCode).toBe(403);
    } finally {
      await cp.close();
    }
  });

  it('keeps the default groups when config adds its own, and lets config remap them', async () => {
    const cp = await startTestPlane({
      MESH_API_SERVER_AUTHZ_GROUPS: JSON.stringify({
        'mesh-system:writer': { role: 'none' },
        ops: { role: 'admin' },
      }),
    });
    try {
      const groups = (await cp.app.inject({ method: 'GET', url: '/config' })).json().apiServer.authz.groups;
      expect(groups).toEqual({
        'mesh-system:admin': { role: 'admin' },
        'mesh-system:writer': { role: 'none' },
        'mesh-system:reader': { role: 'reader' },
        ops: { role: 'admin' },
      });
      const ops = bearer(await issueUserToken(cp.app, { name: 'o', groups: ['ops'] }));
      const res = await cp.app.inject({
        method: 'GET',
        url: '/global-secrets',
        headers: ops,
        remoteAddress: REMOTE,
      });
      expect(res.statusCode).toBe(200);
      const writer = bearer(await issueUserToken(cp.app, { name: 'w', groups: ['mesh-system:writer'] }));
      const put = await cp.app.inject({
        method: 'PUT',
        url: '/meshes/x',
        headers: writer,
        remoteAddress: REMOTE,
        payload: { type: 'Mesh', name: 'x' },
      });
      expect(put.statusCode).toBe(403);
    } finally {
      await cp.close();
    }
  });
});
