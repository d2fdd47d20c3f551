import type { DestinationStream, Logger } from 'pino';
import { pino } from 'pino';

/**
 * Log paths that may hold a credential or a secret: never written (issue 4). Request bodies are not
 * logged at all (fastify's request logging is off and handlers log names and revisions only); the
 * body paths are here in case a later log line passes a request or a body by mistake.
 */
export const REDACTED_PATHS = [
  'req.headers.authorization',
  'req.headers.cookie',
  'req.headers["proxy-authorization"]',
  'headers.authorization',
  'headers.cookie',
  'authorization',
  'req.body',
  'body',
  'token',
  'data',
  'resource.data',
  'spec.data',
];

/** The process logger: JSON lines at `level`, with credentials and bodies redacted. */
export function createLogger(level: string, destination?: DestinationStream): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return destination ? pino(options, destination) : pino(options);
}
