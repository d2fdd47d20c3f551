import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { xdsBootstrapSettings } from '../../src/api/xds-routes.js';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { SERVER_LISTENER_TEMPLATE } from '../../src/xds/proxyless/server-listener.js';
import { bearer, issueUserToken, REMOTE } from '../helpers/auth.js';
import { startListeningPlane, startTestPlane, tempDir, testConfig } from '../helpers/control-plane.js';
import { eventually, startGlobal, startZone, zoneToken } from '../helpers/multizone.js';

const SVC = 'mesh.io/service';
const dataplane = (mesh: string, name: string) => ({
  type: 'Dataplane',
  mesh,
  name,
  networking: { address: '10.0.0.1', inbound: [{ port: 8080, tags: { [SVC]: 'web' } }] },
});

async function put(cp: ControlPlane, url: string, payload: object): Promise<void> {
  const res = await cp.app.inject({ method: 'PUT', url, payload });
  expect(res.statusCode, res.body).toBe(201);
}

/** The bootstrap a standalone plane with default settings answers for `<mesh>.<name>`. */
const standaloneBootstrap = (serverUri: string, mesh: string, name: string) => ({
  xds_servers: [
    {
      server_uri: serverUri,
      channel_creds: [{ type: 'insecure' }],
      server_features: ['ignore_resource_deletion'],
    },
  ],
  node: { id: `${mesh}.${name}`, locality: {}, metadata: { 'dataplane.mesh': mesh, 'dataplane.name': name } },
  server_listener_resource_name_template: SERVER_LISTENER_TEMPLATE,
});

describe('GET /meshes/{mesh}/dataplanes/{name}/bootstrap (decisions §11)', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane({
      MESH_API_SERVER_AUTHZ_ANONYMOUS: 'none',
      MESH_API_SERVER_AUTHZ_GROUPS: JSON.stringify({ 'readers-a': { role: 'reader', meshes: ['team.a'] } }),
    });
    await put(cp, '/meshes/team.a', { type: 'Mesh', name: 'team.a' });
    await put(cp, '/meshes/default/dataplanes/web-1', dataplane('default', 'web-1'));
    await put(cp, '/meshes/team.a/dataplanes/api.v2', dataplane('team.a', 'api.v2'));
  });
  afterAll(() => cp.close());

  it('answers the JSON bootstrap of @grpc/grpc-js-xds: the advertised xDS address, node id, empty locality, metadata', async () => {
    const res = await cp.app.inject({ method: 'GET', url: '/meshes/default/dataplanes/web-1/bootstrap' });
    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(res.headers['x-mesh-revision']).toMatch(/^\d+$/);
    expect(res.json()).toEqual(standaloneBootstrap('localhost:5678', 'default', 'web-1'));
  });

  it('names the Dataplane in metadata too, so a mesh or a name with dots is never ambiguous', async () => {
    const res = await cp.app.inject({ method: 'GET', url: '/meshes/team.a/dataplanes/api.v2/bootstrap' });
    expect(res.statusCode).toBe(200);
    expect(res.json().node).toEqual({
      id: 'team.a.api.v2',
      locality: {},
      metadata: { 'dataplane.mesh': 'team.a', 'dataplane.name': 'api.v2' },
    });
  });

  it('answers 404 naming the mesh, then the Dataplane', async () => {
    const noMesh = await cp.app.inject({ method: 'GET', url: '/meshes/nope/dataplanes/web-1/bootstrap' });
    expect(noMesh.statusCode).toBe(404);
    expect(noMesh.json().details).toBe('Mesh "nope" not found');
    const noProxy = await cp.app.inject({ method: 'GET', url: '/meshes/default/dataplanes/web-2/bootstrap' });
    expect(noProxy.statusCode).toBe(404);
    expect(noProxy.json().details).toBe('Dataplane "web-2" not found in mesh "default"');
  });

  it('is a read of Dataplane in the mesh: a reader of another mesh gets 403, a reader of the mesh 200', async () => {
    const reader = bearer(await issueUserToken(cp.app, { name: 'rita', groups: ['readers-a'] }));
    const get = (url: string) =>
      cp.app.inject({ method: 'GET', url, headers: reader, remoteAddress: REMOTE });
    const other = await get('/meshes/default/dataplanes/web-1/bootstrap');
    expect(other.statusCode).toBe(403);
    expect(other.json().details).toContain('may not GET Dataplane in mesh "default"');
    expect((await get('/meshes/team.a/dataplanes/api.v2/bootstrap')).statusCode).toBe(200);
    const anonymous = await cp.app.inject({
      method: 'GET',
      url: '/meshes/team.a/dataplanes/api.v2/bootstrap',
      remoteAddress: REMOTE,
    });
    expect(anonymous.statusCode).toBe(403);
  });
});

