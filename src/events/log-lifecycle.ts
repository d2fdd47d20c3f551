import type { EventLog } from './event-log.js';
import type { EventLogStats } from './types.js';

/**
 * Opening, closing and the health of a log: the port of the composition root (src/runtime/), which
 * opens the log at start-up, closes it last, and reports `writeFailure` on /ready.
 */
export interface LogLifecycle {
  open(): Promise<void>;
  /** Writes what is pending, then closes. Appends after close are refused. */
  close(): Promise<void>;
  /**
   * Why appends are refused while the log retries a failed write (a full disk), e.g. `event log
   * cannot write: …: No space left on device`; undefined while it takes writes.
   */
  writeFailure(): string | undefined;
  /** Group-commit counters, for benchmarks and tests. */
  stats(): EventLogStats;
}

/** What every adapter is: the append and read port with its lifecycle (the contract suite's subject). */
export type LogAdapter = EventLog & LogLifecycle;
