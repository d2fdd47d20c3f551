import type { FastifyRequest } from 'fastify';
import type { ListRequest } from '../app/queries.js';
import type { ResourceDescriptor } from '../resources/descriptor.js';
import type { ErrorCause } from '../util/errors.js';
import { AppError } from '../util/errors.js';

// Filters each kind's list accepts beyond `name` (decisions §5). Others are ignored like unknown parameters.
/** The kinds whose lists take `tag=key:value`. */
export const TAG_FILTER_KINDS: ReadonlySet<string> = new Set([
  'Dataplane',
  'DataplaneOverview',
  'ExternalService',
]);
/** The kinds whose lists take `gateway=` and `status=`. */
export const STATUS_FILTER_KINDS: ReadonlySet<string> = new Set(['DataplaneOverview']);
/** The values of the `gateway` filter. */
export const GATEWAY_VALUES: readonly string[] = ['true', 'false', 'builtin', 'delegated'];
/** The values of the `status` filter. */
export const STATUS_VALUES: readonly string[] = ['online', 'offline', 'partially_degraded'];

/** The raw query of a request, repeated keys kept. */
export function rawQuery(req: FastifyRequest): URLSearchParams {
  const i = req.url.indexOf('?');
  return new URLSearchParams(i < 0 ? '' : req.url.slice(i + 1));
}

/** Parses `size` (1–1000, default 100) and `offset` (decisions §5), adding a cause per bad value. */
export function parsePage(q: URLSearchParams, causes: ErrorCause[]): { size: number; offset: number } {
  const int = (key: string, def: number, min: number, max: number, what: string): number => {
    const raw = q.get(key);
    if (raw === null) return def;
    if (!/^\d+$/.test(raw) || Number(raw) < min || Number(raw) > max) {
      causes.push({ field: key, message: `must be ${what}` });
      return def;
    }
    return Number(raw);
  };
  const size = int('size', 100, 1, 1000, 'an integer between 1 and 1000');
  const offset = int('offset', 0, 0, Number.MAX_SAFE_INTEGER, 'a non-negative integer');
  return { size, offset };
}

/**
 * A revision parameter (decisions §8: `?revision=R`): undefined when absent; a positive integer not
 * above the head (`next`: not above the next revision to come), else 400 with a cause on `key`.
 */
export function parseRevision(
  q: URLSearchParams,
  head: number,
  key = 'revision',
  opts: { next?: boolean } = {},
): number | undefined {
  const raw = q.get(key);
  if (raw === null) return undefined;
  const bad = (message: string): AppError =>
    new AppError('INVALID_QUERY', 'Invalid query parameters', `${key} ${message}`, [{ field: key, message }]);
  if (!/^\d+$/.test(raw) || !Number.isSafeInteger(Number(raw)) || Number(raw) < 1) {
    throw bad('must be a positive integer');
  }
  if (opts.next && Number(raw) > head + 1) {
    throw bad(`must not be above ${head + 1}, the next revision (the head revision is ${head})`);
  }
  if (!opts.next && Number(raw) > head) throw bad(`must not be above the head revision ${head}`);
  return Number(raw);
}

/** RFC 3339 date-time: a date, `T`, a time with optional fraction, and `Z` or an offset. */
const RFC3339 = /^\d{4}-\d{2}-\d{2}[Tt]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/;

/** What a point-in-time read asks for: none, a revision, or a time to turn into a revision. */
export type PointInTimeQuery = { revision: number } | { at: string; time: number } | undefined;

/**
 * The point in time of a read: `?revision=R` (as {@link parseRevision}) or `?at=<RFC 3339 time>`
 * (the last revision at or before it, which the caller looks up); both at once is 400.
 */
export function parsePointInTime(q: URLSearchParams, head: number): PointInTimeQuery {
  const revision = parseRevision(q, head);
  const at = parseTime(q, 'at');
  if (at === undefined) return revision === undefined ? undefined : { revision };
  if (revision !== undefined) {
    const message = 'cannot be given with revision: ask for one point in time';
    throw new AppError('INVALID_QUERY', 'Invalid query parameters', `at ${message}`, [
      { field: 'at', message },
    ]);
  }
  return { at: at.raw, time: at.time };
}

