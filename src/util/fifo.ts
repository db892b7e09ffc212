/**
 * A first-in first-out queue with O(1) `push` and `shift`.
 *
 * `Array.prototype.shift` moves every element, which turns a drained backlog of n items into O(n²)
 * work (this is what makes `mergeMap`'s buffer quadratic on a large synchronous source). Here the head
 * is an index; the consumed prefix is dropped in one splice once it is at least half the array.
 */
export class Fifo<T> {
  /** Items, of which those before `head` are consumed. */
  private items: (T | undefined)[] = [];
  /** Index of the next item to shift. */
  private head = 0;

  get length(): number {
    return this.items.length - this.head;
  }

  push(item: T): void {
    this.items.push(item);
  }

  peek(): T | undefined {
    return this.items[this.head];
  }

  shift(): T | undefined {
    if (this.head >= this.items.length) return undefined;
    const item = this.items[this.head];
    this.items[this.head++] = undefined; // let it be collected
    if (this.head >= 1024 && this.head * 2 >= this.items.length) {
      this.items.splice(0, this.head);
      this.head = 0;
    }
    return item;
  }

  /** Removes and returns the first item `picked` chooses, if any: O(1) at the head, else O(length). */
  takeFirst(picked: (item: T) => boolean): T | undefined {
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as T;
      if (!picked(item)) continue;
      if (i === this.head) return this.shift();
      this.items.splice(i, 1);
      return item;
    }
    return undefined;
  }

  /** Removes the items `picked` chooses and returns them; the others keep their order. O(length). */
  removeWhere(picked: (item: T) => boolean): T[] {
    const removed: T[] = [];
    const kept: T[] = [];
    for (let i = this.head; i < this.items.length; i++) {
      const item = this.items[i] as T;
      (picked(item) ? removed : kept).push(item);
    }
    this.items = kept;
    this.head = 0;
    return removed;
  }

  clear(): void {
    this.items = [];
    this.head = 0;
  }
}
