import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { generateSigningKey } from '../../src/tokens/signing-key.js';
import { b64, bearer, decodeJwt, issueUserToken } from '../helpers/auth.js';
import { startListeningPlane } from '../helpers/control-plane.js';
import type { SseClient, SseEvent } from '../helpers/sse.js';
import { openSse } from '../helpers/sse.js';

const ids = (events: SseEvent[]): number[] =>
  events.filter((e) => e.id !== undefined).map((e) => Number(e.id));
const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);
const lastError = (c: SseClient): { title: string; details: string } => {
  const last = c.events.at(-1);
  expect(last?.event).toBe('error');
  return JSON.parse(last?.data as string) as { title: string; details: string };
};
const jti = (token: string): string => String(decodeJwt(token).payload.jti);
/** Resolves when the server ends the stream; fails after `ms`. */
const ends = (c: SseClient, ms = 5000): Promise<void> =>
  Promise.race([
    c.ended,
    new Promise<void>((_, fail) =>
      setTimeout(() => fail(new Error(`the stream did not end in ${ms} ms`)), ms),
    ),
  ]);

describe('watch: a stream opened with a user token ends with the token', () => {
  let cp: ControlPlane;
  let port: number;
  const open: SseClient[] = [];
  const sse = async (path: string, headers: Record<string, string> = {}): Promise<SseClient> => {
    const c = await openSse(port, path, headers);
    expect(c.status).toBe(200);
    open.push(c);
    return c;
  };
  const put = async (name: string) => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: `/meshes/default/traffic-permissions/${name}`,
      payload: {
        type: 'TrafficPermission',
        mesh: 'default',
        name,
        sources: [{ match: { 'mesh.io/service': '*' } }],
        destinations: [{ match: { 'mesh.io/service': name } }],
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    return Number(res.headers['x-mesh-revision']);
  };
  const putGlobalSecret = async (name: string, data: string) => {
    const res = await cp.app.inject({
      method: 'PUT',
      url: `/global-secrets/${name}`,
      payload: { type: 'Secret', name, data },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return Number(res.headers['x-mesh-revision']);
  };
  const admin = () => issueUserToken(cp.app, { name: 'ann', groups: ['mesh-system:admin'] });

  beforeAll(async () => {
    cp = await startListeningPlane({ MESH_API_SERVER_WATCH_HEARTBEAT_INTERVAL: '100ms' });
    port = cp.ports.api;
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await cp.close();
  });

  it('ends at the revocation, before any later entry; other tokens and loopback streams go on, missing nothing', async () => {
    const revoked = await admin();
    const kept = await admin();
    const start = cp.log.head();
    const gone = await sse('/_events', bearer(revoked));
    // From revision 1: the backlog holds the signing keys' own entries, which end nothing.
    const other = await sse('/_events?fromRevision=1', bearer(kept));
    const local = await sse('/_events');
    const before = await put('before-revocation');
    await gone.until((ev) => ids(ev).includes(before));
    const revocation = await putGlobalSecret('user-token-revocations', b64(jti(revoked)));
    const after = await put('after-revocation');

    await ends(gone);
    expect(lastError(gone)).toEqual({
      title: 'Token revoked',
      details: `the token ${jti(revoked)} has been revoked`,
    });
    expect(ids(gone.events)).toEqual([before]);
    expect(revocation).toBe(before + 1);

    await other.until((ev) => ids(ev).at(-1) === after);
    await local.until((ev) => ids(ev).at(-1) === after);
    expect(ids(other.events)).toEqual(range(1, after));
    expect(ids(local.events)).toEqual(range(start + 1, after));
    expect(other.events.filter((e) => e.event === 'error')).toEqual([]);
    // The revoked token is refused from now on; the kept one still streams.
    const again = await openSse(port, '/_events', bearer(revoked));
    expect(again.status).toBe(401);
    const last = await put('later');
    await other.until((ev) => ids(ev).at(-1) === last);
  });

  it('ends a reader stream too, though the reader never sees the revocation entry', async () => {
    const reader = await issueUserToken(cp.app, { name: 'rita', groups: ['mesh-system:reader'] });
    const r = await sse('/_events?kind=TrafficPermission', bearer(reader));
    const before = await put('reader-before');
    await r.until((ev) => ids(ev).includes(before));
    const list = Buffer.from(
      String((await cp.app.inject({ url: '/global-secrets/user-token-revocations' })).json().data),
      'base64',
    ).toString();
    await putGlobalSecret('user-token-revocations', b64(`${list},${jti(reader)}`));
    await put('reader-after');
    await ends(r);
    expect(lastError(r)).toEqual({
      title: 'Token revoked',
      details: `the token ${jti(reader)} has been revoked`,
    });
    expect(ids(r.events)).toEqual([before]);
  });

  it('ends at the expiry of a short-lived token, with nothing else happening', async () => {
    const issued = await issueUserToken(cp.app, {
      name: 'brief',
      groups: ['mesh-system:reader'],
      validFor: '2s',
    });
    const exp = Number(decodeJwt(issued).payload.exp) * 1000;
    const w = await sse('/_events', bearer(issued));
    await w.until((ev) => ev.some((e) => e.comment === 'heartbeat'));
    await ends(w);
    expect(Date.now()).toBeGreaterThanOrEqual(exp);
    expect(Date.now()).toBeLessThan(exp + 2500);
    expect(lastError(w)).toEqual({
      title: 'Token expired',
      details: `the token ${jti(issued)} expired at ${new Date(exp).toISOString()}`,
    });
  }, 10_000);

  it('keeps a stream of a 10-year token open without a timer node would cut to 1 ms', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error) => warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const long = await issueUserToken(cp.app, { name: 'lasting', validFor: '87600h' });
      const w = await sse('/_events', bearer(long));
      const rev = await put('long-lived');
      await w.until((ev) => ids(ev).includes(rev));
      await new Promise((r) => setTimeout(r, 100));
      expect(w.events.filter((e) => e.event === 'error')).toEqual([]);
      expect(warnings).not.toContain('TimeoutOverflowWarning');
      w.close();
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('ends when the signing key of its token is removed (rotated out); tokens of the new key go on', async () => {
    const old = await admin();
    const w = await sse('/_events', bearer(old));
    await putGlobalSecret('user-token-signing-key-2', await generateSigningKey());
    const fresh = await admin();
    expect(decodeJwt(fresh).header.kid).toBe('2');
    const f = await sse('/_events', bearer(fresh));
    // A new key alone ends nothing: the old token still verifies.
    const mid = await put('between-keys');
    await w.until((ev) => ids(ev).includes(mid));
    const removed = await cp.app.inject({
      method: 'DELETE',
      url: '/global-secrets/user-token-signing-key-1',
    });
    expect(removed.statusCode).toBe(200);
    const after = await put('after-rotation');
    await ends(w);
    expect(lastError(w)).toEqual({
      title: 'Token no longer valid',
      details: 'the token was signed with user-token-signing-key-1, which no longer exists',
    });
    expect(ids(w.events).at(-1)).toBeLessThan(after);
    await f.until((ev) => ids(ev).at(-1) === after);
  });
});
