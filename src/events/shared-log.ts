/**
 * The part of a log shared by several instances (PostgreSQL) that the others' presence drives: the
 * runtime wires it to the cluster's heartbeats. Logs with one writer have no such part.
 */
export interface SharedLog {
  /**
   * Told whether any other instance runs on the log now. The log is woken by their notifications
   * only while one does: alone, it would only receive its own (a wake-up of PostgreSQL and of this
   * process per batch, ~10% of the write rate on two cores).
   */
  othersRunning(running: boolean): void;
}
