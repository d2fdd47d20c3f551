const cmp = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

/** Below this many pending keys, each is inserted by binary search; above, they are sorted and merged. */
const MERGE_THRESHOLD = 64;

/**
 * A sorted set of string keys: O(log n) search and O(page) slices at any offset. Inserts made in
 * bulk (a replay at start-up) are buffered and merged in one sort on the next read, so loading n
 * keys costs O(n log n) rather than O(n²) of one splice each.
 */
export class SortedKeys {
  private keys: string[] = [];
  private pending: string[] = [];
  private pendingSet = new Set<string>();

  /** Number of keys. */
  get size(): number {
    return this.keys.length + this.pending.length;
  }

  private settle(): void {
    if (this.pending.length === 0) return;
    if (this.pending.length < MERGE_THRESHOLD) {
      for (const k of this.pending) {
        const i = this.search(k);
        if (this.keys[i] !== k) this.keys.splice(i, 0, k);
      }
    } else {
      const add = this.pending.sort(cmp);
      const merged: string[] = new Array(this.keys.length + add.length);
      let i = 0;
      let j = 0;
      let n = 0;
      while (i < this.keys.length && j < add.length) {
        if (this.keys[i] === add[j]) j++;
        else merged[n++] = this.keys[i] < add[j] ? this.keys[i++] : add[j++];
      }
      while (i < this.keys.length) merged[n++] = this.keys[i++];
      while (j < add.length) merged[n++] = add[j++];
      merged.length = n;
      this.keys = merged;
    }
    this.pending = [];
    this.pendingSet.clear();
  }

  private search(k: string): number {
    let lo = 0;
    let hi = this.keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.keys[mid] < k) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of the first key >= k. */
  lowerBound(k: string): number {
    this.settle();
    return this.search(k);
  }

  /** Adds a key; adding one already present changes nothing. */
  insert(k: string): void {
    if (this.pendingSet.has(k) || this.keys[this.search(k)] === k) return;
    this.pending.push(k);
    this.pendingSet.add(k);
  }

  /** Removes a key if present. */
  remove(k: string): void {
    if (this.pendingSet.has(k)) {
      this.pendingSet.delete(k);
      this.pending.splice(this.pending.indexOf(k), 1);
      return;
    }
    const i = this.search(k);
    if (this.keys[i] === k) this.keys.splice(i, 1);
  }

  /** The key at an index. */
  at(i: number): string {
    this.settle();
    return this.keys[i];
  }

  /** Keys in [from, to). */
  slice(from: number, to: number): string[] {
    this.settle();
    return this.keys.slice(from, to);
  }

  /** Every key in order. */
  all(): readonly string[] {
    this.settle();
    return this.keys;
  }
}
