import { request } from 'node:http';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startListeningPlane } from '../helpers/control-plane.js';

const N = 1200;
const name = (i: number): string => `dp-${String(i).padStart(4, '0')}`;
const bulk = Object.fromEntries(Array.from({ length: 20 }, (_, k) => [`bulk-${k}`, 'x'.repeat(190)]));

/**
 * One GET on its own connection (no keep-alive), not read for `waitMs`: a body larger than the
 * socket buffers is then still being written while the server answers the other requests.
 */
function slowGet(port: number, path: string, waitMs = 300): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request({ host: '127.0.0.1', port, path, agent: false }, (res) => {
      const chunks: Buffer[] = [];
      res.pause();
      setTimeout(() => res.resume(), waitMs);
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
      res.on('error', reject);
    });
    req.on('error', reject);
    req.end();
  });
}

describe('list pages over a real port: page bodies reuse memory only after their response finished', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startListeningPlane({ MESH_DEFAULTS_SKIP_DEFAULT_POLICIES: 'true' });
    for (let i = 0; i < N; i += 50) {
      const puts = await Promise.all(
        Array.from({ length: 50 }, (_, j) =>
          cp.app.inject({
            method: 'PUT',
            url: `/meshes/default/dataplanes/${name(i + j)}`,
            payload: {
              type: 'Dataplane',
              mesh: 'default',
              name: name(i + j),
              networking: {
                address: '10.1.0.1',
                // ~4 KB each: a page of 100 is well above the pooled minimum and the socket buffers.
                inbound: [{ port: 1000 + i + j, tags: { 'mesh.io/service': `svc-${i + j}`, ...bulk } }],
              },
            },
          }),
        ),
      );
      expect(puts.map((r) => r.statusCode)).toEqual(puts.map(() => 201));
    }
  }, 30_000);
  afterAll(() => cp.close());

  it('every one of 24 concurrent pages, read late on their own connections, holds its own items', async () => {
    const offsets = Array.from({ length: 24 }, (_, k) => (k % 3) * 100);
    const bodies = await Promise.all(
      offsets.map((o) => slowGet(cp.ports.api, `/meshes/default/dataplanes?offset=${o}&size=1000`)),
    );
    bodies.forEach((body, k) => {
      const page = JSON.parse(body) as { total: number; items: Array<{ name: string }> };
      expect(page.total).toBe(N);
      expect(page.items.map((it) => it.name)).toEqual(
        Array.from({ length: 1000 }, (_, j) => name(offsets[k] + j)),
      );
    });
    expect(Buffer.byteLength(bodies[0])).toBeGreaterThan(4 * 1024 * 1024);
  }, 30_000);

  it('a client that goes away mid-body leaves later pages whole', async () => {
    await new Promise<void>((resolve) => {
      const req = request(
        { host: '127.0.0.1', port: cp.ports.api, path: '/meshes/default/dataplanes?size=100', agent: false },
        (res) => {
          res.once('data', () => {
            req.destroy();
            resolve();
          });
        },
      );
      req.on('error', () => resolve());
      req.end();
    });
    const body = await slowGet(cp.ports.api, '/meshes/default/dataplanes?offset=200&size=100', 0);
    expect((JSON.parse(body) as { items: Array<{ name: string }> }).items[0].name).toBe(name(200));
  });
});
