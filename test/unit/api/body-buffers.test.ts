import { describe, expect, it } from 'vitest';

import { createBodyBuffers } from '../../../src/api/body-buffers.js';

describe('body buffers', () => {
  it('hands out buffers of exactly the size asked, from power-of-two classes above minSize', () => {
    const pool = createBodyBuffers({ minSize: 1024 });
    const b = pool.take(3000);
    expect(b.length).toBe(3000);
    expect(b.buffer.byteLength).toBe(4096);
    const small = pool.take(100);
    expect(small.length).toBe(100);
  });

  it('reuses the memory of a buffer given back, for the same class only', () => {
    const pool = createBodyBuffers({ minSize: 1024 });
    const a = pool.take(3000);
    pool.give(a);
    const b = pool.take(2500);
    expect(b.buffer).toBe(a.buffer);
    const c = pool.take(3000);
    expect(c.buffer).not.toBe(a.buffer);
    pool.give(c);
    expect(pool.take(9000).buffer).not.toBe(c.buffer);
  });

  it('ignores a second give and buffers it did not lend (no buffer is ever lent twice at once)', () => {
    const pool = createBodyBuffers({ minSize: 1024 });
    const a = pool.take(2000);
    pool.give(a);
    pool.give(a);
    pool.give(Buffer.alloc(2000));
    pool.give(Buffer.from(new ArrayBuffer(2048), 0, 2000));
    const first = pool.take(2000);
    const second = pool.take(2000);
    expect(first.buffer).toBe(a.buffer);
    expect(second.buffer).not.toBe(a.buffer);
  });

  it('keeps at most perClass free buffers per class and maxFreeBytes in all', () => {
    const pool = createBodyBuffers({ minSize: 1024, perClass: 2, maxFreeBytes: 3 * 4096 });
    const four = [1, 2, 3, 4].map(() => pool.take(4000));
    four.forEach((b) => pool.give(b));
    const again = [1, 2, 3, 4].map(() => pool.take(4000));
    expect(again.filter((b) => four.some((f) => f.buffer === b.buffer))).toHaveLength(2);
    const pool2 = createBodyBuffers({ minSize: 1024, perClass: 10, maxFreeBytes: 3 * 4096 });
    const many = [1, 2, 3, 4, 5].map(() => pool2.take(4000));
    many.forEach((b) => pool2.give(b));
    const back = [1, 2, 3, 4, 5].map(() => pool2.take(4000));
    expect(back.filter((b) => many.some((f) => f.buffer === b.buffer))).toHaveLength(3);
  });

  it('does not pool bodies above maxSize', () => {
    const pool = createBodyBuffers({ minSize: 1024, maxSize: 8192 });
    const big = pool.take(10_000);
    pool.give(big);
    expect(pool.take(10_000).buffer).not.toBe(big.buffer);
  });
});
