import type { DestinationStream, Logger } from 'pino';
import { createRequire } from 'node:module';
import { pino } from 'pino';
import type * as PinoPretty from 'pino-pretty';

/**
 * Log paths that may hold a credential or a secret: never written. Request bodies are not
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

/** Standard output for the process logger: written line by line during start-up, then buffered. */
export interface StdoutDestination extends DestinationStream {
  /**
   * From now on, lines are written in chunks of 4 KiB or every 100 ms, whichever comes first (a
   * write of one line per resource change was ~6% of a write burst's CPU). Called after the ready
   * line, so that start-up lines, and the line supervisors and scripts wait for, are never held back.
   */
  buffer(): void;
  /**
   * pino's flush: best effort (sonic-boom writes what is left after an in-flight write later).
   * Call it, and exit in its callback, before `process.exit`: a write that finds the reader gone
   * then fails here, and the exit no longer tries to write (see `buffer`).
   */
  flush(cb?: (err?: Error) => void): void;
}

/**
 * Standard output (or the file descriptor `fd`), see StdoutDestination. pino flushes the buffer
 * synchronously on exit; a SIGKILL loses at most the last 100 ms of lines (never a change: the
 * event log is synced before a write is answered).
 */
export function stdoutDestination(fd = 1, periodicFlush = 100): StdoutDestination {
  // Synchronous writes through sonic-boom, which retries EAGAIN on a non-blocking pipe.
  const direct = pino.destination({ dest: fd, sync: true });
  let buffered: ReturnType<typeof pino.destination> | undefined;
  // The reader of standard output went away (EPIPE): pino then drops the lines of that stream.
  let gone = false;
  direct.on('error', (err: NodeJS.ErrnoException) => {
    if (err.code === 'EPIPE') gone = true;
  });
  return {
    write(line: string) {
      if (buffered) buffered.write(Buffer.from(line) as unknown as string);
      else direct.write(line);
    },
    buffer() {
      // No buffered stream once the reader is gone: its exit flush would retry the write forever
      // (sonic-boom 4's flushSync sleeps and retries a failed write forever, whatever the error),
      // hanging the exit.
      if (gone) return;
      // Buffer mode: in its default mode sonic-boom 4 measures its whole pending text at every line
      // (flattening up to 16 KB of joined strings each time), ~3.6 µs a line against ~0.5 µs for
      // the line's own bytes kept in a list and joined once per write (a microbenchmark of our
      // write line to /dev/null); both retry EAGAIN and flush synchronously on exit alike.
      buffered ??= pino.destination({
        dest: fd,
        sync: false,
        minLength: 4096,
        periodicFlush,
        contentMode: 'buffer',
      });
    },
    flush(cb) {
      if (buffered) buffered.flush(cb);
      else cb?.();
    },
  };
}

/**
 * `log.format: text`: each JSON line turned into pino-pretty's human form (time, level,
 * message, then the fields indented), in colour on a terminal. Loaded only when asked for; the
 * destination's buffering and flush are kept.
 */
export function textDestination(
  destination: StdoutDestination,
  colorize = process.stdout.isTTY,
): StdoutDestination {
  const { prettyFactory } = createRequire(import.meta.url)('pino-pretty') as typeof PinoPretty;
  const pretty = prettyFactory({
    colorize,
    translateTime: 'SYS:yyyy-mm-dd HH:MM:ss.l',
    ignore: 'pid,hostname',
  });
  return {
    write: (line: string) => destination.write(pretty(line)),
    buffer: () => destination.buffer(),
    flush: (cb) => destination.flush(cb),
  };
}

/** The process logger: JSON lines at `level`, with credentials and bodies redacted. */
export function createLogger(level: string, destination: DestinationStream = stdoutDestination()): Logger {
  const options = {
    level,
    base: { pid: process.pid },
    redact: { paths: REDACTED_PATHS, censor: '[redacted]' },
  };
  return pino(options, destination);
}
