import * as grpc from '@grpc/grpc-js';
import type { ErrorCode } from '../util/errors.js';
import { AppError } from '../util/errors.js';
import type { StreamEnd } from './peer-stream.js';

/** The one table from error codes to gRPC status (style habit 3/4: errors at one boundary per transport). */
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
  INTERNAL: grpc.status.INTERNAL,
};

/** The status a stream ends with for an error; an unknown error says only "internal error". */
export function toStreamEnd(err: unknown): StreamEnd {
  if (err instanceof AppError) return { code: GRPC_STATUS_OF[err.code], details: err.details };
  return { code: grpc.status.INTERNAL, details: 'internal error (see the control plane log)' };
}

/** The name of a gRPC status code, for log lines. */
export const statusName = (code: grpc.status): string => grpc.status[code] ?? String(code);
