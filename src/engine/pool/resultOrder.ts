/**
 * Where a pool's results stand against model order, for `maxPending` (the pool's rule 5): the lowest
 * index not yet answered — the straggler — and the answers above it, which the reorder buffer after the
 * pool holds until the straggler's result is out.
 *
 * Every first start asks `mayStart`, whichever way the call came (the queue's head, a granted permit or
 * token, an `after-response` call once the response ended): while `maxPending` results wait, only the
 * straggler may start, or any call when nothing runs — then starting is the only way forward, and
 * nothing can deadlock on the bound. (A retry's next attempt is no new start: its result is already
 * counted as unfinished, and holding it back would only run out its time limit.)
 *
 * @example
 * ```ts
 * const order = new ResultOrder(settings.maxPending);
 * if (order.mayStart(record.index, running.size === 0)) start(record);
 * if (order.answered(record.index)) pump(); // a call held back by the bound may start now
 * ```
 */
export class ResultOrder {
  /** The lowest index not yet answered: results above it wait in the reorder buffer. */
  private lowestOpen = 0;
  /** Indices answered above `lowestOpen`: the results waiting for it. */
  private readonly ahead = new Set<number>();

  constructor(private readonly maxPending: number) {}

  /** Whether the call of `index` may start now; `idle` when nothing runs. */
  mayStart(index: number, idle: boolean): boolean {
    return idle || this.ahead.size < this.maxPending || index === this.lowestOpen;
  }

  /**
   * The call of `index` is answered; true when a call held back by the bound may start now: the bound
   * is freed, or — still full — it has a new straggler.
   */
  answered(index: number): boolean {
    const { ahead } = this;
    if (index !== this.lowestOpen) {
      ahead.add(index);
      return false;
    }
    const wasFull = ahead.size >= this.maxPending;
    this.lowestOpen++;
    while (ahead.delete(this.lowestOpen)) this.lowestOpen++;
    return wasFull;
  }
}
