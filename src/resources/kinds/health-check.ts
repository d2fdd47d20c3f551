import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  base64,
  duration,
  httpStatus,
  positiveInt,
  SERVICE_TO_SERVICE,
  sourcesDestinations,
} from '../fragments.js';

const conf = z.strictObject({
  interval: duration,
  timeout: duration,
  unhealthyThreshold: positiveInt,
  healthyThreshold: positiveInt,
  reuseConnection: z.boolean().optional(),
  tcp: z.strictObject({ send: base64.optional(), receive: z.array(base64).optional() }).optional(),
  http: z
    .strictObject({
      path: z.string().min(1),
      requestHeadersToAdd: z
        .array(
          z.strictObject({
            append: z.boolean().optional(),
            header: z.strictObject({ key: z.string().min(1), value: z.string() }),
          }),
        )
        .optional(),
      expectedStatuses: z.array(httpStatus).optional(),
      useHttp1: z.boolean().optional(),
    })
    .optional(),
});

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
