import { expect } from 'vitest';

/** Every error answer has exactly the wire shape (decisions §4): title, details, and causes of field and message. */
export function expectErrorShape(body: Record<string, unknown>): void {
  expect(Object.keys(body).filter((k) => !['title', 'details', 'causes'].includes(k))).toEqual([]);
  expect(typeof body.title).toBe('string');
  expect(typeof body.details).toBe('string');
  for (const cause of (body.causes ?? []) as Array<Record<string, unknown>>) {
    expect(Object.keys(cause).sort()).toEqual(['field', 'message']);
  }
}
