import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { createProxyInsights } from '../../src/xds/proxy-insights.js';
import { startListeningPlane } from '../helpers/control-plane.js';
import { openSse } from '../helpers/sse.js';
import { putDataplane } from '../helpers/xds.js';

// `GET /_status/events`: proxies going online and offline as server-sent events (runtime status is
// not in the audit log, so `/_events` cannot carry it), on a real port.

const statuses = (events: Array<{ event?: string; data?: string }>) =>
  events
    .filter((e) => e.event === 'status')
    .map((e) => JSON.parse(e.data as string) as Record<string, unknown>);

describe('GET /_status/events', () => {
  let cp: ControlPlane;
  beforeAll(async () => {
    cp = await startListeningPlane();
    await putDataplane(cp.app, 'default', 'web-1', {
      address: '10.0.0.1',
      inbound: [{ port: 8080, tags: { 'mesh.io/service': 'web' } }],
    });
  });
  afterAll(() => cp.close());

  it('sends a proxy going online and offline once each, not its counter updates', async () => {
    const sse = await openSse(cp.ports.api, '/_status/events');
    expect(sse.status).toBe(200);
    expect(sse.headers['content-type']).toBe('text/event-stream; charset=utf-8');
    await sse.until((events) => events.length > 0);
    // The insights an ADS stream keeps (src/xds/proxy-insights.ts), publishing every 10 ms.
    const insights = createProxyInsights({ status: cp.status, now: () => new Date(), publishMs: 10 });
    const stream = insights.open('default', 'web-1', { id: 's-1', controlPlaneInstanceId: 'cp-1' });
    await sse.until((events) => statuses(events).length === 1);
    expect(statuses(sse.events)).toEqual([{ mesh: 'default', name: 'web-1', online: true }]);
    for (let i = 0; i < 5; i += 1) {
      stream.sent('lds');
      stream.acked('lds');
    }
    stream.close();
    await sse.until((events) => statuses(events).length === 2);
    expect(statuses(sse.events)).toEqual([
      { mesh: 'default', name: 'web-1', online: true },
      { mesh: 'default', name: 'web-1', online: false },
    ]);
    insights.close();
    sse.close();
  });

  it('is a stream only: a plain GET is told to ask for one', async () => {
    const res = await cp.app.inject({ method: 'GET', url: '/_status/events' });
    expect(res.statusCode).toBe(400);
    expect(res.json().details).toContain('Accept: text/event-stream');
  });

  it('is refused to a caller who may not read proxies', async () => {
    const other = await startListeningPlane({ MESH_API_SERVER_AUTHZ_ANONYMOUS: 'none' });
    try {
      const res = await other.app.inject({
        method: 'GET',
        url: '/_status/events',
        headers: { accept: 'text/event-stream' },
        remoteAddress: '10.20.30.40',
      });
      expect(res.statusCode).toBe(403);
    } finally {
      await other.close();
    }
  });

  it('ends its streams when the server shuts down', async () => {
    const other = await startListeningPlane();
    const sse = await openSse(other.ports.api, '/_status/events');
    await sse.until((events) => events.length > 0);
    await other.close();
    await sse.ended;
  });
});
