import * as grpc from '@grpc/grpc-js';
import type { ErrorCode } from '../util/errors.js';
import { AppError } from '../util/errors.js';

/**
 * Error codes to gRPC status on the xDS transport (style habit 4: one boundary per transport; the
 * same mapping as src/zones/grpc-errors.ts, which xds may not import).
 */
const STATUS_OF: Record<ErrorCode, grpc.status> = {
  BAD_REQUEST: grpc.status.INVALID_ARGUMENT,
  INVALID_BODY: grpc.status.INVALID_ARGUMENT,
  INVALID_QUERY: grpc.status.INVALID_ARGUMENT,
  UNAUTHENTICATED: grpc.status.UNAUTHENTICATED,
  FORBIDDEN: grpc.status.PERMISSION_DENIED,
  NOT_FOUND: grpc.status.NOT_FOUND,
  METHOD_NOT_ALLOWED: grpc.status.UNIMPLEMENTED,
  CONFLICT: grpc.status.ABORTED,
  PRECONDITION_FAILED: grpc.status.FAILED_PRECONDITION,
  REQUEST_TIMEOUT: grpc.status.DEADLINE_EXCEEDED,
  PAYLOAD_TOO_LARGE: grpc.status.RESOURCE_EXHAUSTED,
  URI_TOO_LONG: grpc.status.INVALID_ARGUMENT,
  HEADERS_TOO_LARGE: grpc.status.RESOURCE_EXHAUSTED,
  UNSUPPORTED_MEDIA_TYPE: grpc.status.INVALID_ARGUMENT,
  UNAVAILABLE: grpc.status.UNAVAILABLE,
  INTERNAL: grpc.status.INTERNAL,
};

/** How an ADS stream ends: a status code and the details the proxy sees. */
export interface StreamStatus {
  code: grpc.status;
  details: string;
}

/** The status for an error; an unknown error says only "internal error" on the wire. */
export function streamStatusOf(err: unknown): StreamStatus {
  if (err instanceof AppError) return { code: STATUS_OF[err.code], details: err.details };
  return { code: grpc.status.INTERNAL, details: 'internal error (see the control plane log)' };
}
