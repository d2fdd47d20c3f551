/** Below this many pending items, each is inserted by binary search; above, they are sorted and merged. */
const MERGE_THRESHOLD = 64;

/** Anything kept in a sorted list: ordered by its `key`. */
export interface Keyed {
  readonly key: string;
}

const before = (a: Keyed, b: Keyed): boolean => a.key < b.key;

/**
 * A list of items sorted by a unique string key: O(log n) search and O(page) slices at any offset.
 * Items added in bulk (a replay at start-up) are buffered and merged in one sort on the next read,
 * so loading n items costs O(n log n) rather than O(n²) of one splice each.
 */
export class SortedList<T extends Keyed> {
  private items: T[] = [];
  private pending: T[] = [];

  /** Number of items. */
  get size(): number {
    return this.items.length + this.pending.length;
  }

  private settle(): void {
    if (this.pending.length === 0) return;
    if (this.pending.length < MERGE_THRESHOLD) {
      for (const x of this.pending) this.items.splice(this.search(x.key), 0, x);
    } else {
      const add = this.pending.sort((a, b) => (a.key < b.key ? -1 : 1));
      const old = this.items;
      const merged: T[] = new Array(old.length + add.length);
      let i = 0;
      let j = 0;
      let n = 0;
      while (i < old.length && j < add.length) merged[n++] = before(old[i], add[j]) ? old[i++] : add[j++];
      while (i < old.length) merged[n++] = old[i++];
      while (j < add.length) merged[n++] = add[j++];
      this.items = merged;
    }
    this.pending = [];
  }

  private search(key: string): number {
    let lo = 0;
    let hi = this.items.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.items[mid].key < key) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  /** Index of the first item whose key is >= key. */
  lowerBound(key: string): number {
    this.settle();
    return this.search(key);
  }

  /** Adds an item whose key is not in the list (callers track presence: the views do). */
  insert(item: T): void {
    this.pending.push(item);
  }

  /** Removes the item with this key, if present. */
  remove(key: string): void {
    this.settle();
    const i = this.search(key);
    if (this.items[i]?.key === key) this.items.splice(i, 1);
  }

  /** The item at an index. */
  at(i: number): T {
    this.settle();
    return this.items[i];
  }

  /** Items in [from, to). */
  slice(from: number, to: number): T[] {
    this.settle();
    return this.items.slice(from, to);
  }
}
