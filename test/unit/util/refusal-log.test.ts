import { describe, expect, it } from 'vitest';
import { createRefusalLog, peerHost } from '../../../src/util/refusal-log.js';

describe('refusal log lines: one per address per interval', () => {
  it('logs the first refusal, counts the next ones, and logs the count with the first after the interval', () => {
    let now = 0;
    const log = createRefusalLog({ intervalMs: 10_000, now: () => new Date(now) });
    expect(log.refused('10.0.0.1:4000')).toEqual({ log: true, suppressed: 0 });
    for (let port = 4001; port < 4010; port++)
      expect(log.refused(`10.0.0.1:${port}`)).toEqual({ log: false });
    expect(log.refused('10.0.0.2:4000')).toEqual({ log: true, suppressed: 0 });
    now = 10_000;
    expect(log.refused('10.0.0.1:4011')).toEqual({ log: true, suppressed: 9 });
    expect(log.refused('10.0.0.1:4012')).toEqual({ log: false });
    now = 25_000;
    expect(log.sweep()).toEqual([{ peer: '10.0.0.1', suppressed: 1 }]);
    expect(log.refused('10.0.0.1:4013')).toEqual({ log: true, suppressed: 0 });
  });

  it('keeps at most maxPeers addresses; the others share one entry', () => {
    const log = createRefusalLog({ intervalMs: 10_000, now: () => new Date(0), maxPeers: 2 });
    expect(log.refused('10.0.0.1:1')).toMatchObject({ log: true });
    expect(log.refused('10.0.0.2:1')).toMatchObject({ log: true });
    expect(log.refused('10.0.0.3:1')).toMatchObject({ log: true });
    expect(log.refused('10.0.0.4:1')).toEqual({ log: false });
  });

  it('reads the address of a gRPC peer', () => {
    expect(peerHost('127.0.0.1:5000')).toBe('127.0.0.1');
    expect(peerHost('[::1]:5000')).toBe('::1');
    expect(peerHost('ipv4:10.1.2.3:80')).toBe('10.1.2.3');
    expect(peerHost('unix:/tmp/s')).toBe('unix:/tmp/s');
  });
});
