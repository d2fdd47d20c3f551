import { describe, expect, it } from 'vitest';

import type { LoadResult } from '../../../bench/lib/processes.js';
import { joinSlices } from '../../../bench/lib/put-load.js';

const slice = (over: Partial<LoadResult>): LoadResult => ({
  rps: 0,
  total: 0,
  p50: 0,
  p99: 0,
  errors: 0,
  non2xx: 0,
  statusCodes: {},
  timeouts: 0,
  ...over,
});

describe("joinSlices (a server's loads taken in turns, as one result)", () => {
  it('averages the rates, sums the counts, takes the median p50 and the highest p99', () => {
    const joined = joinSlices([
      slice({ rps: 5000, total: 10_000, p50: 6, p99: 20, statusCodes: { '200': 9990, '201': 10 } }),
      slice({
        rps: 7000,
        total: 14_000,
        p50: 9,
        p99: 31,
        non2xx: 2,
        statusCodes: { '200': 13_998, '503': 2 },
      }),
      slice({
        rps: 6000,
        total: 12_000,
        p50: 7,
        p99: 25,
        errors: 1,
        timeouts: 3,
        statusCodes: { '200': 12_000 },
      }),
    ]);
    expect(joined).toEqual({
      rps: 6000,
      total: 36_000,
      p50: 7,
      p99: 31,
      errors: 1,
      non2xx: 2,
      statusCodes: { '200': 35_988, '201': 10, '503': 2 },
      timeouts: 3,
    });
  });
});
