import { describe, expect, it } from 'vitest';
import { pageBody } from '../../../src/api/page-body.js';

describe('pageBody (a page of large items must not be one string)', () => {
  const items = Array.from({ length: 50 }, (_, i) => ({
    revision: i,
    resource: { name: `r-${i}`, data: 'é'.repeat(i * 10) },
  }));

  it('is the JSON of {total, items, next} as one string when it fits', () => {
    const body = pageBody(120, items, 'http://h/_events?offset=50');
    expect(typeof body).toBe('string');
    expect(body).toBe(JSON.stringify({ total: 120, items, next: 'http://h/_events?offset=50' }));
    expect(pageBody(0, [], null)).toBe('{"total":0,"items":[],"next":null}');
  });

  it('goes into a buffer past the flush size, with the same bytes', () => {
    const body = pageBody(50, items, null, 100);
    expect(Buffer.isBuffer(body)).toBe(true);
    expect((body as Buffer).toString('utf8')).toBe(JSON.stringify({ total: 50, items, next: null }));
  });
});
