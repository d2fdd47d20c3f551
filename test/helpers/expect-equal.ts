import { isDeepStrictEqual } from 'node:util';
import { expect } from 'vitest';

/**
 * `expect(actual, message).toEqual(expected)` for checks made tens of thousands of times in a
 * property test, where each `expect()` call (chai's proxies, vitest's state, the recursive compare)
 * cost far more than the values compared. Values that are deeply strictly equal are equal for
 * `toEqual` too (it is the looser of the two); only when they are not does `expect` run, and decide,
 * with its usual message and diff.
 */
export function expectEqual(actual: unknown, expected: unknown, message?: string): void {
  if (!isDeepStrictEqual(actual, expected)) expect(actual, message).toEqual(expected);
}
