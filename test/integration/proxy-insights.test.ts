import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { ControlPlane } from '../../src/runtime/control-plane.js';
import { createProxyInsights } from '../../src/xds/proxy-insights.js';
import { startTestPlane } from '../helpers/control-plane.js';
import { eventually } from '../helpers/eventually.js';
import { putDataplane } from '../helpers/xds.js';

const SVC = 'mesh.io/service';

describe('proxy insights from ADS streams (decisions §11)', () => {
  let cp: ControlPlane;
  let clock = Date.parse('2026-11-26T10:00:00.000Z');
  const now = () => new Date(clock);
  const get = async (url: string) => (await cp.app.inject({ method: 'GET', url })).json();

  beforeAll(async () => {
    cp = await startTestPlane();
    await putDataplane(cp.app, 'default', 'web-1', {
      address: '10.0.0.1',
      inbound: [{ port: 8080, tags: { [SVC]: 'web' } }],
    });
  });
  afterAll(async () => {
    await cp.close();
  });

  it('a stream makes the proxy online at once, counts per type, and offline with a disconnectTime when it ends', async () => {
    const insights = createProxyInsights({ status: cp.status, now, publishMs: 10 });
    expect((await get('/meshes/default/dataplanes+insights/web-1')).dataplaneInsight).toEqual({
      subscriptions: [],
    });
    const stream = insights.open('default', 'web-1', {
      id: 's-1',
      controlPlaneInstanceId: 'cp-1',
      userAgent: { name: 'grpc-node-js', version: '1.14.7' },
    });
    let overview = await get('/meshes/default/dataplanes+insights/web-1');
    expect(overview.dataplaneInsight.subscriptions).toHaveLength(1);
    expect(overview.dataplaneInsight.subscriptions[0]).toMatchObject({
      id: 's-1',
      controlPlaneInstanceId: 'cp-1',
      connectTime: '2026-11-26T10:00:00.000Z',
      version: { proxy: { version: '1.14.7', build: 'grpc-node-js' } },
    });
    expect((await get('/meshes/default/dataplanes+insights?status=online')).total).toBe(1);
    expect((await get('/mesh-insights/default')).dataplanes).toMatchObject({ total: 1, online: 1 });

    clock += 1000;
    stream.sent('lds');
    stream.acked('lds');
    stream.sent('cds');
    stream.rejected('cds');
    // The counters are published every publishMs (10 ms): wait for the publication of all four.
    overview = await eventually(
      async () => {
        const o = await get('/meshes/default/dataplanes+insights/web-1');
        const total = o.dataplaneInsight.subscriptions[0].status.total;
        return total.responsesSent === '2' && total.responsesRejected === '1' ? o : undefined;
      },
      5000,
      'the counts of lds and cds',
    );
    expect(overview.dataplaneInsight.subscriptions[0].status).toEqual({
      lastUpdateTime: '2026-11-26T10:00:01.000Z',
      total: { responsesSent: '2', responsesAcknowledged: '1', responsesRejected: '1' },
      cds: { responsesSent: '1', responsesAcknowledged: '0', responsesRejected: '1' },
      eds: { responsesSent: '0', responsesAcknowledged: '0', responsesRejected: '0' },
      lds: { responsesSent: '1', responsesAcknowledged: '1', responsesRejected: '0' },
      rds: { responsesSent: '0', responsesAcknowledged: '0', responsesRejected: '0' },
    });

    clock += 1000;
    stream.close();
    overview = await get('/meshes/default/dataplanes+insights/web-1');
    expect(overview.dataplaneInsight.subscriptions[0].disconnectTime).toBe('2026-11-26T10:00:02.000Z');
    expect((await get('/meshes/default/dataplanes+insights?status=offline')).total).toBe(1);
    expect((await get('/mesh-insights/default')).dataplanes).toMatchObject({
      total: 1,
      online: 0,
      offline: 1,
    });

    // Reconnects: the last two subscriptions are kept.
    for (const id of ['s-2', 's-3'])
      insights.open('default', 'web-1', { id, controlPlaneInstanceId: 'cp-1' });
    overview = await get('/meshes/default/dataplanes+insights/web-1');
    expect(overview.dataplaneInsight.subscriptions.map((s: { id: string }) => s.id)).toEqual(['s-2', 's-3']);
    expect((await get('/meshes/default/dataplanes+insights?status=online')).total).toBe(1);
    insights.close();
  });
});
