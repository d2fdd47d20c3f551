import { AppError } from '../util/errors.js';

/** Causes that are the machine's or the config's, not damage: the data dir or a port is unusable. */
const ENVIRONMENT_CODES = new Set([
  'ENOENT',
  'EACCES',
  'EPERM',
  'EROFS',
  'ENOTDIR',
  'EEXIST',
  'ENOSPC',
  'EADDRINUSE',
  'EADDRNOTAVAIL',
  'LEVEL_LOCKED',
]);

/**
 * The exit code of a start-up that failed, as the log tools count: 2 when it could not run (a data
 * dir that cannot be made or opened, one in use, a port taken, a setting found wrong only at start
 * such as an unreadable TLS file or `defaults.mesh`), 1 for anything else (damage found).
 */
export function startupExitCode(err: unknown): 1 | 2 {
  for (let e = err, depth = 0; e && depth < 10; e = (e as { cause?: unknown }).cause, depth++) {
    if (e instanceof AppError && e.title === 'invalid configuration') return 2;
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && ENVIRONMENT_CODES.has(code)) return 2;
  }
  return 1;
}
