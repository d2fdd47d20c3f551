import { describe, expect, it } from 'vitest';
import { expectEqual } from '../helpers/expect-equal.js';

describe('expectEqual (the fast path of toEqual in property tests)', () => {
  it('passes what toEqual passes, strictly equal or not', () => {
    expectEqual(
      { a: [1, { b: 'x' }], m: new Map([['k', 1]]) },
      { a: [1, { b: 'x' }], m: new Map([['k', 1]]) },
    );
    // Not strictly equal (an undefined property, another prototype), equal for toEqual.
    expectEqual({ a: 1, b: undefined }, { a: 1 });
    expectEqual(Object.assign(Object.create(null), { a: 1 }), { a: 1 });
    expectEqual('x', expect.any(String));
  });

  it('fails what toEqual fails, with its message', () => {
    expect(() => expectEqual({ a: [1, 2] }, { a: [1, 3] }, 'dp1 at step 7')).toThrow(/dp1 at step 7/);
    expect(() => expectEqual(null, undefined)).toThrow();
    expect(() => expectEqual(['b', 'a'], ['a', 'b'])).toThrow();
  });
});
