/** A sorted array of unique string keys: O(log n) search, O(page) slices at any offset. */
export class SortedKeys {
  private readonly keys: string[] = [];

  /** Number of keys. */
  get size(): number {
    return this.keys.length;
  }

  /** Index of the first key >= k. */
  lowerBound(k: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid] < k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Adds a key if absent. */
  insert(k: string): void {
    const i = this.lowerBound(k);
    if (this.keys[i] !== k) this.keys.splice(i, 0, k);
  }

  /** Removes a key if present. */
  remove(k: string): void {
    const i = this.lowerBound(k);
    if (this.keys[i] === k) this.keys.splice(i, 1);
  }

  /** The key at an index. */
  at(i: number): string {
    return this.keys[i];
  }

  /** Keys in [from, to). */
  slice(from: number, to: number): string[] {
    return this.keys.slice(from, to);
  }
}
