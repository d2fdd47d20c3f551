import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import { duration, everyViolation, integer, isRecord, sourcesDestinations } from '../fragments.js';

/** Spec 2.6: "a string with a rate unit", as Kuma checks it: `50kbps`, `1mbps`, `10gbps`. */
const bandwidth = z
  .string()
  .regex(/^\d+\s?[kmg]bps$/, { message: 'must be a rate in kbps, mbps or gbps, such as 50kbps' });

const percentage = z
  .number()
  .min(0, { message: 'must be in the range 0.0-100.0' })
  .max(100, { message: 'must be in the range 0.0-100.0' });

/** The HTTP status codes that have a name (RFC 9110 and its registry), the ones Kuma accepts for an abort. */
const KNOWN_STATUSES = new Set([
  100, 101, 102, 103, 200, 201, 202, 203, 204, 205, 206, 207, 208, 226, 300, 301, 302, 303, 304, 305, 307,
  308, 400, 401, 402, 403, 404, 405, 406, 407, 408, 409, 410, 411, 412, 413, 414, 415, 416, 417, 418, 421,
  422, 423, 424, 425, 426, 428, 429, 431, 451, 500, 501, 502, 503, 504, 505, 506, 507, 508, 510, 511,
]);

const httpStatus = integer.refine((s) => KNOWN_STATUSES.has(s), {
  message: 'must be a known HTTP status code',
});

/** An empty fault (`delay: {}`) is no fault, as in Kuma: it is dropped before the check. */
const fault = <T extends z.ZodType>(schema: T) =>
  z.preprocess((v) => (isRecord(v) && Object.keys(v).length === 0 ? undefined : v), schema.optional());

const FAULTS = ['delay', 'abort', 'responseBandwidth'] as const;

const conf = z
  .strictObject({
    delay: fault(z.strictObject({ percentage, value: duration })),
    abort: fault(z.strictObject({ percentage, httpStatus })),
    responseBandwidth: fault(z.strictObject({ percentage, limit: bandwidth })),
  })
  .superRefine((c, ctx) => {
    const configured = FAULTS.some((f) => isRecord(c[f]) && Object.keys(c[f]).length > 0);
    if (!configured) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `requires at least one fault: ${FAULTS.join(', ')}`,
      });
    }
  }, everyViolation);

/**
 * FaultInjection (spec 2.6): delays, aborts and bandwidth limits on HTTP traffic. As in Kuma, each
 * destination names the protocol (`mesh.io/protocol`: http, http2 or grpc) the faults apply to.
 */
export const faultInjection = defineResource({
  kind: 'FaultInjection',
  scope: 'mesh',
  path: 'fault-injections',
  spec: z.strictObject({
    ...sourcesDestinations({}, { protocols: ['http', 'http2', 'grpc'] }),
    conf: z.preprocess((v) => v ?? {}, conf),
  }),
  catalogue: { displayName: 'Fault Injections', singularDisplayName: 'Fault Injection' },
  isPolicy: true,
  sync: 'down',
  crossMeshList: true,
});
