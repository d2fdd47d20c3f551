import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { duration, httpStatus, positiveInt, sourcesDestinations } from '../fragments.js';

// Kuma's rule: conf is required, its `http` is checked when given.
const conf = z.strictObject({
  http: z
    .strictObject({
      requests: positiveInt,
      interval: duration,
      onRateLimit: z
        .strictObject({
          status: httpStatus.optional(),
          headers: z
            .array(
              z.strictObject({
                key: z.string().min(1),
                value: z.string().min(1),
                append: z.boolean().optional(),
              }),
            )
            .optional(),
        })
        .optional(),
    })
    .optional(),
});

/** RateLimit (extra-policies.md): HTTP requests per interval, per destination. */
export const rateLimit = defineResource({
  kind: 'RateLimit',
  scope: 'mesh',
  path: 'rate-limits',
  spec: z.strictObject({ ...sourcesDestinations(), conf }),
  catalogue: { displayName: 'Rate Limits', singularDisplayName: 'Rate Limit' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
