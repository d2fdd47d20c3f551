import { EventEmitter } from 'node:events';
import { describe, expect, it } from 'vitest';
import type { AdsCall, DiscoveryResponse } from '../../../src/xds/ads-protocol.js';
import { AdsStream } from '../../../src/xds/ads-stream.js';
import type { ProxyHandle } from '../../../src/xds/config-source.js';
import type { StreamInfo } from '../../../src/xds/stream-info.js';
import { LISTENER } from '../../../src/xds/type-urls.js';

/** A call that keeps what it is written (always with room). */
class FakeCall extends EventEmitter {
  readonly written: DiscoveryResponse[] = [];
  write(response: DiscoveryResponse): boolean {
    this.written.push(response);
    return true;
  }
}

/** A stream over a handle that records the names each `resources` call asks for. */
function stream(asked: string[][]): { s: AdsStream; info: StreamInfo; call: FakeCall } {
  const call = new FakeCall();
  const handle: ProxyHandle = {
    resources: (_url, names) => {
      asked.push([...names]);
      return { version: 1, resources: [] };
    },
    onChange: () => () => undefined,
    closed: () => undefined,
  };
  const info: StreamInfo = {
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
    connectTime: new Date(0),
    lastUpdateTime: new Date(0),
    userAgent: { name: '', version: '' },
    types: new Map(),
  };
  const hooks = {
    updated: () => undefined,
    failed: (e: unknown) => {
      throw e;
    },
  };
  return { s: new AdsStream(call as unknown as AdsCall, handle, info, hooks, () => new Date(0)), info, call };
}

describe('AdsStream subscribed names (shared between streams that ask the same)', () => {
  it('streams asking the same names in any order hold one sorted list; a different list is its own', () => {
    const asked: string[][] = [];
    const a = stream(asked);
    const b = stream(asked);
    const c = stream(asked);
    a.s.receive({ version_info: '', resource_names: ['y', 'x'], type_url: LISTENER, response_nonce: '' });
    b.s.receive({ version_info: '', resource_names: ['x', 'y'], type_url: LISTENER, response_nonce: '' });
    c.s.receive({ version_info: '', resource_names: ['x'], type_url: LISTENER, response_nonce: '' });
    expect(asked).toEqual([['x', 'y'], ['x', 'y'], ['x']]);
    expect(a.info.types.get(LISTENER)?.names).toBe(b.info.types.get(LISTENER)?.names);
    expect(c.info.types.get(LISTENER)?.names).toEqual(['x']);
  });

  it('a name holding the separator of the shared table is not taken for two names', () => {
    const asked: string[][] = [];
    const a = stream(asked);
    const b = stream(asked);
    a.s.receive({ version_info: '', resource_names: ['a', 'b'], type_url: LISTENER, response_nonce: '' });
    b.s.receive({ version_info: '', resource_names: ['a\u0000b'], type_url: LISTENER, response_nonce: '' });
    expect(asked).toEqual([['a', 'b'], ['a\u0000b']]);
    expect(b.info.types.get(LISTENER)?.names).toEqual(['a\u0000b']);
  });
});
