import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startListeningPlane } from '../helpers/control-plane.js';

// The diagnostics port (config `diagnostics.port`, 5680): liveness and readiness for probes.
describe('diagnostics port', () => {
  let cp: ControlPlane;
  const get = async (path: string) => {
    const res = await fetch(`http://127.0.0.1:${cp.ports.diagnostics}${path}`);
    return { status: res.status, body: (await res.json()) as Record<string, unknown> };
  };

  beforeAll(async () => {
    cp = await startListeningPlane();
  });
  afterAll(async () => {
    await cp.close();
  });

  it('listens on its own port', () => {
    expect(cp.ports.diagnostics).toBeGreaterThan(0);
    expect(cp.ports.diagnostics).not.toBe(cp.ports.api);
  });

  it('answers /healthy', async () => {
    expect(await get('/healthy')).toEqual({ status: 200, body: { status: 'ok' } });
  });

  it('answers /ready with the revision the projections have applied, following writes', async () => {
    const before = await get('/ready');
    expect(before).toEqual({ status: 200, body: { status: 'ready', revision: cp.log.head() } });
    const put = await fetch(`http://127.0.0.1:${cp.ports.api}/meshes/diag`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ type: 'Mesh', name: 'diag' }),
    });
    expect(put.status).toBe(201);
    const after = await get('/ready');
    // A new mesh also gets its default policies: the head is at or past the mesh's own revision.
    expect(after.body.revision).toBe(cp.log.head());
    expect(after.body.revision).toBeGreaterThanOrEqual(Number(put.headers.get('x-mesh-revision')));
    expect(after.body.revision).toBeGreaterThan(before.body.revision as number);
  });

  it('serves nothing else', async () => {
    expect((await fetch(`http://127.0.0.1:${cp.ports.diagnostics}/meshes`)).status).toBe(404);
  });
});
