import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  atLeastOneOf,
  duration,
  everyViolation,
  httpStatus,
  percentage,
  sourcesDestinations,
} from '../fragments.js';

/** Spec 2.6: "a string with a rate unit", as Kuma parses it: `50kbps`, `1mbps`, `10gbps`. */
const bandwidth = z
  .string()
  .regex(/^\d+\s?(bps|kbps|mbps|gbps)$/, { message: 'must be a rate such as 50kbps, 1mbps, 10gbps' });

const conf = z
  .strictObject({
    delay: z.strictObject({ percentage, value: duration }).optional(),
    abort: z.strictObject({ percentage, httpStatus }).optional(),
    responseBandwidth: z.strictObject({ percentage, limit: bandwidth }).optional(),
  })
  .superRefine(atLeastOneOf(['delay', 'abort', 'responseBandwidth']), everyViolation);

/** FaultInjection (spec 2.6): delays, aborts and bandwidth limits on HTTP traffic. */
export const faultInjection = defineResource({
  kind: 'FaultInjection',
  scope: 'mesh',
  path: 'fault-injections',
  spec: z.strictObject({ ...sourcesDestinations, conf }),
  catalogue: { displayName: 'Fault Injections', singularDisplayName: 'Fault Injection' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
