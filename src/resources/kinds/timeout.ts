import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { duration, SERVICE_TO_SERVICE, sourcesDestinations } from '../fragments.js';

const conf = z.strictObject({
  connectTimeout: duration.optional(),
  tcp: z.strictObject({ idleTimeout: duration.optional() }).optional(),
  http: z.strictObject({ requestTimeout: duration.optional(), idleTimeout: duration.optional() }).optional(),
  grpc: z
    .strictObject({ streamIdleTimeout: duration.optional(), maxStreamDuration: duration.optional() })
    .optional(),
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