/** A time parameter (RFC 3339): undefined when absent, else its text and epoch ms; 400 with a cause on `key` when it is not one. */
export function parseTime(q: URLSearchParams, key: string): { raw: string; time: number } | undefined {
  const raw = q.get(key);
  if (raw === null) return undefined;
  const time = Date.parse(raw);
  if (!RFC3339.test(raw) || Number.isNaN(time)) {
    const message = 'must be an RFC 3339 date-time, such as 2026-11-28T14:05:00Z';
    throw new AppError('INVALID_QUERY', 'Invalid query parameters', `${key} ${message}`, [
      { field: key, message },
    ]);
  }
  return { raw, time };
}

/**
 * The revision a point-in-time read answers at: `?revision=R`, or for `?at=T` the last revision at
 * or before T (400 when the log has none that early), checked against the `head`; undefined for a
 * read of now.
 */
export async function revisionAsked(
  req: FastifyRequest,
  head: number,
  revisionAt: (time: number) => Promise<number | undefined>,
): Promise<number | undefined> {
  // Most reads ask for now: their query is not parsed.
  if (!req.url.includes('revision=') && !req.url.includes('at=')) return undefined;
  const p = parsePointInTime(rawQuery(req), head);
  if (p === undefined) return undefined;
  if ('revision' in p) return p.revision;
  const revision = await revisionAt(p.time);
  if (revision === undefined) {
    const message = `is before the first revision: nothing was written at or before ${p.at}`;
    throw new AppError('INVALID_QUERY', 'Invalid query parameters', `at ${message}`, [
      { field: 'at', message },
    ]);
  }
  return revision;
}

/** Parses `size`, `offset` and the filters; every bad value is a cause (400). */
export function parseListQuery(desc: ResourceDescriptor, q: URLSearchParams, mesh?: string): ListRequest {
  const causes: ErrorCause[] = [];
  const { size, offset } = parsePage(q, causes);
  const req: ListRequest = { mesh, size, offset };
  const name = q.get('name');
  if (name !== null && name !== '') req.name = name;
  if (TAG_FILTER_KINDS.has(desc.kind)) {
    const tags: Array<[string, string]> = [];
    for (const t of q.getAll('tag')) {
      const i = t.indexOf(':');
      if (i <= 0 || i === t.length - 1) causes.push({ field: 'tag', message: `"${t}" must be key:value` });
      else tags.push([t.slice(0, i), t.slice(i + 1)]);
    }
    if (tags.length > 0) req.tags = tags;
  }
  if (STATUS_FILTER_KINDS.has(desc.kind)) {
    const gateway = q.get('gateway');
    if (gateway !== null) {
      if (GATEWAY_VALUES.includes(gateway)) req.gateway = gateway;
      else causes.push({ field: 'gateway', message: `must be one of ${GATEWAY_VALUES.join(', ')}` });
    }
    const status = q.get('status');
    if (status !== null) {
      if (STATUS_VALUES.includes(status)) req.status = status;
      else causes.push({ field: 'status', message: `must be one of ${STATUS_VALUES.join(', ')}` });
    }
  }
  if (causes.length > 0)
    throw new AppError('INVALID_QUERY', 'Invalid query parameters', 'bad list parameters', causes);
  return req;
}

/**
 * The absolute URL of the next page, keys sorted (decisions §5), or null on the last page. Its scheme
 * and host come from `req.baseUrl()`: `apiServer.externalUrl`, or a `Host` that names this control plane.
 */
export function nextUrl(
  req: FastifyRequest,
  q: URLSearchParams,
  offset: number,
  size: number,
  total: number,
): string | null {
  if (offset + size >= total) return null;
  const params = new URLSearchParams(q);
  params.set('offset', String(offset + size));
  params.sort();
  const path = req.url.split('?')[0];
  return `${req.baseUrl()}${path}?${params.toString()}`;
}
