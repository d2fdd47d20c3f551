import { describe, expect, it } from 'vitest';
import { deepEqual } from '../../src/util/deep-equal.js';

describe('deepEqual', () => {
  it.each([
    [{ a: 1, b: [1, { c: 'x' }] }, { b: [1, { c: 'x' }], a: 1 }, true],
    [{ a: 1 }, { a: 1, b: undefined }, true],
    [{ a: 1 }, { a: 2 }, false],
    [{ a: 1 }, { a: 1, b: 0 }, false],
    [[1, 2], [2, 1], false],
    [[1], { 0: 1 }, false],
    [{ a: null }, { a: {} }, false],
    [{ a: false }, { a: 0 }, false],
    ['x', 'x', true],
  ])('%j vs %j → %s', (a, b, expected) => {
    expect(deepEqual(a, b)).toBe(expected);
    expect(deepEqual(b, a)).toBe(expected);
  });
});
