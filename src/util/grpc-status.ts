import * as grpc from '@grpc/grpc-js';
import type { ErrorCode } from './errors.js';
import { AppError } from './errors.js';

/**
 * The one table from error codes to gRPC status (style habits 3/4: errors mapped at one boundary per
 * transport), shared by the two gRPC transports: zone sync (`src/zones/`) and xDS (`src/xds/`).
 */
export const GRPC_STATUS_OF: Record<ErrorCode, grpc.status> = {
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
  // gRPC's own code for "a change that may have been made even though the call failed".
  OUTCOME_UNKNOWN: grpc.status.DEADLINE_EXCEEDED,
  INTERNAL: grpc.status.INTERNAL,
};

/** How a gRPC stream ends: a status code and the details the peer sees. */
export interface GrpcStatus {
  code: grpc.status;
  details: string;
}

/** The status for an error; an unknown error says only "internal error" on the wire. */
export function grpcStatusOf(err: unknown): GrpcStatus {
  if (err instanceof AppError) return { code: GRPC_STATUS_OF[err.code], details: err.details };
  return { code: grpc.status.INTERNAL, details: 'internal error (see the control plane log)' };
}
