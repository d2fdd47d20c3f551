import { createHash } from 'node:crypto';

import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { REMOTE, b64, bearer, issueUserToken } from '../helpers/auth.js';
import { startListeningPlane } from '../helpers/control-plane.js';
import type { SseClient } from '../helpers/sse.js';
import { openSse } from '../helpers/sse.js';

// The log keeps every version of every secret, private keys included. What reads the log back
// (history, the audit log, watch) shows a secret's data as its digest unless an admin asks for it.

interface Item {
  revision: number;
  operation: string;
  kind?: string;
  name?: string;
  resource: Record<string, unknown>;
}
interface List {
  total: number;
  items: Item[];
}

/** The redacted form of secret data: the sha256 of the decoded bytes. */
const digest = (base64: string) => ({
  sha256: createHash('sha256').update(Buffer.from(base64, 'base64')).digest('hex'),
});

const V1 = b64('first password');
const V2 = b64('second password');
// "-----BEGIN" of a PEM, base64: in the data of every signing key secret.
const PEM_START = b64('-----BEGIN').slice(0, 12);

describe('secret data in history, the audit log and watch', () => {
  let cp: ControlPlane;
  let reader: string;
  let meshAdmin: string;
  const open: SseClient[] = [];
  const secretRev: Record<string, number> = {};

  const inject = (
    method: 'GET' | 'PUT' | 'DELETE',
    url: string,
    opts: { body?: unknown; token?: string } = {},
  ) =>
    cp.app.inject({
      method,
      url,
      payload: opts.body as Record<string, unknown> | undefined,
      ...(opts.token === undefined ? {} : { headers: bearer(opts.token), remoteAddress: REMOTE }),
    });
  const putSecret = async (name: string, data: string): Promise<number> => {
    const res = await inject('PUT', `/meshes/default/secrets/${name}`, {
      body: { type: 'Secret', mesh: 'default', name, data },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return Number(JSON.parse(String(res.headers.etag)));
  };

  beforeAll(async () => {
    cp = await startListeningPlane({
      MESH_API_SERVER_WATCH_HEARTBEAT_INTERVAL: '100ms',
      MESH_API_SERVER_AUTHZ_GROUPS: JSON.stringify({
        'team-default': { role: 'admin', meshes: ['default'] },
      }),
    });
    reader = await issueUserToken(cp.app, { name: 'rita', groups: ['mesh-system:reader'] });
    meshAdmin = await issueUserToken(cp.app, { name: 'ada', groups: ['team-default'] });
    secretRev.v1 = await putSecret('db-password', V1);
    secretRev.v2 = await putSecret('db-password', V2);
    secretRev.back = await putSecret('db-password', V1);
    const del = await inject('DELETE', '/meshes/default/secrets/db-password');
    expect(del.statusCode).toBe(200);
    secretRev.deleted = Number(JSON.parse(String(del.headers.etag)));
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await cp.close();
  });

  describe('GET <secret URL>/_history', () => {
    it('shows each version of the data as its sha256, so that versions can be told apart', async () => {
      const res = await inject('GET', '/meshes/default/secrets/db-password/_history');
      expect(res.statusCode).toBe(200);
      const { items } = res.json() as List;
      expect(items.map((i) => [i.operation, i.resource.data])).toEqual([
        ['create', digest(V1)],
        ['update', digest(V2)],
        ['update', digest(V1)],
        ['delete', digest(V1)],
      ]);
      expect(items[0].resource).toMatchObject({ type: 'Secret', mesh: 'default', name: 'db-password' });
      expect(res.body).not.toContain(V1);
      expect(res.body).not.toContain(V2);
    });

    it('redacts the private keys of the signing key secrets', async () => {
      for (const url of [
        '/global-secrets/user-token-signing-key-1/_history',
        '/meshes/default/secrets/dataplane-token-signing-key-default-1/_history',
      ]) {
        const res = await inject('GET', url);
        expect(res.statusCode, url).toBe(200);
        expect(res.body, url).not.toContain(PEM_START);
        expect((res.json() as List).items[0].resource.data).toEqual({
          sha256: expect.stringMatching(/^[0-9a-f]{64}$/),
        });
      }
    });

    it('shows the data itself to an admin who asks with ?includeSecretData=true', async () => {
      const res = await inject('GET', '/meshes/default/secrets/db-password/_history?includeSecretData=true');
      expect(res.statusCode).toBe(200);
      expect((res.json() as List).items.map((i) => i.resource.data)).toEqual([V1, V2, V1, V1]);
      const key = await inject(
        'GET',
        '/global-secrets/user-token-signing-key-1/_history?includeSecretData=true',
      );
      expect(key.body).toContain(PEM_START);
    });

    it('refuses a bad value of includeSecretData with 400', async () => {
      const res = await inject('GET', '/meshes/default/secrets/db-password/_history?includeSecretData=yes');
      expect(res.statusCode).toBe(400);
      expect(res.json()).toEqual({
        title: 'Invalid query parameters',
        details: 'bad audit log parameters',
        causes: [{ field: 'includeSecretData', message: 'must be true or false' }],
      });
    });

    it('leaves other kinds as they are', async () => {
      const res = await inject('GET', '/meshes/default/_history');
      expect((res.json() as List).items[0].resource).toMatchObject({ type: 'Mesh', name: 'default' });
    });
  });

  describe('GET /_events', () => {
    it('redacts secret entries for admins too, in a page of the whole log and of one resource', async () => {
      for (const url of [
        '/_events?size=1000',
        '/_events?kind=Secret&mesh=default&name=db-password',
        '/_events?kind=GlobalSecret',
      ]) {
        const res = await inject('GET', url);
        expect(res.statusCode, url).toBe(200);
        expect(res.body, url).not.toContain(V1);
        expect(res.body, url).not.toContain(PEM_START);
        const secrets = (res.json() as List).items.filter((i) => i.kind?.endsWith('Secret'));
        expect(secrets.length, url).toBeGreaterThan(0);
        for (const item of secrets) expect(item.resource.data, url).toEqual({ sha256: expect.any(String) });
      }
    });

    it('includes the data for an admin with ?includeSecretData=true', async () => {
      const res = await inject(
        'GET',
        '/_events?kind=Secret&mesh=default&name=db-password&includeSecretData=true',
      );
      expect((res.json() as List).items.map((i) => i.resource.data)).toEqual([V1, V2, V1, V1]);
    });

    it('refuses ?includeSecretData=true to callers who may not read secrets (403), and shows them no secret entries', async () => {
      const refused = await inject('GET', '/_events?includeSecretData=true', { token: reader });
      expect(refused.statusCode).toBe(403);
      expect(refused.json()).toEqual({
        title: 'Forbidden',
        details:
          'user "rita" (groups: mesh-system:reader) may not read secret data: includeSecretData=true ' +
          'needs the right to read secrets (the admin role); without it each secret shows the sha256 of its data',
      });
      const anonymous = await cp.app.inject({
        url: '/_events?includeSecretData=true',
        remoteAddress: REMOTE,
      });
      expect(anonymous.statusCode).toBe(403);
      const page = await inject('GET', '/_events?size=1000', { token: reader });
      expect((page.json() as List).items.filter((i) => i.kind?.endsWith('Secret'))).toEqual([]);
    });

    it('lets any reader pass ?includeSecretData=true where the answer holds no secret: a kind without data', async () => {
      const events = await inject('GET', '/_events?kind=Mesh&includeSecretData=true', { token: reader });
      expect(events.statusCode).toBe(200);
      const history = await inject('GET', '/meshes/default/_history?includeSecretData=true', {
        token: reader,
      });
      expect(history.statusCode).toBe(200);
    });

    it("lets an admin of one mesh have that mesh's secret data, and nothing of another", async () => {
      const own = await inject('GET', '/_events?mesh=default&kind=Secret&includeSecretData=true', {
        token: meshAdmin,
      });
      expect(own.statusCode).toBe(200);
      expect(own.body).toContain(V2);
      const all = await inject('GET', '/_events?includeSecretData=true', { token: meshAdmin });
      expect(all.statusCode).toBe(403);
    });
  });

  describe('watch (Accept: text/event-stream)', () => {
    const sse = async (path: string, headers: Record<string, string> = {}): Promise<SseClient> => {
      const c = await openSse(cp.ports.api, path, headers);
      open.push(c);
      return c;
    };
    const dataOf = (c: SseClient, revision: number): unknown =>
      (JSON.parse(c.entries().find((e) => Number(e.id) === revision)?.data as string) as Item).resource.data;

    it('streams secret entries redacted, in the backlog and live; with ?includeSecretData=true as stored', async () => {
      const redacted = await sse(`/_events?fromRevision=${secretRev.v1}`);
      const full = await sse(`/_events?fromRevision=${secretRev.v1}&includeSecretData=true`);
      const live = await putSecret('live-secret', V2);
      for (const c of [redacted, full]) await c.until((ev) => ev.some((e) => Number(e.id) === live));
      expect(dataOf(redacted, secretRev.v2)).toEqual(digest(V2));
      expect(dataOf(redacted, live)).toEqual(digest(V2));
      expect(redacted.events.map((e) => e.data ?? '').join('')).not.toContain(V2);
      expect(dataOf(full, secretRev.v2)).toBe(V2);
      expect(dataOf(full, live)).toBe(V2);
    });

    it('refuses ?includeSecretData=true to a reader', async () => {
      const refused = await sse('/_events?includeSecretData=true', bearer(reader));
      expect(refused.status).toBe(403);
    });
  });

  describe('?revision=R reads of a secret', () => {
    it('are reads of the secret: its data to those who may read secrets, 403 to the others', async () => {
      const url = `/meshes/default/secrets/db-password?revision=${secretRev.v2}`;
      const admin = await inject('GET', url);
      expect(admin.statusCode).toBe(200);
      expect((admin.json() as { data: string }).data).toBe(V2);
      for (const list of [
        `/meshes/default/secrets?revision=${secretRev.v2}`,
        `/secrets?revision=${secretRev.v2}`,
      ]) {
        expect((await inject('GET', list)).body, list).toContain(V2);
        expect((await inject('GET', list, { token: reader })).statusCode, list).toBe(403);
      }
      expect((await inject('GET', url, { token: reader })).statusCode).toBe(403);
      expect((await cp.app.inject({ url, remoteAddress: REMOTE })).statusCode).toBe(403);
      const key = await inject('GET', `/global-secrets/user-token-signing-key-1?revision=${secretRev.v1}`, {
        token: meshAdmin,
      });
      expect(key.statusCode).toBe(403);
    });
  });
});
