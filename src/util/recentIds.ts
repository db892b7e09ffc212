/**
 * The recent call ids of a subscription, for duplicate detection in O(1) with bounded memory: a
 * subscription that runs for hours must not remember every id it ever saw (~70 bytes each, 66 MB per
 * million calls, measured by bench/load). An id older than the window may be reused without
 * ambiguity: its result went out long ago.
 *
 * Two generations of `Set`s instead of one `Set` and a queue of the order: ids go into `current`;
 * once it holds `capacity` ids it becomes `previous` and the old `previous` is dropped whole. So the
 * last `capacity` ids remembered are always in one of the two, and at most `2 × capacity` are held.
 * What that buys: per new id, two lookups and one insert — no queue push and shift, no per-id delete
 * (which leaves a tombstone in V8's table and rehashes it every so often); measured in bench/overhead.
 * What it changes: an id is refused while it is among the last `capacity` to `2 × capacity` ids
 * remembered (which, depends on where the generation turns), instead of exactly the last `capacity`.
 * A refused duplicate is not remembered again: it does not renew its id.
 *
 * @example
 * ```ts
 * const seen = new RecentIds(10_000);
 * seen.add('call_1'); // true: new
 * seen.add('call_1'); // false: a duplicate
 * ```
 */
export class RecentIds {
  /** The newest ids, fewer than `capacity` before an add, at most `capacity` after it. */
  private current = new Set<string>();
  /** The `capacity` ids before those in `current` (fewer only until the first turn). */
  private previous = new Set<string>();

  constructor(private readonly capacity: number) {
    if (!Number.isInteger(capacity) || capacity < 1) throw new RangeError(`RecentIds: capacity must be a positive integer; received ${capacity}`);
  }

  /** How many ids are remembered now: at least the last `capacity` added (or all, while fewer), at most twice that. */
  get size(): number {
    return this.current.size + this.previous.size;
  }

  /** Remembers `id`; false when it is already among the recent ones. */
  add(id: string): boolean {
    if (this.current.has(id) || this.previous.has(id)) return false;
    if (this.current.size >= this.capacity) {
      this.previous = this.current;
      this.current = new Set();
    }
    this.current.add(id);
    return true;
  }
}
