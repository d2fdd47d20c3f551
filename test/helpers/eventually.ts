/** How often {@link eventually} asks again: short, so that a wait ends soon after its condition holds. */
const POLL_MS = 10;

/**
 * Polls `check` until it returns a value that is not undefined/false (resolving with it), or fails
 * after `ms`, naming `what` and the last error `check` threw. The tests' one way to wait for
 * something that happens on another turn, process or server: no fixed sleep that hopes it is over.
 */
export async function eventually<T>(
  check: () => T | Promise<T>,
  ms = 5000,
  what = 'condition',
): Promise<Exclude<T, undefined | null | false | '' | 0>> {
  const until = Date.now() + ms;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v) return v as Exclude<T, undefined | null | false | '' | 0>;
    } catch (err) {
      last = err;
    }
    if (Date.now() > until)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ''}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}
