/** The longest delay node's timers take (a longer one fires after 1 ms). */
const MAX_TIMER_MS = 2 ** 31 - 1;

/**
 * Calls `onDeadline` once `inMs` have passed (at once when `inMs` ≤ 0 and `soon` is false; in a
 * later turn when true), through timers that never keep the process alive, however far the deadline
 * (node fires a delay over ~24.8 days at once). Returns the function that cancels it.
 */
export function deadlineTimer(inMs: number, onDeadline: () => void, soon = false): () => void {
  const deadline = Date.now() + inMs;
  let timer: NodeJS.Timeout | undefined;
  let cancelled = false;
  const arm = (): void => {
    if (cancelled) return;
    const left = deadline - Date.now();
    if (left <= 0) return onDeadline();
    timer = setTimeout(arm, Math.min(left, MAX_TIMER_MS));
    timer.unref();
  };
  if (soon) {
    timer = setTimeout(arm, 0);
    timer.unref();
  } else arm();
  return () => {
    cancelled = true;
    clearTimeout(timer);
  };
}
