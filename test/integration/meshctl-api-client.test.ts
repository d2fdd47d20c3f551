import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ApiError, ConnectionError, buildUrl, createApiClient } from '../../src/meshctl/api-client.js';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { startListeningPlane } from '../helpers/control-plane.js';

describe('meshctl ApiClient against a listening control plane', () => {
  let cp: ControlPlane;
  let address: string;
  beforeAll(async () => {
    cp = await startListeningPlane();
    address = `http://127.0.0.1:${cp.ports.api}`;
  });
  afterAll(() => cp.close());

  it('builds URLs with repeated and absent query values', () => {
    expect(buildUrl('http://h:1/', '/a', { tag: ['k:v', 'x:y'], size: 2, offset: undefined }).href).toBe(
      'http://h:1/a?tag=k%3Av&tag=x%3Ay&size=2',
    );
  });

  it('answers status, headers and the parsed body; PUTs JSON bodies', async () => {
    const api = createApiClient({ address, context: 't' });
    const put = await api.request('PUT', '/meshes/m1', { body: { type: 'Mesh', name: 'm1' } });
    expect(put.status).toBe(201);
    const get = await api.request<{ name: string }>('GET', '/meshes/m1');
    expect(get.body.name).toBe('m1');
    expect(get.headers['x-mesh-revision']).toMatch(/^\d+$/);
  });

  it('says application/json on a POST without a body, which the server refuses without it', async () => {
    const api = createApiClient({ address, context: 't' });
    const put = await api.request('PUT', '/meshes/m-revert', { body: { type: 'Mesh', name: 'm-revert' } });
    const revision = Number(put.headers['x-mesh-revision']);
    const res = await api.request('POST', '/meshes/m-revert/_revert', {
      query: { toRevision: revision - 1, dryRun: true },
    });
    expect(res.status).toBe(200);
  });

  it('throws the server’s title, details and causes as an ApiError', async () => {
    const api = createApiClient({ address, context: 't' });
    const err = await api
      .request('PUT', '/meshes/m1/dataplanes/d', {
        body: { type: 'Dataplane', mesh: 'm1', name: 'd', networking: { address: 'not an ip', inbound: [] } },
      })
      .catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ApiError);
    const e = err as ApiError;
    expect(e.status).toBe(400);
    expect(e.title).toBe('Resource is not valid');
    expect(e.details).toBe('the resource has invalid fields');
    expect(e.causes).toContainEqual({
      field: 'networking.address',
      message: 'must be a valid IP address or domain name',
    });
  });

  it('names the address and context when it cannot connect', async () => {
    const api = createApiClient({ address: 'http://127.0.0.1:1', context: 'nowhere' });
    const err = await api.request('GET', '/').catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConnectionError);
    expect((err as Error).message).toMatch(
      /^cannot reach the control plane at http:\/\/127\.0\.0\.1:1 \(context "nowhere"\): /,
    );
  });

  it('streams server-sent events from /_events as they come', async () => {
    const api = createApiClient({ address, context: 't' });
    const s = await api.stream('GET', '/_events', {
      accept: 'text/event-stream',
      query: { fromRevision: 1 },
    });
    expect(s.status).toBe(200);
    expect(s.headers['content-type']).toContain('text/event-stream');
    let text = '';
    for await (const chunk of s.body) {
      text += (chunk as Buffer).toString();
      if (text.includes('\n\n')) break;
    }
    s.close();
    expect(text).toMatch(/^id: 1$/m);
  });
});
