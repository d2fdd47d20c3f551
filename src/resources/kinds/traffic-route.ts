import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  atLeastOneOf,
  everyViolation,
  exactlyOneOf,
  integer,
  nonEmptySelectorTagMap,
  SERVICE_TO_SERVICE,
  sourcesDestinations,
  uint,
  withServiceTag,
} from '../fragments.js';

const destination = withServiceTag(nonEmptySelectorTagMap);

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

const split = z
  .array(z.strictObject({ weight: uint, destination }))
  .min(1, { message: 'must have at least one element' });

const nonEmpty = z.string().min(1, { message: 'cannot be empty' });

/** Kuma's StringMatcher: one of prefix, exact (may be empty) or regex (RE2). */
const stringMatcher = z
  .strictObject({ prefix: nonEmpty.optional(), exact: z.string().optional(), regex: nonEmpty.optional() })
  .superRefine(exactlyOneOf(['prefix', 'exact', 'regex']), everyViolation);

const match = z
  .strictObject({
    method: stringMatcher.optional(),
    path: stringMatcher.optional(),
    headers: z
      .record(nonEmpty, stringMatcher)
      .refine((h) => Object.keys(h).length > 0, { message: 'must contain at least one element' })
      .optional(),
  })
  .superRefine(atLeastOneOf(['method', 'path', 'headers']), everyViolation);

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
