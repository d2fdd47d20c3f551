import { describe, expect, it } from 'vitest';

import { errorChain } from '../../../src/util/error-chain.js';

describe('errorChain', () => {
  it("names the causes of level's open error, innermost last", () => {
    const io = Object.assign(new Error('IO error: /data/MANIFEST-000005: No space left on device'), {
      code: 'LEVEL_IO_ERROR',
    });
    const open = new Error('Database failed to open', { cause: io });
    expect(errorChain(open)).toBe(
      'Database failed to open: IO error: /data/MANIFEST-000005: No space left on device',
    );
  });

  it('skips a cause its wrapper already repeats, and stops at a cycle', () => {
    const inner = new Error('No space left on device');
    const outer = new Error('write failed: No space left on device', { cause: inner });
    expect(errorChain(outer)).toBe('write failed: No space left on device');
    const a = new Error('a');
    const b = new Error('b', { cause: a });
    a.cause = b;
    expect(errorChain(b)).toBe('b: a');
  });

  it('takes a thrown non-error as its text', () => {
    expect(errorChain('ENOSPC')).toBe('ENOSPC');
    expect(errorChain(new Error('outer', { cause: 42 }))).toBe('outer: 42');
  });
});
