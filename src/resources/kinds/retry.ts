import { z } from 'zod';
import { defineResource } from '../descriptor.js';
import {
  everyViolation,
  httpStatus,
  isRecord,
  positiveDuration,
  positiveInt,
  SERVICE_TO_SERVICE,
  sourcesDestinations,
} from '../fragments.js';

// Kuma's rule: an interval of 0 is refused at `baseInterval`, and `maxInterval` is only checked beside
// a valid base; both must be above 0.
const backOff = z.strictObject({ baseInterval: positiveDuration, maxInterval: positiveDuration.optional() });

/** Kuma's HttpMethod values; `NONE` (its zero) stands for no method and is refused. */
const HTTP_METHODS = [
  'CONNECT',
  'DELETE',
  'GET',
  'HEAD',
  'OPTIONS',
  'PATCH',
  'POST',
  'PUT',
  'TRACE',
] as const;
const retriableMethod = z
  .string()
  .refine((m) => m !== 'NONE', { message: 'cannot be empty', abort: true })
  .pipe(z.enum(HTTP_METHODS));

/** Kuma's HttpRetryOn values. */
const HTTP_RETRY_ON = [
  'all_5xx',
  'gateway_error',
  'reset',
  'connect_failure',
  'envoy_ratelimited',
  'retriable_4xx',
  'refused_stream',
  'retriable_status_codes',
  'retriable_headers',
  'http3_post_connect_failure',
] as const;

/** Spec 2.6 lists these values; they are Kuma's whole gRPC enum. */
const GRPC_RETRY_ON = [
  'cancelled',
  'deadline_exceeded',
  'internal',
  'resource_exhausted',
  'unavailable',
] as const;

/** A protocol section must set something (Kuma: "field cannot be empty"). */
function notEmpty(section: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (Object.values(section).every((v) => v === undefined)) {
    ctx.addIssue({ code: 'custom', path: [], message: 'cannot be empty: set at least one of its fields' });
  }
}

/** `retry_on: retriable_status_codes` needs the codes to retry on (Kuma's rule). */
function statusCodesForRetryOn(http: Record<string, unknown>, ctx: z.RefinementCtx): void {
  if (!Array.isArray(http.retryOn) || http.retriableStatusCodes !== undefined) return;
  http.retryOn.forEach((r, i) => {
    if (r === 'retriable_status_codes') {
      ctx.addIssue({
        code: 'custom',
        path: ['retryOn', i],
        message: 'retriableStatusCodes cannot be empty when this option is specified',
      });
    }
  });
}

/** Each gRPC `retryOn` value once: one cause per repeated value, with its indexes (Kuma's words). */
function uniqueRetryOn(values: readonly unknown[], ctx: z.RefinementCtx): void {
  const indexes = new Map<unknown, number[]>();
  values.forEach((v, i) => indexes.set(v, [...(indexes.get(v) ?? []), i]));
  for (const [value, at] of indexes) {
    if (at.length > 1) {
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: `repeated value ${JSON.stringify(value)} at indexes [${at.join(', ')}]`,
      });
    }
  }
}

const http = z
  .strictObject({
    numRetries: positiveInt.optional(),
    perTryTimeout: positiveDuration.optional(),
    backOff: backOff.optional(),
    retriableStatusCodes: z.array(httpStatus).optional(),
    retriableMethods: z.array(retriableMethod).optional(),
    retryOn: z.array(z.enum(HTTP_RETRY_ON)).optional(),
  })
  .superRefine(notEmpty, everyViolation)
  .superRefine(statusCodesForRetryOn, everyViolation);

const grpc = z
  .strictObject({
    numRetries: positiveInt.optional(),
    perTryTimeout: positiveDuration.optional(),
    backOff: backOff.optional(),
    retryOn: z
      .array(z.enum(GRPC_RETRY_ON))
      .superRefine(uniqueRetryOn, { when: (payload) => Array.isArray(payload.value) })
      .optional(),
  })
  .superRefine(notEmpty, everyViolation);

const conf = z
  .strictObject({
    http: http.optional(),
    grpc: grpc.optional(),
    // Kuma reads an absent count as 0, which it refuses: one attempt at least.
    tcp: z.strictObject({ maxConnectAttempts: positiveInt }).optional(),
  })
  .superRefine((c, ctx) => {
    if (!isRecord(c.http) && !isRecord(c.grpc) && !isRecord(c.tcp)) {
      ctx.addIssue({ code: 'custom', path: [], message: 'requires at least one of "http", "grpc", "tcp"' });
    }
  }, everyViolation);

/** Retry (spec 2.6): retries of HTTP, gRPC and TCP connections, checked as Kuma 2.0.0 checks them. */
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
