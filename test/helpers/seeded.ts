/**
 * A seeded generator of integers in [0, n): a linear congruential generator, read from bit 8 up (its
 * low bits repeat within a few calls). Random tests use it so that a failure can be run again.
 */
export function seededInts(seed: number): (n: number) => number {
  let s = seed;
  return (n) => {
    s = (s * 1103515245 + 12345) & 0x7fffffff;
    return (s >> 8) % n;
  };
}
