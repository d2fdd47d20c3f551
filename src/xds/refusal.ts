/**
 * The gRPC status codes the xDS server ends a proxy's stream with when it will not serve it, named
 * as `@grpc/grpc-js` names them in `status` (the transport maps the name to the number).
 */
export type RefusalCode = 'INVALID_ARGUMENT' | 'NOT_FOUND' | 'UNAUTHENTICATED' | 'PERMISSION_DENIED';

/**
 * Why a proxy is not served: a code and a message for the proxy's operator that says what to fix.
 * Identity and token checks return it as a value; the stream server turns it into a status and a log line.
 */
export interface Refusal {
  ok: false;
  code: RefusalCode;
  message: string;
}

/** A refusal with this code and message. */
export function refusal(code: RefusalCode, message: string): Refusal {
  return { ok: false, code, message };
}
