import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  base64,
  everyViolation,
  httpStatus,
  positiveDuration,
  positiveInt,
  SERVICE_TO_SERVICE,
  sourcesDestinations,
  uint,
} from '../fragments.js';

const panicThreshold = z
  .number()
  .min(0, { message: 'must be in the range 0.0-100.0' })
  .max(100, { message: 'must be in the range 0.0-100.0' });

// Kuma's fields and rules: durations above 0, thresholds above 0, statuses in [100, 600), and not
// both an HTTP and a TCP check. `useHttp1` is spec 2.6's, not in Kuma's message.
const conf = z
  .strictObject({
    interval: positiveDuration,
    timeout: positiveDuration,
    unhealthyThreshold: positiveInt,
    healthyThreshold: positiveInt,
    initialJitter: positiveDuration.optional(),
    intervalJitter: positiveDuration.optional(),
    intervalJitterPercent: uint.optional(),
    healthyPanicThreshold: panicThreshold.optional(),
    failTrafficOnPanic: z.boolean().optional(),
    eventLogPath: z.string().optional(),
    alwaysLogHealthCheckFailures: z.boolean().optional(),
    noTrafficInterval: positiveDuration.optional(),
    reuseConnection: z.boolean().optional(),
    tcp: z.strictObject({ send: base64.optional(), receive: z.array(base64).optional() }).optional(),
    http: z
      .strictObject({
        path: z.string().min(1),
        requestHeadersToAdd: z
          .array(
            z.strictObject({
              append: z.boolean().optional(),
              header: z.strictObject({ key: z.string().min(1), value: z.string().optional() }),
            }),
          )
          .optional(),
        expectedStatuses: z.array(httpStatus).optional(),
        useHttp1: z.boolean().optional(),
      })
      .optional(),
  })
  .superRefine((c, ctx) => {
    if (c.tcp !== undefined && c.http !== undefined) {
      ctx.addIssue({ code: 'custom', path: [], message: 'only one of "tcp", "http" can be set' });
    }
  }, everyViolation);

/** HealthCheck (spec 2.6): active health checking of destinations. */
export const healthCheck = defineResource({
  kind: 'HealthCheck',
  scope: 'mesh',
  path: 'health-checks',
  spec: z.strictObject({ ...sourcesDestinations(...SERVICE_TO_SERVICE), conf }),
  catalogue: { displayName: 'Health Checks', singularDisplayName: 'Health Check' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
