import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  atLeastOneOf,
  duration,
  everyViolation,
  positiveDuration,
  SERVICE_TO_SERVICE,
  sourcesDestinations,
} from '../fragments.js';

/** A section sets one timeout at least (Kuma: "at least one timeout in section has to be defined"). */
const section = <T extends z.ZodRawShape>(shape: T) =>
  z.strictObject(shape).superRefine(atLeastOneOf(Object.keys(shape)), everyViolation);

// Kuma's rules: each timeout of a section is above 0; connectTimeout is not checked beyond its syntax.
const conf = z.strictObject({
  connectTimeout: duration.optional(),
  tcp: section({ idleTimeout: positiveDuration.optional() }).optional(),
  http: section({
    requestTimeout: positiveDuration.optional(),
    idleTimeout: positiveDuration.optional(),
  }).optional(),
  grpc: section({
    streamIdleTimeout: positiveDuration.optional(),
    maxStreamDuration: positiveDuration.optional(),
  }).optional(),
});

// Spec 4.5 writes Timeout's list line with `retries` but its example uses `timeouts`; `retries` is
// Retry's segment, so that irregularity gets no alias.
/** Timeout (spec 2.6): connect, idle, request and stream timeouts. */
export const timeout = defineResource({
  kind: 'Timeout',
  scope: 'mesh',
  path: 'timeouts',
  spec: z.strictObject({ ...sourcesDestinations(...SERVICE_TO_SERVICE), conf }),
  catalogue: { displayName: 'Timeouts', singularDisplayName: 'Timeout' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
