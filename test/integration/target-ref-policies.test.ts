import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startTestPlane } from '../helpers/control-plane.js';

/** A valid body of each targetRef kind (extra-policies.md), by collection. */
const SAMPLES: Record<string, { type: string; spec: Record<string, unknown> }> = {
  meshtrafficpermissions: {
    type: 'MeshTrafficPermission',
    spec: {
      targetRef: { kind: 'MeshService', name: 'backend' },
      from: [{ targetRef: { kind: 'MeshSubset', tags: { env: 'dev' } }, default: { action: 'DENY' } }],
    },
  },
  meshaccesslogs: {
    type: 'MeshAccessLog',
    spec: {
      targetRef: { kind: 'Mesh' },
      to: [{ targetRef: { kind: 'Mesh' }, default: { backends: [{ file: { path: '/tmp/access.log' } }] } }],
    },
  },
  meshtraces: {
    type: 'MeshTrace',
    spec: {
      targetRef: { kind: 'Mesh' },
      default: { backends: [{ datadog: { url: 'http://127.0.0.1:8126', splitService: true } }] },
    },
  },
};

const body = (collection: string, name: string, mesh = 'default') => ({
  type: SAMPLES[collection].type,
  mesh,
  name,
  spec: SAMPLES[collection].spec,
});

describe('the targetRef kinds over HTTP (extra-policies.md)', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startTestPlane();
  });
  afterAll(async () => {
    await cp.close();
  });

  for (const collection of Object.keys(SAMPLES)) {
    it(`${collection}: PUT creates then updates, GET, list (per mesh and across meshes) and DELETE`, async () => {
      const url = `/meshes/default/${collection}/p-1`;
      const created = await cp.app.inject({ method: 'PUT', url, payload: body(collection, 'p-1') });
      expect(created.statusCode, created.body).toBe(201);
      expect(created.json()).toMatchObject(body(collection, 'p-1'));
      expect((await cp.app.inject({ method: 'PUT', url, payload: body(collection, 'p-1') })).statusCode).toBe(
        200,
      );

      const got = await cp.app.inject({ method: 'GET', url });
      expect(got.statusCode).toBe(200);
      expect(got.json()).toEqual({
        ...body(collection, 'p-1'),
        creationTime: expect.any(String),
        modificationTime: expect.any(String),
      });

      const list = (await cp.app.inject({ method: 'GET', url: `/meshes/default/${collection}` })).json();
      expect(list.total).toBe(1);
      expect(list.items[0]).toEqual(got.json());
      const everywhere = (await cp.app.inject({ method: 'GET', url: `/${collection}` })).json();
      expect(everywhere.items.map((i: { name: string }) => i.name)).toEqual(['p-1']);

      const insight = (await cp.app.inject({ method: 'GET', url: '/mesh-insights/default' })).json();
      expect(insight.policies[SAMPLES[collection].type]).toEqual({ total: 1 });

      expect((await cp.app.inject({ method: 'DELETE', url })).json()).toEqual({});
      expect((await cp.app.inject({ method: 'GET', url })).statusCode).toBe(404);
      expect((await cp.app.inject({ method: 'DELETE', url })).statusCode).toBe(404);
    });
  }

  it('lists the three kinds in the policy catalogue', async () => {
    const policies = (await cp.app.inject({ method: 'GET', url: '/policies' })).json().policies as Array<{
      name: string;
      path: string;
      displayName: string;
      readOnly: boolean;
    }>;
    const entries = policies.filter((p) => p.name.startsWith('Mesh') && p.path in SAMPLES);
    expect(entries.map((p) => [p.name, p.path, p.displayName, p.readOnly])).toEqual([
      ['MeshAccessLog', 'meshaccesslogs', 'Mesh Access Logs', false],
      ['MeshTrace', 'meshtraces', 'Mesh Traces', false],
      ['MeshTrafficPermission', 'meshtrafficpermissions', 'Mesh Traffic Permissions', false],
    ]);
  });

  it('400 on a targetRef kind that is not allowed where it is used, with the cause on its path', async () => {
    const bad = body('meshtrafficpermissions', 'bad');
    bad.spec = {
      targetRef: { kind: 'MeshHTTPRoute', name: 'r' },
      from: [{ targetRef: { kind: 'MeshGatewayRoute', name: 'r' }, default: { action: 'ALLOW' } }],
    };
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/meshtrafficpermissions/bad',
      payload: bad,
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().causes).toEqual([
      {
        field: 'spec.targetRef.kind',
        message:
          'must be one of "Mesh", "MeshSubset", "MeshService", "MeshServiceSubset", "MeshGatewayRoute"',
      },
      {
        field: 'spec.from[0].targetRef.kind',
        message: 'must be one of "Mesh", "MeshSubset", "MeshService", "MeshServiceSubset"',
      },
    ]);
    // MeshAccessLog takes only Mesh in `from` (Kuma 2.0).
    const log = body('meshaccesslogs', 'bad');
    log.spec = {
      targetRef: { kind: 'Mesh' },
      from: [{ targetRef: { kind: 'MeshService', name: 'web' }, default: { backends: [] } }],
    };
    const logRes = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/meshaccesslogs/bad',
      payload: log,
    });
    expect(logRes.statusCode).toBe(400);
    expect(logRes.json().causes).toEqual([
      { field: 'spec.from[0].targetRef.kind', message: 'must be "Mesh"' },
    ]);
    expect(
      (await cp.app.inject({ method: 'GET', url: '/meshes/default/meshaccesslogs/bad' })).statusCode,
    ).toBe(404);
  });

  it('400 on fields outside spec and on a missing spec', async () => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/meshaccesslogs/flat',
      payload: { type: 'MeshAccessLog', mesh: 'default', name: 'flat', ...SAMPLES.meshaccesslogs.spec },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().causes).toEqual([
      { field: 'spec', message: 'cannot be empty' },
      { field: 'targetRef', message: 'unknown field' },
      { field: 'to', message: 'unknown field' },
    ]);
  });

  it('takes YAML bodies, as kumactl writes them', async () => {
    const yaml = [
      'type: MeshTrafficPermission',
      'mesh: default',
      'name: from-yaml',
      'spec:',
      '  targetRef:',
      '    kind: Mesh',
      '  from:',
      '    - targetRef:',
      '        kind: Mesh',
      '      default:',
      '        action: ALLOW_WITH_SHADOW_DENY',
      '',
    ].join('\n');
    const res = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/meshtrafficpermissions/from-yaml',
      payload: yaml,
      headers: { 'content-type': 'application/yaml' },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().spec.from[0].default.action).toBe('ALLOW_WITH_SHADOW_DENY');
  });
});