describe('the bootstrap xDS address (xdsServer.advertisedAddress, else general.advertisedHostname:grpcPort)', () => {
  it('takes the advertised address when set, else the advertised hostname and the gRPC port', async () => {
    const cp = await startTestPlane({ MESH_XDS_SERVER_ADVERTISED_ADDRESS: 'xds.example:443' });
    try {
      await put(cp, '/meshes/default/dataplanes/web-1', dataplane('default', 'web-1'));
      const res = await cp.app.inject({ method: 'GET', url: '/meshes/default/dataplanes/web-1/bootstrap' });
      expect(res.json()).toEqual(standaloneBootstrap('xds.example:443', 'default', 'web-1'));
    } finally {
      await cp.close();
    }
    const settings = (env: Record<string, string>) => xdsBootstrapSettings(testConfig(env));
    expect(
      settings({ MESH_GENERAL_ADVERTISED_HOSTNAME: 'cp.example', MESH_XDS_SERVER_GRPC_PORT: '15678' }),
    ).toEqual({
      serverUri: 'cp.example:15678',
      zone: undefined,
    });
    expect(settings({ MESH_GENERAL_ADVERTISED_HOSTNAME: 'fd00::7' })?.serverUri).toBe('[fd00::7]:5678');
    expect(settings({ MESH_MODE: 'global' })).toBeUndefined();
  });

  it('names the port actually bound when grpcPort is 0 (a free port), not port 0', async () => {
    const cp = await startListeningPlane({ MESH_GENERAL_ADVERTISED_HOSTNAME: '127.0.0.1' });
    try {
      await put(cp, '/meshes/default/dataplanes/web-1', dataplane('default', 'web-1'));
      const res = await cp.app.inject({ method: 'GET', url: '/meshes/default/dataplanes/web-1/bootstrap' });
      expect(cp.ports.xds).toBeGreaterThan(0);
      expect(res.json().xds_servers[0].server_uri).toBe(`127.0.0.1:${cp.ports.xds}`);
    } finally {
      await cp.close();
    }
  });
});

