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

/**
 * Standard output, buffered: lines are written in chunks of 4 KiB or every 100 ms, whichever comes
 * first (a write of one line per resource change was ~6% of a write burst's CPU). pino flushes it
 * synchronously on exit; a SIGKILL loses at most the last 100 ms of lines (never a change: the
 * event log is synced before a write is answered).
 */
export function bufferedStdout(): DestinationStream {
  return pino.destination({ dest: 1, sync: false, minLength: 4096, periodicFlush: 100 });
}

/** The process logger: JSON lines at `level`, with credentials and bodies redacted. */
export function createLogger(level: string, destination: DestinationStream = bufferedStdout()): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return pino(options, destination);
}
