import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { AdsCall, DiscoveryResponse } from '../../../src/xds/ads-protocol.js';
import { AdsStream } from '../../../src/xds/ads-stream.js';
import type { ProxyHandle } from '../../../src/xds/config-source.js';
import { decodeAny } from '../../../src/xds/encode-any.js';
import { CLUSTER } from '../../../src/xds/type-urls.js';

/**
 * A test double of the transport: `write` keeps what it is given and answers as a gRPC call does
 * (false once its buffer is full); 'drain' is emitted by the test, as the call would once the peer
 * read. The stream under test is the real one.
 */
class FakeCall extends EventEmitter {
  readonly written: DiscoveryResponse[] = [];
  room = true;
  write(response: DiscoveryResponse): boolean {
    this.written.push(response);
    return this.room;
  }
}

const tick = () => new Promise((r) => setImmediate(r));

function setUp() {
  const call = new FakeCall();
  let version = 1;
  const handle: ProxyHandle = {
    resources: () => ({ version, resources: [{ name: 'c', resource: { name: `c-v${version}` } }] }),
    onChange: () => () => undefined,
    closed: () => undefined,
  };
  const now = () => new Date(0);
  const info = {
    id: 's',
    node: {
      id: 'n',
      cluster: '',
      metadata: {},
      user_agent_name: '',
      user_agent_version: '',
      client_features: [],
    },
    peer: 'p',
    connectTime: now(),
    lastUpdateTime: now(),
    userAgent: { name: '', version: '' },
    types: new Map(),
  };
  const stream = new AdsStream(
    call as unknown as AdsCall,
    handle,
    info,
    {
      updated: () => undefined,
      failed: (e) => {
        throw e;
      },
    },
    now,
  );
  const change = async (v: number) => {
    version = v;
    stream.changed();
    await tick();
  };
  const names = () => call.written.map((r) => String(decodeAny(r.resources[0]!).name));
  stream.receive({ version_info: '', resource_names: [], type_url: CLUSTER, response_nonce: '' });
  return { call, change, names };
}

describe('AdsStream backpressure: a full call gets only the latest state on drain', () => {
  it('with room, every change is written', async () => {
    const { change, names } = setUp();
    await change(2);
    await change(3);
    expect(names()).toEqual(['c-v1', 'c-v2', 'c-v3']);
  });

  it('once write says full, changes wait; on drain one response carries the latest, the ones between are skipped', async () => {
    const { call, change, names } = setUp();
    call.room = false;
    await change(2);
    expect(names()).toEqual(['c-v1', 'c-v2']);
    await change(3);
    await change(4);
    await change(5);
    expect(names()).toEqual(['c-v1', 'c-v2']);
    call.room = true;
    call.emit('drain');
    expect(names()).toEqual(['c-v1', 'c-v2', 'c-v5']);
    expect(call.written.at(-1)?.version_info).toBe('5');
    await change(6);
    expect(names()).toEqual(['c-v1', 'c-v2', 'c-v5', 'c-v6']);
  });

  it('a drain with nothing owed writes nothing', async () => {
    const { call, change, names } = setUp();
    call.room = false;
    await change(2);
    call.room = true;
    call.emit('drain');
    expect(names()).toEqual(['c-v1', 'c-v2']);
  });
});
