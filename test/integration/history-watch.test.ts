import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { b64, bearer, issueUserToken } from '../helpers/auth.js';
import { startListeningPlane } from '../helpers/control-plane.js';
import type { SseClient, SseEvent } from '../helpers/sse.js';
import { openSse } from '../helpers/sse.js';

const all = [{ match: { 'mesh.io/service': '*' } }];
const tp = (name: string, service: string) => ({
  type: 'TrafficPermission',
  mesh: 'default',
  name,
  sources: all,
  destinations: [{ match: { 'mesh.io/service': service } }],
});

const ids = (events: SseEvent[]): number[] =>
  events.filter((e) => e.id !== undefined).map((e) => Number(e.id));
const range = (from: number, to: number): number[] =>
  Array.from({ length: to - from + 1 }, (_, i) => from + i);

describe('watch: GET /_events with Accept: text/event-stream (decisions §8)', () => {
  let cp: ControlPlane;
  let port: number;
  const open: SseClient[] = [];
  const sse = async (path: string, headers: Record<string, string> = {}): Promise<SseClient> => {
    const c = await openSse(port, path, headers);
    open.push(c);
    return c;
  };
  const put = (name: string, service: string) =>
    cp.app.inject({
      method: 'PUT',
      url: `/meshes/default/traffic-permissions/${name}`,
      payload: tp(name, service),
    });

  beforeAll(async () => {
    cp = await startListeningPlane({ MESH_API_SERVER_WATCH_HEARTBEAT_INTERVAL: '100ms' });
    port = cp.ports.api;
  });
  afterAll(async () => {
    for (const c of open) c.close();
    await cp.close();
  });

  it('streams the backlog from R, then live entries; reconnecting with Last-Event-ID misses nothing', async () => {
    const start = cp.log.head();
    const w = await sse('/_events?fromRevision=1');
    expect(w.status).toBe(200);
    expect(w.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    expect(w.headers['x-mesh-revision']).toBe(String(start));
    await w.until((ev) => ids(ev).length >= start);
    expect(ids(w.events)).toEqual(range(1, start));
    // Live: writes made while connected arrive as they commit.
    for (let i = 0; i < 5; i++) await put(`live-${i}`, 'a');
    await w.until((ev) => ids(ev).at(-1) === start + 5);
    const first = w.entries()[start];
    expect(first.event).toBe('create');
    expect(JSON.parse(first.data as string)).toMatchObject({
      revision: start + 1,
      kind: 'TrafficPermission',
      mesh: 'default',
      name: 'live-0',
      operation: 'create',
      actor: { name: 'admin' },
    });
    // Disconnect; writes go on meanwhile (concurrently, in several batches); resume from the last id seen.
    const lastSeen = Number(w.entries().at(-1)?.id);
    w.close();
    const writes = Promise.all(Array.from({ length: 20 }, (_, i) => put(`gap-${i}`, 'b')));
    const again = await sse('/_events', { 'last-event-id': String(lastSeen) });
    await writes;
    for (let i = 0; i < 5; i++) await put(`after-${i}`, 'c');
    const end = cp.log.head();
    await again.until((ev) => ids(ev).at(-1) === end);
    expect(ids(again.events)).toEqual(range(lastSeen + 1, end));
    const all = [...ids(w.events), ...ids(again.events)];
    expect(all).toEqual(range(1, end));
    again.close();
  });

  it('without fromRevision or Last-Event-ID it streams only what comes next; filters apply', async () => {
    const w = await sse('/_events?kind=TrafficPermission&name=watched');
    const before = cp.log.head();
    await put('other', 'x');
    await put('watched', 'x');
    await cp.app.inject({ method: 'DELETE', url: '/meshes/default/traffic-permissions/watched' });
    await w.until((ev) => ids(ev).length === 2);
    expect(w.entries().map((e) => [Number(e.id), e.event])).toEqual([
      [before + 2, 'create'],
      [before + 3, 'delete'],
    ]);
    const bad = await sse('/_events?kind=Nope', {});
    expect(bad.status).toBe(400);
    const badId = await sse('/_events', { 'last-event-id': 'x' });
    expect(badId.status).toBe(400);
    w.close();
  });

  it('sends a comment heartbeat on the configured interval', async () => {
    const w = await sse('/_events');
    await w.until((ev) => ev.filter((e) => e.comment === 'heartbeat').length >= 3, 3000);
    expect(ids(w.events)).toEqual([]);
    w.close();
  });

  it('leaves secret entries out for callers who may not read secrets, in the backlog and live', async () => {
    const reader = await issueUserToken(cp.app, { name: 'rita', groups: ['mesh-system:reader'] });
    // Loopback is admin without a token; with a reader token the caller is that reader.
    const r = await sse('/_events?fromRevision=1', bearer(reader));
    const a = await sse('/_events?fromRevision=1');
    const secret = await cp.app.inject({
      method: 'PUT',
      url: '/meshes/default/secrets/watch-secret',
      payload: { type: 'Secret', mesh: 'default', name: 'watch-secret', data: b64('top secret') },
    });
    expect(secret.statusCode).toBe(201);
    await put('after-secret', 'z');
    const end = cp.log.head();
    await a.until((ev) => ids(ev).at(-1) === end);
    await r.until((ev) => ids(ev).at(-1) === end);
    const kinds = (c: SseClient) =>
      c.entries().map((e) => (JSON.parse(e.data as string) as { kind: string }).kind);
    expect(kinds(a)).toContain('Secret');
    expect(kinds(a)).toContain('GlobalSecret');
    expect(kinds(r).filter((k) => k === 'Secret' || k === 'GlobalSecret')).toEqual([]);
    expect(r.entries().length).toBe(a.entries().length - kinds(a).filter((k) => k.endsWith('Secret')).length);
    expect(r.events.map((e) => e.data ?? '').join('')).not.toContain(b64('top secret'));
    const refused = await sse('/_events?kind=Secret', bearer(reader));
    expect(refused.status).toBe(403);
    r.close();
    a.close();
  });

  it('fans out to hundreds of watchers from one listener; each gets every entry', async () => {
    const watchers = await Promise.all(
      Array.from({ length: 200 }, () => sse('/_events?kind=TrafficPermission')),
    );
    const from = cp.log.head();
    const t0 = performance.now();
    await Promise.all(Array.from({ length: 30 }, (_, i) => put(`fan-${i}`, 'f')));
    const writeMs = performance.now() - t0;
    const end = cp.log.head();
    await Promise.all(watchers.map((w) => w.until((ev) => ids(ev).at(-1) === end)));
    for (const w of watchers) expect(ids(w.events)).toEqual(range(from + 1, end));
    // Generous bound: writes are answered before any watcher is written to.
    expect(writeMs).toBeLessThan(5000);
    for (const w of watchers) w.close();
  }, 30_000);
});

describe('watch: a slow client is cut off with a final error event', () => {
  let cp: ControlPlane;
  let closed = false;
  beforeAll(async () => {
    // Heartbeats every 100 ms: a client that reads nothing while catching up is cut after 1 s.
    cp = await startListeningPlane({
      MESH_API_SERVER_WATCH_BUFFER_LIMIT: '65536',
      MESH_API_SERVER_WATCH_HEARTBEAT_INTERVAL: '100ms',
    });
  });
  afterAll(async () => {
    if (!closed) await cp.close();
  });

  it('stops sending, says why, and ends the stream instead of buffering without bound', async () => {
    // With the secrets' data (an admin asks for it): events of 800 KB each.
    const w = await openSse(cp.ports.api, '/_events?includeSecretData=true');
    w.pause();
    // ~24 MB of events: more than the socket buffers of the kernel hold, so the server's grows.
    const big = b64('x'.repeat(600_000));
    for (let i = 0; i < 30; i++) {
      const res = await cp.app.inject({
        method: 'PUT',
        url: `/global-secrets/big-${i}`,
        payload: { type: 'Secret', name: `big-${i}`, data: big },
      });
      expect(res.statusCode).toBe(201);
    }
    await new Promise((r) => setTimeout(r, 50));
    w.resume();
    await w.ended;
    const last = w.events.at(-1);
    expect(last?.event).toBe('error');
    const error = JSON.parse(last?.data as string) as { title: string; details: string };
    expect(error.title).toBe('Slow client');
    expect(error.details).toContain('more than 65536 bytes were waiting');
    expect(error.details).toMatch(/Last-Event-ID: \d+/);
    // It was cut well before the end of the writes: what it got is a prefix, and resumable.
    expect(ids(w.events).length).toBeLessThan(30);
    const resume = Number(/Last-Event-ID: (\d+)/.exec(error.details)?.[1]);
    expect(resume).toBe(ids(w.events).at(-1));
    w.close();
  }, 30_000);

  it('cuts off a client that reads nothing while catching up on a large backlog', async () => {
    const w = await openSse(cp.ports.api, '/_events?fromRevision=1&includeSecretData=true');
    w.pause();
    await new Promise((r) => setTimeout(r, 1500));
    w.resume();
    await w.ended;
    const last = w.events.at(-1);
    expect(last?.event).toBe('error');
    expect(JSON.parse(last?.data as string)).toMatchObject({
      title: 'Slow client',
      details: 'the client read nothing for 1000 ms while catching up',
    });
    expect(ids(w.events)).toEqual(range(1, ids(w.events).length));
    w.close();
  }, 30_000);

  it('ends open streams when the server shuts down', async () => {
    const w = await openSse(cp.ports.api, '/_events');
    await w.until((ev) => ev.some((e) => e.comment === 'heartbeat'));
    const t0 = Date.now();
    closed = true;
    await cp.close();
    await w.ended;
    expect(Date.now() - t0).toBeLessThan(2000);
  });
});
