/**
 * `?impact=true|diff` on a write (a PUT, a DELETE or a change set, dry run or not): the answer gains
 * `impact: {total, items, next}`, the proxies the write would change (did change, for a real write),
 * paged by `offset` and `size` as lists are; `diff` adds each changed xDS resource's diff. The impact
 * is computed on the state the write was decided on, before its entries are appended.
 */
import type { FastifyRequest } from 'fastify';
import type { EventInput } from '../events/types.js';
import type { Impact, ImpactQuery } from '../app/impact.js';
import type { ErrorCause } from '../util/errors.js';
import { AppError } from '../util/errors.js';
import { nextUrl, parsePage } from './list-query.js';

/** The impact of decided entries, one page of it. */
export type ImpactOf = (events: readonly EventInput[], q: ImpactQuery) => Impact;

/** The impact computation, loaded on first use (it renders xDS config); absent: not served. */
export type LoadImpact = () => Promise<ImpactOf>;

/** A page of the impact as the wire shows it. */
export interface ImpactBody extends Impact {
  next: string | null;
}

/** The impact a request asks for (`impact`, `offset`, `size`), or undefined; 400 on a bad value. */
export function impactAsked(q: URLSearchParams): ImpactQuery | undefined {
  const raw = q.get('impact');
  if (raw === null || raw === 'false') return undefined;
  const causes: ErrorCause[] = [];
  if (raw !== 'true' && raw !== 'diff')
    causes.push({ field: 'impact', message: 'must be true, diff or false' });
  const page = parsePage(q, causes);
  if (causes.length > 0) {
    throw new AppError(
      'INVALID_QUERY',
      'Invalid query parameters',
      causes.map((c) => `${c.field} ${c.message}`).join('; '),
      causes,
    );
  }
  return { ...page, diff: raw === 'diff' };
}

/**
 * Runs a write with `onDecided` computing its impact when the request asks for one; returns the
 * write's result and the impact's page (undefined when not asked).
 */
export async function withImpact<T>(
  req: FastifyRequest,
  q: URLSearchParams,
  load: LoadImpact | undefined,
  write: (onDecided: ((events: readonly EventInput[]) => void) | undefined) => Promise<T>,
): Promise<{ result: T; impact?: ImpactBody }> {
  const asked = impactAsked(q);
  if (!asked) return { result: await write(undefined) };
  if (!load) {
    throw new AppError('INVALID_QUERY', 'Invalid query parameters', 'impact is not served here', [
      { field: 'impact', message: 'is not served by this control plane' },
    ]);
  }
  const impactOf = await load();
  let impact: Impact = { total: 0, items: [] };
  const result = await write((events) => {
    impact = impactOf(events, asked);
  });
  return { result, impact: { ...impact, next: nextUrl(req, q, asked.offset, asked.size, impact.total) } };
}
