import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  atLeastOneOf,
  duration,
  everyViolation,
  httpStatus,
  SERVICE_TO_SERVICE,
  sourcesDestinations,
  uint,
} from '../fragments.js';

const backOff = z.strictObject({ baseInterval: duration, maxInterval: duration.optional() });

const conf = z
  .strictObject({
    http: z
      .strictObject({
        numRetries: uint.optional(),
        perTryTimeout: duration.optional(),
        backOff: backOff.optional(),
        retriableStatusCodes: z.array(httpStatus).optional(),
      })
      .optional(),
    grpc: z
      .strictObject({
        numRetries: uint.optional(),
        perTryTimeout: duration.optional(),
        backOff: backOff.optional(),
        // Spec 2.6 lists these values; they are Kuma's whole enum.
        retryOn: z
          .array(z.enum(['cancelled', 'deadline_exceeded', 'internal', 'resource_exhausted', 'unavailable']))
          .optional(),
      })
      .optional(),
    tcp: z.strictObject({ maxConnectAttempts: uint }).optional(),
  })
  .superRefine(atLeastOneOf(['http', 'grpc', 'tcp']), everyViolation);

/** Retry (spec 2.6): retries of HTTP, gRPC and TCP connections. */
export const retry = defineResource({
  kind: 'Retry',
  scope: 'mesh',
  path: 'retries',
  spec: z.strictObject({ ...sourcesDestinations(...SERVICE_TO_SERVICE), conf }),
  catalogue: { displayName: 'Retries', singularDisplayName: 'Retry' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
