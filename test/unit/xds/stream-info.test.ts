import { describe, expect, it } from 'vitest';
import { epochTime, SmallTypeTable, streamTime, type TypeStatus } from '../../../src/xds/stream-info.js';
import { seededInts } from '../../helpers/seeded.js';

const status = (n: number): TypeStatus => ({
  names: [],
  responsesSent: n,
  responsesAcknowledged: 0,
  responsesRejected: 0,
});

describe("a stream's types and times, kept small", () => {
  it('the small type table reads as a Map over random sets: size, get, has and the order first set', () => {
    const table = new SmallTypeTable();
    const map = new Map<string, TypeStatus>();
    const rand = seededInts(3);
    for (let step = 0; step < 500; step++) {
      const url = `type.googleapis.com/t${rand(6)}`;
      const s = status(step);
      table.set(url, s);
      map.set(url, s);
      expect(table.size).toBe(map.size);
      for (let i = 0; i < 7; i++) {
        const u = `type.googleapis.com/t${i}`;
        expect(table.get(u)).toBe(map.get(u));
        expect(table.has(u)).toBe(map.has(u));
      }
      expect([...table]).toEqual([...map]);
    }
  });

  it('stream times give back the exact epoch milliseconds', () => {
    for (const ms of [0, 1, Date.now(), Date.parse('2026-03-01T00:00:00.123Z'), 8.64e15])
      expect(epochTime(streamTime(ms))).toBe(ms);
  });
});
