import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  everyViolation,
  exactlyOneOf,
  integer,
  nonEmptySelectorTagMap,
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

const conf = z
  .strictObject({
    split: z
      .array(z.strictObject({ weight: uint, destination }))
      .min(1)
      .optional(),
    destination: destination.optional(),
    loadBalancer: loadBalancer.optional(),
  })
  .superRefine(exactlyOneOf(['split', 'destination']), everyViolation);

/** TrafficRoute (spec 2.6): where traffic goes, one destination or a weighted split. */
export const trafficRoute = defineResource({
  kind: 'TrafficRoute',
  scope: 'mesh',
  path: 'traffic-routes',
  spec: z.strictObject({ ...sourcesDestinations, conf }),
  catalogue: { displayName: 'Traffic Routes', singularDisplayName: 'Traffic Route' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
