import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  atLeastOneOf,
  everyViolation,
  exactlyOneOf,
  integer,
  SERVICE_TO_SERVICE,
  sourcesDestinations,
  uint,
  isRecord,
  policySelector,
} from '../fragments.js';

// A destination names the service and may narrow it by other tags (`*` allowed), as in Kuma.
const destination = policySelector({ service: 'required' });

const empty = z.strictObject({});

// Not in spec 2.6, but Kuma's and ours: the default `route-all-<mesh>` uses `loadBalancer.roundRobin`.
const loadBalancer = z
  .strictObject({
    roundRobin: empty.optional(),
    leastRequest: z.strictObject({ choiceCount: integer.min(2).optional() }).optional(),
    ringHash: z
      .strictObject({
        hashFunction: z.enum(['XX_HASH', 'MURMUR_HASH_2']).optional(),
        minRingSize: uint.optional(),
        maxRingSize: uint.optional(),
      })
      .optional(),
    random: empty.optional(),
    maglev: empty.optional(),
  })
  .superRefine(exactlyOneOf(['roundRobin', 'leastRequest', 'ringHash', 'random', 'maglev']), everyViolation);

/** Kuma's rule: a split sends somewhere, so one entry at least has a weight above 0. */
function checkSplitWeights(entries: ReadonlyArray<unknown>, ctx: z.RefinementCtx): void {
  const total = entries.reduce<number>((sum, e) => {
    const weight = isRecord(e) ? e.weight : undefined;
    return sum + (typeof weight === 'number' ? weight : 0);
  }, 0);
  if (total === 0) {
    ctx.addIssue({
      code: 'custom',
      path: [],
      message: 'there must be at least one split entry with weight above 0',
    });
  }
}

const split = z
  .array(z.strictObject({ weight: uint, destination }))
  .min(1, { message: 'must have at least one element' })
  .superRefine(checkSplitWeights, {
    when: (payload) => Array.isArray(payload.value) && payload.value.length > 0,
  });

const nonEmpty = z.string().min(1, { message: 'cannot be empty' });

/** Kuma's StringMatcher: one of prefix, exact (may be empty) or regex (RE2). */
const stringMatcher = z
  .strictObject({ prefix: nonEmpty.optional(), exact: z.string().optional(), regex: nonEmpty.optional() })
  .superRefine(exactlyOneOf(['prefix', 'exact', 'regex']), everyViolation);

/** Header matchers: at least one, and no header without a name (its matcher is still checked). */
function checkHeaders(headers: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (Object.keys(headers).length === 0) {
    ctx.addIssue({ code: 'custom', path: [], message: 'must contain at least one element' });
  }
  if ('' in headers) ctx.addIssue({ code: 'custom', path: [''], message: 'cannot be empty' });
}

// An absent match is an empty one (Kuma's reading): the cause names the fields it needs.
const match = z.preprocess(
  (v) => v ?? {},
  z
    .strictObject({
      method: stringMatcher.optional(),
      path: stringMatcher.optional(),
      headers: z.record(z.string(), stringMatcher).superRefine(checkHeaders, everyViolation).optional(),
    })
    .superRefine(atLeastOneOf(['method', 'path', 'headers']), everyViolation),
);

const headerName = nonEmpty.refine((n) => !n.startsWith(':') && n.toLowerCase() !== 'host', {
  message: 'host header and HTTP/2 pseudo-headers are not allowed to be modified',
});
const regexReplace = z.strictObject({ pattern: nonEmpty, substitution: nonEmpty });
const headerOps = z.strictObject({
  add: z
    .array(z.strictObject({ name: headerName, value: nonEmpty, append: z.boolean().optional() }))
    .optional(),
  remove: z.array(z.strictObject({ name: headerName })).optional(),
});
const modify = z.strictObject({
  path: z
    .strictObject({ rewritePrefix: nonEmpty.optional(), regex: regexReplace.optional() })
    .superRefine(exactlyOneOf(['rewritePrefix', 'regex']), everyViolation)
    .optional(),
  host: z
    .strictObject({ value: nonEmpty.optional(), fromPath: regexReplace.optional() })
    .superRefine(exactlyOneOf(['value', 'fromPath']), everyViolation)
    .optional(),
  requestHeaders: headerOps.optional(),
  responseHeaders: headerOps.optional(),
});

/** Kuma's `conf.http[]`: routes tried in order before `split`/`destination`. */
const http = z
  .strictObject({
    match,
    modify: modify.optional(),
    split: split.optional(),
    destination: destination.optional(),
  })
  .superRefine(exactlyOneOf(['split', 'destination']), everyViolation)
  .superRefine((h, ctx) => {
    if (
      h.modify?.path?.rewritePrefix !== undefined &&
      (h.match as typeof h.match | undefined)?.path?.prefix === undefined
    ) {
      ctx.addIssue({
        code: 'custom',
        path: ['modify', 'path', 'rewritePrefix'],
        message: 'can only be set when .http.match.path.prefix is not empty',
      });
    }
  }, everyViolation);

const conf = z
  .strictObject({
    split: split.optional(),
    destination: destination.optional(),
    loadBalancer: loadBalancer.optional(),
    http: z.array(http).optional(),
  })
  .superRefine(exactlyOneOf(['split', 'destination']), everyViolation);

/**
 * TrafficRoute (spec 2.6): where traffic goes, one destination or a weighted split; `conf.http` (not in
 * the spec, Kuma 2.0's shape and checks) routes calls by path, method and headers first.
 */
export const trafficRoute = defineResource({
  kind: 'TrafficRoute',
  scope: 'mesh',
  path: 'traffic-routes',
  spec: z.strictObject({ ...sourcesDestinations(...SERVICE_TO_SERVICE), conf }),
  catalogue: { displayName: 'Traffic Routes', singularDisplayName: 'Traffic Route' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
