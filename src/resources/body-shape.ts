import type { Cause } from './validate.js';
import { formatPath } from './validate.js';

/**
 * What a PUT body may hold before its kind's schema runs: validation costs a few µs per
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

/** Values counted so far, shared by one walk. */
interface Walk {
  values: number;
  bounds: BodyBounds;
  /** The path to the current value, kept only by the second walk that names the field. */
  path?: PropertyKey[];
}

/** Walks `v` at `depth`; false (with `walk.path` at the offending field, when kept) past a bound. */
function within(walk: Walk, v: unknown, depth: number): boolean {
  if (typeof v !== 'object' || v === null) return true;
  if (Array.isArray(v)) {
    if (v.length === 0) return true;
    if (depth >= walk.bounds.maxDepth || (walk.values += v.length) > walk.bounds.maxValues) return false;
    for (let i = 0; i < v.length; i++) {
      walk.path?.push(i);
      if (!within(walk, v[i], depth + 1)) return false;
      walk.path?.pop();
    }
    return true;
  }
  const record = v as Record<string, unknown>;
  let fields = 0;
  for (const key in record) {
    if (fields === 0 && depth >= walk.bounds.maxDepth) return false;
    if (++walk.values > walk.bounds.maxValues) return false;
    fields += 1;
    walk.path?.push(key);
    if (!within(walk, record[key], depth + 1)) return false;
    walk.path?.pop();
  }
  return true;
}

/**
 * The first bound `body` breaks, as a cause on the field where it breaks; undefined within them.
 * It stops there, so its own work is bounded by `maxValues`.
 */
export function bodyShapeCause(body: unknown, bounds: BodyBounds = BODY_BOUNDS): Cause | undefined {
  if (within({ values: 0, bounds }, body, 0)) return undefined;
  // Past a bound: walk again keeping the path (the fast walk does not build it).
  const walk: Walk = { values: 0, bounds, path: [] };
  within(walk, body, 0);
  const path = walk.path as PropertyKey[];
  const depth = path.length >= bounds.maxDepth;
  return {
    field: formatPath(path),
    message: depth
      ? `must not nest deeper than ${bounds.maxDepth} levels`
      : `too many values: a body may hold at most ${bounds.maxValues} array elements and object fields in all`,
  };
}
