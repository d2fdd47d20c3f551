import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import type { ErrorCause, ErrorCode } from '../util/errors.js';
import { AppError } from '../util/errors.js';
import type { SetItemRef } from '../app/decide-set.js';
import { SetItemError } from '../app/decide-set.js';

/** The one table from error codes to HTTP status (style: errors at one boundary). */
export const STATUS_OF: Record<ErrorCode, number> = {
  BAD_REQUEST: 400,
  INVALID_BODY: 400,
  INVALID_QUERY: 400,
  UNAUTHENTICATED: 401,
  FORBIDDEN: 403,
  NOT_FOUND: 404,
  METHOD_NOT_ALLOWED: 405,
  CONFLICT: 409,
  PRECONDITION_FAILED: 412,
  REQUEST_TIMEOUT: 408,
  PAYLOAD_TOO_LARGE: 413,
  URI_TOO_LONG: 414,
  HEADERS_TOO_LARGE: 431,
  UNSUPPORTED_MEDIA_TYPE: 415,
  UNAVAILABLE: 503,
  // Kubernetes answers a write it may still have made 504 (reason Timeout); a 503 says "not done".
  OUTCOME_UNKNOWN: 504,
  INTERNAL: 500,
};

/** The JSON body of every error (decisions §4). */
export interface ErrorBody {
  title: string;
  details: string;
  causes?: ErrorCause[];
  /** The item of a change set that was refused (the whole set is refused with it). */
  item?: SetItemRef;
}

/** Fastify's own errors, by code, as ours. */
function fromFastify(err: FastifyError, bodyLimit: number | undefined): AppError | undefined {
  switch (err.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new AppError(
        'PAYLOAD_TOO_LARGE',
        'Payload too large',
        `request body is larger than the limit of ${bodyLimit ?? 'the configured'} bytes (apiServer.bodyLimit)`,
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return err.code === 'FST_ERR_CTP_INVALID_MEDIA_TYPE'
        ? new AppError(
            'UNSUPPORTED_MEDIA_TYPE',
            'Unsupported media type',
            'request body must be application/json or application/yaml',
          )
        : new AppError('BAD_REQUEST', 'Bad request', err.message);
    case 'FST_ERR_BAD_URL':
      return new AppError(
        'BAD_REQUEST',
        'Bad request',
        'the URL path is not valid: each "%" must start a percent-encoded UTF-8 sequence (such as %2F)',
      );
    case 'FST_ERR_MAX_PARAM_LENGTH':
      return new AppError('URI_TOO_LONG', 'URI too long', 'a segment of the URL path is too long');
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new AppError('INVALID_BODY', 'Invalid request body', 'request body is empty');
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new AppError('INVALID_BODY', 'Invalid request body', `invalid JSON: ${err.message}`);
    default:
      break;
  }
  if (err instanceof SyntaxError || (err.statusCode === 400 && /JSON/i.test(err.message))) {
    return new AppError('INVALID_BODY', 'Invalid request body', `invalid JSON: ${err.message}`);
  }
  if (err.statusCode !== undefined && err.statusCode >= 400 && err.statusCode < 500) {
    return new AppError('BAD_REQUEST', 'Bad request', err.message);
  }
  return undefined;
}

/** Maps any error to status + body; unknown errors become 500 with the request id, logged. */
export function errorHandler(err: FastifyError | Error, req: FastifyRequest, reply: FastifyReply): void {
  const known = err instanceof AppError ? err : fromFastify(err as FastifyError, req.routeOptions?.bodyLimit);
  if (!known) {
    req.log.error({ err, reqId: req.id }, 'internal error');
    void reply
      .code(500)
      .type('application/json')
      .send({
        title: 'Internal server error',
        details: `an unexpected error occurred (request id ${req.id})`,
      });
    return;
  }
  const body: ErrorBody = { title: known.title, details: known.details };
  if (known.causes.length > 0) body.causes = known.causes;
  if (known instanceof SetItemError) body.item = known.item;
  // RFC 6750: a 401 names the scheme the caller should use.
  if (known.code === 'UNAUTHENTICATED') reply.header('www-authenticate', 'Bearer realm="mesh-cp"');
  void reply.code(STATUS_OF[known.code]).type('application/json').send(body);
}
