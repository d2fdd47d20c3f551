import { describe, expect, it } from 'vitest';
import { isoClock } from '../../../src/util/iso-clock.js';

describe('isoClock', () => {
  it("gives toISOString's text of the clock's every reading, formatted once per millisecond", () => {
    const readings = [0, 0, 1, 1, 999, 1000, 1000, 86_400_000 * 365 * 30 + 123, 1000];
    let i = 0;
    const formatted: number[] = [];
    const clock = isoClock(() => {
      const d = new Date(readings[i++]);
      const original = d.toISOString.bind(d);
      d.toISOString = () => {
        formatted.push(d.getTime());
        return original();
      };
      return d;
    });
    const out = readings.map(() => clock());
    expect(out).toEqual(readings.map((ms) => new Date(ms).toISOString()));
    // Consecutive readings of one millisecond share one formatting; a millisecond seen again later
    // (a clock stepped back) is formatted again.
    expect(formatted).toEqual([0, 1, 999, 1000, 86_400_000 * 365 * 30 + 123, 1000]);
  });

  it('reads the real clock by default', () => {
    const before = Date.now();
    const at = Date.parse(isoClock()());
    expect(at).toBeGreaterThanOrEqual(before);
    expect(at).toBeLessThanOrEqual(Date.now());
  });
});
