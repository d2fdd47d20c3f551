import type { LightMyRequestResponse } from 'fastify';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { writeRefusal } from '../../src/app/write-policy.js';
import type { ResourceDescriptor } from '../../src/resources/descriptor.js';
import { registry } from '../../src/resources/registry.js';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { samplesBySegment } from '../helpers/golden.js';
import { startListeningPlane, startTestPlane } from '../helpers/control-plane.js';
import { expectErrorShape } from '../helpers/error-shape.js';

type Method = 'GET' | 'PUT' | 'DELETE';

/** A name of exactly `length` characters, distinct per length. */
const nameOf = (length: number): string => `n${length}-`.padEnd(length, 'a');

/** Our error shape (decisions §4) and nothing else. */
function expectOurError(res: LightMyRequestResponse, status: number): Record<string, unknown> {
  expect(res.statusCode, res.body).toBe(status);
  expect(res.headers['content-type']).toMatch(/^application\/json/);
  expect(res.headers['x-request-id']).toEqual(expect.any(String));
  const body = res.json() as Record<string, unknown>;
  expectErrorShape(body);
  return body;
}

describe('names of 101 to 253 characters', () => {
  let cp: ControlPlane;
  const samples = samplesBySegment();
  const standalone = { mode: 'standalone', environment: 'universal', readOnly: false } as const;
  const writable = (): ResourceDescriptor[] =>
    registry.all.filter((d) => !d.singleton && writeRefusal(d, standalone) === undefined);
  const itemUrl = (d: ResourceDescriptor, name: string, mesh = 'default'): string =>
    d.scope === 'mesh' ? `/meshes/${mesh}/${d.path}/${name}` : `/${d.path}/${name}`;
  const call = (method: Method, url: string, payload?: Record<string, unknown>) =>
    cp.app.inject({ method, url, ...(payload ? { payload } : {}) });

  beforeAll(async () => {
    cp = await startTestPlane();
  });
  afterAll(async () => {
    await cp?.close();
  });

  it('writes, reads, lists the history of and deletes every kind at 101, 200 and 253 characters', async () => {
    const kinds = writable();
    expect(kinds.length).toBeGreaterThan(15);
    for (const d of kinds) {
      const sample = samples.get(d.path);
      expect(sample, `a golden PUT of ${d.kind}`).toBeDefined();
      for (const length of [101, 200, 253]) {
        const name = nameOf(length);
        const url = itemUrl(d, name);
        const put = await call('PUT', url, { ...sample, name });
        expect(put.statusCode, `PUT ${d.kind} ${length}: ${put.body}`).toBe(201);
        const got = await call('GET', url);
        expect(got.statusCode, `GET ${d.kind} ${length}`).toBe(200);
        expect(got.json().name).toBe(name);
        expect((await call('GET', `${url}/_history`)).statusCode, `history ${d.kind}`).toBe(200);
        const del = await call('DELETE', url);
        expect(del.statusCode, `DELETE ${d.kind} ${length}: ${del.body}`).toBe(200);
        expectOurError(await call('GET', url), 404);
      }
    }
  });

  it('refuses a 254-character name: PUT is 400 with a cause on name, GET and DELETE are 404', async () => {
    const name = nameOf(254);
    for (const d of writable()) {
      const url = itemUrl(d, name);
      const put = expectOurError(await call('PUT', url, { ...samples.get(d.path), name }), 400);
      expect(put.causes, d.kind).toContainEqual({
        field: 'name',
        message: 'must be 1 to 253 characters of [0-9a-z._-], starting with a letter or digit',
      });
      expectOurError(await call('GET', url), 404);
      expectOurError(await call('DELETE', url), 404);
      expectOurError(await call('GET', `${url}/_history`), 404);
    }
  });

  it('serves a mesh of 253 characters, what is in it, and the defaults named after it', async () => {
    const mesh = nameOf(253);
    expect((await call('PUT', `/meshes/${mesh}`, { type: 'Mesh', name: mesh })).statusCode).toBe(201);
    // Decisions §3 names the defaults after the mesh, so they are longer than 253 characters.
    const def = await call('GET', `/meshes/${mesh}/circuit-breakers/circuit-breaker-all-${mesh}`);
    expect(def.statusCode, def.body).toBe(200);
    const tp = registry.get('TrafficPermission');
    const name = nameOf(253);
    const url = itemUrl(tp, name, mesh);
    expect((await call('PUT', url, { ...samples.get(tp.path), mesh, name })).statusCode).toBe(201);
    expect((await call('GET', url)).json()).toMatchObject({ mesh, name });
    expect((await call('GET', `/meshes/${mesh}/_history`)).statusCode).toBe(200);
    expect((await call('DELETE', `/meshes/${mesh}`)).statusCode).toBe(200);
    expectOurError(await call('GET', url), 404);
  });

  it('refuses a mesh name of 254 characters in the URL of a mesh-scoped PUT (a secret may precede its mesh)', async () => {
    const mesh = nameOf(254);
    const res = await call('PUT', `/meshes/${mesh}/secrets/s`, {
      type: 'Secret',
      mesh,
      name: 's',
      data: 'YQ==',
    });
    const body = expectOurError(res, 400);
    expect(body.causes).toContainEqual({
      field: 'mesh',
      message: 'must be 1 to 253 characters of [0-9a-z._-], starting with a letter or digit',
    });
  });

  it('answers bad percent-encoding in any resource URL with 400 in our error shape', async () => {
    for (const d of writable()) {
      for (const bad of ['%', '%C0%AF', '%E0%A4%A', '%zz']) {
        for (const method of ['GET', 'PUT', 'DELETE'] as const) {
          const res = await call(
            method,
            itemUrl(d, bad),
            method === 'PUT' ? { type: d.wireType } : undefined,
          );
          const body = expectOurError(res, 400);
          expect(body.title).toBe('Bad request');
          expect(body.details).toContain('percent-encoded');
        }
      }
    }
    expectOurError(await call('GET', '/meshes/%/traffic-permissions'), 400);
    expectOurError(await call('GET', '/meshes/default/dataplanes/a%C0%AF/_history'), 400);
  });

  it('answers a path segment longer than any request line in our error shape (414)', async () => {
    // Only app.inject can send it: on a socket the request line counts toward maxHeaderSize (431).
    const res = await call('GET', `/meshes/default/dataplanes/${'a'.repeat(20_000)}`);
    expect(expectOurError(res, 414).title).toBe('URI too long');
  });
});

describe('a URL longer than the header limit, on a socket', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startListeningPlane({ MESH_API_SERVER_MAX_HEADER_SIZE: '4096' });
  });
  afterAll(async () => {
    await cp?.close();
  });

  it('is 431 in our error shape', async () => {
    const res = await fetch(`http://127.0.0.1:${cp.ports.api}/meshes/default/dataplanes/${'a'.repeat(8000)}`);
    expect(res.status).toBe(431);
    expect(await res.json()).toEqual({
      title: 'Request header fields too large',
      details: 'the request headers are larger than 4096 bytes (apiServer.maxHeaderSize)',
    });
  });
});
