import { Fifo } from './fifo.js';

/**
 * The most recent `capacity` call ids of a subscription, for duplicate detection in O(1) with bounded
 * memory: a subscription that runs for hours must not remember every id it ever saw (~70 bytes each,
 * 66 MB per million calls, measured by bench/load). An id older than the window may be reused without
 * ambiguity: its result went out long ago.
 */
export class RecentIds {
  private readonly ids = new Set<string>();
  private readonly order = new Fifo<string>();

  constructor(private readonly capacity: number) {}

  /** Remembers `id`; false when it is already among the recent ones. */
  add(id: string): boolean {
    if (this.ids.has(id)) return false;
    this.ids.add(id);
    this.order.push(id);
    if (this.order.length > this.capacity) this.ids.delete(this.order.shift()!);
    return true;
  }
}