describe('bootstrapServer.params.xdsHost and xdsPort: each wins over its part of the advertised address', () => {
  const uri = (env: Record<string, string>) => xdsBootstrapSettings(testConfig(env))?.serverUri;

  it('answers the configured host and port in the bootstrap', async () => {
    const cp = await startTestPlane({
      MESH_BOOTSTRAP_SERVER_PARAMS_XDS_HOST: 'xds.internal',
      MESH_BOOTSTRAP_SERVER_PARAMS_XDS_PORT: '15678',
      MESH_XDS_SERVER_ADVERTISED_ADDRESS: 'xds.example:443',
    });
    try {
      await put(cp, '/meshes/default/dataplanes/web-1', dataplane('default', 'web-1'));
      const res = await cp.app.inject({ method: 'GET', url: '/meshes/default/dataplanes/web-1/bootstrap' });
      expect(res.json()).toEqual(standaloneBootstrap('xds.internal:15678', 'default', 'web-1'));
    } finally {
      await cp.close();
    }
  });

  it('host: xdsHost, else the host of xdsServer.advertisedAddress, else general.advertisedHostname', () => {
    const base = { MESH_GENERAL_ADVERTISED_HOSTNAME: 'cp.example', MESH_XDS_SERVER_GRPC_PORT: '5000' };
    expect(uri({ ...base, MESH_BOOTSTRAP_SERVER_PARAMS_XDS_HOST: '10.0.0.9' })).toBe('10.0.0.9:5000');
    expect(uri({ ...base, MESH_BOOTSTRAP_SERVER_PARAMS_XDS_HOST: 'fd00::9' })).toBe('[fd00::9]:5000');
    expect(
      uri({
        ...base,
        MESH_BOOTSTRAP_SERVER_PARAMS_XDS_HOST: 'xds.internal',
        MESH_XDS_SERVER_ADVERTISED_ADDRESS: '[fd00::7]:443',
      }),
    ).toBe('xds.internal:443');
  });

  it('port: xdsPort, else the port of xdsServer.advertisedAddress, else xdsServer.grpcPort', () => {
    const base = { MESH_GENERAL_ADVERTISED_HOSTNAME: 'cp.example', MESH_XDS_SERVER_GRPC_PORT: '5000' };
    expect(uri({ ...base, MESH_BOOTSTRAP_SERVER_PARAMS_XDS_PORT: '7000' })).toBe('cp.example:7000');
    expect(
      uri({
        ...base,
        MESH_BOOTSTRAP_SERVER_PARAMS_XDS_PORT: '7000',
        MESH_XDS_SERVER_ADVERTISED_ADDRESS: '[fd00::7]:443',
      }),
    ).toBe('[fd00::7]:7000');
    expect(uri({ ...base, MESH_XDS_SERVER_ADVERTISED_ADDRESS: '[fd00::7]:443' })).toBe('[fd00::7]:443');
    expect(uri(base)).toBe('cp.example:5000');
  });

  it('with grpcPort 0, xdsHost takes the port actually bound; xdsPort still wins', async () => {
    const bound = await startListeningPlane({ MESH_BOOTSTRAP_SERVER_PARAMS_XDS_HOST: '127.0.0.1' });
    const fixed = await startListeningPlane({
      MESH_BOOTSTRAP_SERVER_PARAMS_XDS_HOST: '127.0.0.1',
      MESH_BOOTSTRAP_SERVER_PARAMS_XDS_PORT: '15678',
    });
    try {
      for (const [cp, port] of [
        [bound, bound.ports.xds],
        [fixed, 15678],
      ] as const) {
        await put(cp, '/meshes/default/dataplanes/web-1', dataplane('default', 'web-1'));
        const res = await cp.app.inject({ method: 'GET', url: '/meshes/default/dataplanes/web-1/bootstrap' });
        expect(res.json().xds_servers[0].server_uri).toBe(`127.0.0.1:${port}`);
      }
      expect(bound.ports.xds).toBeGreaterThan(0);
    } finally {
      await bound.close();
      await fixed.close();
    }
  });

  it('refuses a host with a port or a space, naming the variable', () => {
    for (const host of ['xds.example:443', 'a b', 'http://x']) {
      expect(() => testConfig({ MESH_BOOTSTRAP_SERVER_PARAMS_XDS_HOST: host }), host).toThrow(
        /bootstrapServer\.params\.xdsHost \(from MESH_BOOTSTRAP_SERVER_PARAMS_XDS_HOST\): must be a host name or an IP address/,
      );
    }
  });
});

