import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { deadlineTimer } from '../../../src/util/deadline-timer.js';

describe('deadlineTimer', () => {
  beforeEach(() => {
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('fires once at the deadline, also past the longest delay node takes (~24.8 days)', () => {
    const fired = vi.fn();
    deadlineTimer(30 * 24 * 3600 * 1000, fired);
    vi.advanceTimersByTime(25 * 24 * 3600 * 1000);
    expect(fired).not.toHaveBeenCalled();
    vi.advanceTimersByTime(5 * 24 * 3600 * 1000);
    expect(fired).toHaveBeenCalledTimes(1);
  });

  it('fires at once for a deadline passed, or in a later turn when asked; never once cancelled', () => {
    const now = vi.fn();
    deadlineTimer(-5, now);
    expect(now).toHaveBeenCalledTimes(1);
    const soon = vi.fn();
    deadlineTimer(-5, soon, true);
    expect(soon).not.toHaveBeenCalled();
    vi.advanceTimersByTime(0);
    expect(soon).toHaveBeenCalledTimes(1);
    const cancelled = vi.fn();
    deadlineTimer(1000, cancelled)();
    vi.advanceTimersByTime(2000);
    expect(cancelled).not.toHaveBeenCalled();
  });
});
