import type { Cause } from './validate.js';
import { formatPath } from './validate.js';

/**
 * What a PUT body may hold before its kind's schema runs (issue 15): validation costs a few µs per
 * value, more when it is invalid, so these bound the work of one request.
 */
export interface BodyBounds {
  /** Array elements and object fields, at every depth, in all. */
  maxValues: number;
  /** Levels of arrays and objects below the body itself. */
  maxDepth: number;
}

/** The bounds of the API's PUT bodies; a Dataplane with 2,000 outbounds holds ~10,000 values. */
export const BODY_BOUNDS: BodyBounds = { maxValues: 20_000, maxDepth: 32 };

/**
 * The first bound `body` breaks, as a cause on the field where it breaks; undefined within them.
 * It stops there, so its own work is bounded by `maxValues`.
 */
export function bodyShapeCause(body: unknown, bounds: BodyBounds = BODY_BOUNDS): Cause | undefined {
  let values = 0;
  const path: PropertyKey[] = [];
  const visit = (v: unknown): Cause | undefined => {
    if (typeof v !== 'object' || v === null) return undefined;
    const keys: ReadonlyArray<PropertyKey> | undefined = Array.isArray(v) ? undefined : Object.keys(v);
    const size = keys ? keys.length : (v as unknown[]).length;
    if (size === 0) return undefined;
    if (path.length >= bounds.maxDepth) {
      return { field: formatPath(path), message: `must not nest deeper than ${bounds.maxDepth} levels` };
    }
    values += size;
    if (values > bounds.maxValues) {
      return {
        field: formatPath(path),
        message: `too many values: a body may hold at most ${bounds.maxValues} array elements and object fields in all`,
      };
    }
    for (let i = 0; i < size; i++) {
      const key = keys ? keys[i] : i;
      path.push(key);
      const cause = visit((v as Record<PropertyKey, unknown>)[key]);
      path.pop();
      if (cause) return cause;
    }
    return undefined;
  };
  return visit(body);
}
