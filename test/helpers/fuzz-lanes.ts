import fc from 'fast-check';

/**
 * Checks `property` in `lanes` runs of fast-check at once, lane `i` from seed `seed + i`, each for
 * `timeMs` (or `numRuns` cases). For fuzzers whose cases mostly wait on a server (a stream's answer,
 * a call left open until a timer cancels it): one lane left both cores idle for most of its time, and
 * lanes find as many cases in a third of it. Each lane shrinks its own counterexample, so a failure
 * reads as in one run; replaying `seed` replays every lane. Waits for every lane to end (none is left
 * calling a server that is closing) and throws the first lane's failure.
 */
export async function assertInLanes<T>(
  property: fc.IAsyncProperty<T>,
  opts: { seed: number; lanes: number; timeMs: number; numRuns: number },
): Promise<void> {
  const outcomes = await Promise.allSettled(
    Array.from({ length: opts.lanes }, (_, lane) =>
      fc.assert(property, {
        seed: opts.seed + lane,
        numRuns: opts.numRuns,
        interruptAfterTimeLimit: opts.timeMs,
        markInterruptAsFailure: false,
      }),
    ),
  );
  const failed = outcomes.find((o): o is PromiseRejectedResult => o.status === 'rejected');
  if (failed) throw failed.reason;
}
