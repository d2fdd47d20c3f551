/** One violation of a request: the field path and what is wrong with it. */
export interface ErrorCause {
  field: string;
  message: string;
}

/**
 * Stable error codes. Throw sites pick a code, never an HTTP status; each transport maps codes in
 * exactly one place (`src/api/errors.ts` for HTTP).
 */
export type ErrorCode =
  | 'BAD_REQUEST'
  | 'INVALID_BODY'
  | 'INVALID_QUERY'
  | 'UNAUTHENTICATED'
  | 'FORBIDDEN'
  | 'NOT_FOUND'
  | 'METHOD_NOT_ALLOWED'
  | 'CONFLICT'
  | 'PRECONDITION_FAILED'
  | 'REQUEST_TIMEOUT'
  | 'PAYLOAD_TOO_LARGE'
  | 'URI_TOO_LONG'
  | 'HEADERS_TOO_LARGE'
  | 'UNSUPPORTED_MEDIA_TYPE'
  | 'UNAVAILABLE'
  /** A write whose commit was sent but whose reply was lost: it may or may not be stored. */
  | 'OUTCOME_UNKNOWN'
  | 'INTERNAL';

/** The one error class the program throws on purpose: a code, a title, details and causes. */
export class AppError extends Error {
  readonly code: ErrorCode;
  readonly title: string;
  readonly causes: ErrorCause[];

  constructor(code: ErrorCode, title: string, details?: string, causes: ErrorCause[] = []) {
    super(details ?? title);
    this.name = 'AppError';
    this.code = code;
    this.title = title;
    this.causes = causes;
  }

  /** The human-readable details (the message). */
  get details(): string {
    return this.message;
  }
}
