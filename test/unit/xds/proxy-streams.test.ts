import { describe, expect, it } from 'vitest';
import { createStatusStore } from '../../../src/status/status-store.js';
import { createProxyInsights } from '../../../src/xds/proxy-insights.js';
import { createProxyStreams } from '../../../src/xds/proxy-streams.js';
import { SmallTypeTable, type StreamInfo } from '../../../src/xds/stream-info.js';

const T = new Date('2026-01-01T00:00:00.000Z');

/** A stream of `proxy` (as its source named it), or of a node that names none. */
function stream(id: string, proxy?: { mesh: string; name: string }): StreamInfo {
  return {
    id,
    node: {
      id: '',
      cluster: '',
      metadata: {},
      user_agent_name: 'test',
      user_agent_version: '1',
      client_features: [],
    },
    proxy,
    peer: '127.0.0.1:1',
    connectTime: T,
    lastUpdateTime: T,
    userAgent: { name: 'test', version: '1' },
    types: new SmallTypeTable(),
  };
}

describe('proxy streams', () => {
  const setup = () => {
    const status = createStatusStore();
    const insights = createProxyInsights({ status, now: () => T, publishMs: 60_000 });
    const streams = createProxyStreams({ insights, lookup: () => undefined, instanceId: 'cp-1' });
    const open = () =>
      (status.dataplaneInsight('m', 'dp')?.subscriptions ?? [])
        .filter((s) => s.disconnectTime === undefined)
        .map((s) => s.id);
    return { streams, insights, open };
  };

  it("lists a proxy's open streams newest first, and keeps the list right as any of them ends", () => {
    const { streams, insights } = setup();
    const dp = { mesh: 'm', name: 'dp' };
    for (const id of ['s1', 's2', 's3']) expect(streams.connected(stream(id, dp))).toEqual(dp);
    expect([...streams.openIds('m', 'dp')]).toEqual(['s3', 's2', 's1']);
    streams.disconnected(stream('s2'));
    expect([...streams.openIds('m', 'dp')]).toEqual(['s3', 's1']);
    streams.disconnected(stream('s3'));
    expect([...streams.openIds('m', 'dp')]).toEqual(['s1']);
    streams.close();
    expect([...streams.openIds('m', 'dp')]).toEqual([]);
    insights.close();
  });

  it("opens a proxy's insight subscription with its stream and closes it when the stream ends", () => {
    const { streams, insights, open } = setup();
    const dp = { mesh: 'm', name: 'dp' };
    streams.connected(stream('s1', dp));
    streams.connected(stream('s2', dp));
    expect(open().sort()).toEqual(['s1', 's2']);
    streams.disconnected(stream('s2'));
    expect(open()).toEqual(['s1']);
    streams.close();
    expect(open()).toEqual([]);
    insights.close();
  });

  it('keeps no bookkeeping for a stream that names no Dataplane', () => {
    const { streams, insights } = setup();
    expect(streams.connected(stream('s1'))).toBeUndefined();
    streams.updated(stream('s1'));
    streams.disconnected(stream('s1'));
    expect([...streams.openIds('m', 'dp')]).toEqual([]);
    insights.close();
  });
});