describe('the bootstrap in zone mode and on Global', () => {
  const gdir = tempDir('xds-bootstrap-global-');
  let global: ControlPlane;
  let zone: ControlPlane | undefined;
  beforeAll(async () => {
    global = await startGlobal(gdir.path);
    zone = await startZone(global, gdir.path, 'east', await zoneToken(global, 'east'), {
      MESH_XDS_SERVER_ADVERTISED_ADDRESS: 'east-cp.example:5678',
    });
    const z = zone;
    await eventually(() => z.views.get('Mesh', undefined, 'default'), 10_000, 'the mesh on the zone');
    await put(z, '/meshes/default/dataplanes/web-1', dataplane('default', 'web-1'));
    await eventually(
      () => global.views.get('Dataplane', 'default', 'east.web-1'),
      10_000,
      'the proxy on Global',
    );
  });
  afterAll(async () => {
    await zone?.close();
    await global?.close();
    gdir.cleanup();
  });

  it('a zone answers its zone as the locality', async () => {
    const res = await zone!.app.inject({ method: 'GET', url: '/meshes/default/dataplanes/web-1/bootstrap' });
    expect(res.statusCode).toBe(200);
    expect(res.json().xds_servers[0].server_uri).toBe('east-cp.example:5678');
    expect(res.json().node).toEqual({
      id: 'default.web-1',
      locality: { zone: 'east' },
      metadata: { 'dataplane.mesh': 'default', 'dataplane.name': 'web-1' },
    });
  });

  it('Global serves no xDS and says where to get the bootstrap', async () => {
    const res = await global.app.inject({
      method: 'GET',
      url: '/meshes/default/dataplanes/east.web-1/bootstrap',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toBe(
      'Global serves no xDS: a proxy connects to the control plane of its zone; get its bootstrap there',
    );
  });

  it("Global answers a zone proxy's config timeline from its zone, and has no past /xds", async () => {
    const z = zone as ControlPlane;
    // A caller of web on the zone, then a policy written on Global that changes its config there.
    await put(z, '/meshes/default/dataplanes/caller-1', {
      type: 'Dataplane',
      mesh: 'default',
      name: 'caller-1',
      networking: {
        address: '10.0.0.8',
        inbound: [{ port: 8080, tags: { 'mesh.io/service': 'caller' } }],
        outbound: [{ port: 10001, tags: { 'mesh.io/service': 'web' } }],
      },
    });
    await eventually(
      () => global.views.get('Dataplane', 'default', 'east.caller-1'),
      10_000,
      'the caller on Global',
    );
    await put(global, '/meshes/default/timeouts/web-timeout', {
      type: 'Timeout',
      mesh: 'default',
      name: 'web-timeout',
      sources: [{ match: { 'mesh.io/service': '*' } }],
      destinations: [{ match: { 'mesh.io/service': '*' } }],
      conf: { connectTimeout: '3s', http: { requestTimeout: '7s' } },
    });
    await eventually(
      () => z.views.get('Timeout', 'default', 'web-timeout'),
      10_000,
      'the policy on the zone',
    );
    const own = await z.app.inject({
      method: 'GET',
      url: '/meshes/default/dataplanes/caller-1/xds/_history',
    });
    expect(own.statusCode, own.body).toBe(200);
    expect(own.json().total).toBeGreaterThanOrEqual(2);
    const timeline = await global.app.inject({
      method: 'GET',
      url: '/meshes/default/dataplanes/east.caller-1/xds/_history?size=1&offset=0',
    });
    expect(timeline.statusCode, timeline.body).toBe(200);
    // The zone's items (its revisions), paged on Global.
    expect(timeline.json().total).toBe(own.json().total);
    expect(timeline.json().items).toEqual(own.json().items.slice(0, 1));
    expect(timeline.json().next).toContain('offset=1');
    const missing = await global.app.inject({
      method: 'GET',
      url: '/meshes/default/dataplanes/east.nobody/xds/_history',
    });
    expect(missing.statusCode).toBe(404);
    // Global previews a policy's impact on the zone's proxies, naming their zone.
    const dry = await global.app.inject({
      method: 'PUT',
      url: '/meshes/default/timeouts/web-timeout?dryRun=true&impact=true',
      payload: {
        type: 'Timeout',
        mesh: 'default',
        name: 'web-timeout',
        sources: [{ match: { 'mesh.io/service': '*' } }],
        destinations: [{ match: { 'mesh.io/service': '*' } }],
        conf: { connectTimeout: '3s', http: { requestTimeout: '9s' } },
      },
    });
    expect(dry.statusCode, dry.body).toBe(200);
    const caller = (dry.json().impact.items as Array<Record<string, unknown>>).find(
      (i) => i.name === 'east.caller-1',
    );
    expect(caller).toMatchObject({
      zone: 'east',
      kind: 'sidecar',
      resources: [{ type: 'Listener', name: 'web', change: 'changed' }],
    });
    const past = await global.app.inject({
      method: 'GET',
      url: `/meshes/default/dataplanes/east.web-1/xds?revision=${global.log.head()}`,
    });
    expect(past.statusCode).toBe(400);
    expect(past.json().causes).toEqual([
      { field: 'revision', message: '/xds is not served here: it has no past' },
    ]);
  });
});
