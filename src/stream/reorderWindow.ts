/**
 * The window between a pool and the reorder after it, for one subscription: the results given out of
 * the pool and not yet out in model order, and from the same state `maxPending` — which calls may start
 * while results wait behind the earliest one not yet out (the straggler).
 *
 * It has two sides. The reorder (`reorderIn`) hands it each item as it arrives (`take`, `following`):
 * an item whose turn has come goes out, one that arrives early is kept here by index. The pool tells
 * it each result it gives out (`answered`) and asks `mayStart` before every first start.
 *
 * Between the two a result passes the stages after the pool (post policies, the result chain, a layer's
 * awaitable `finished`: the journal's write), which may take their time: it is *on its way*. It holds
 * memory as one kept here does, so the window counts both. (The pool's own view alone — which calls it
 * answered — forgot a result the moment it left the pool: while a slow post chain held the straggler's
 * result, every call behind it could start, and the buffer grew without bound.)
 *
 * The rule (`mayStart`): a call may start while fewer than `maxPending` results wait behind an earlier
 * one not yet out (kept here or on their way; the straggler's own result on its way waits behind
 * nothing); else only the straggler itself — starting it is what empties the window — or any call when
 * nothing runs and no result is on its way: then starting is the only way forward (the straggler waits
 * behind another call, at a gate, or in the policy stages), so nothing deadlocks on the bound. While a
 * result is on its way the pool waits for it instead: it arrives by itself, and the window then wakes
 * the pool (`wakes`).
 *
 * The bound this keeps, as long as the straggler can start when its turn comes (and no retry waits
 * out of its slot for a rate limit's token, holding memory without running): a call ahead of it
 * starts only while at most `maxPending - 1` results wait behind it and at most `concurrency - 1` calls
 * run, so at most `maxPending + concurrency - 1` calls ahead of the straggler hold memory (running, or
 * finished and not out), and at most `maxPending + concurrency` results are out of the pool and not yet
 * out in order — the straggler's own, on its way, being the last. Both are reached when results are
 * slow on their way; when nothing after the pool takes time, the straggler itself is running whenever a
 * call ahead of it starts, and both are `maxPending + concurrency - 2`. Results given without a start (a
 * denial, an invalid call, a cancelled one) start nothing and are not held to it. When the straggler
 * cannot start in its turn, the calls started because nothing ran are beyond it; a pulled source is
 * then still held to `pullLimit`.
 *
 * @example
 * ```ts
 * const window = new ReorderWindow<ToolResult>(settings.maxPending);
 * records$.pipe(executeCalls(settings, signal, batch, window), postExecute(settings, signal), toResults(), reorderIn(window));
 * // the pool: window.mayStart(record.index, running.size === 0) before a first start;
 * //           window.answered(record.index) as each result leaves it; window.wakes(pump) once
 * ```
 */
export class ReorderWindow<T extends { readonly index: number }> {
  /** The index whose turn it is: every result below it is out. */
  private turn = 0;
  /** Results that arrived before their turn. */
  private readonly early = new Map<number, T>();
  /** Results the pool gave out: with `turn`, how many are out of the pool and not yet out in order. */
  private given = 0;
  /** The lowest index the pool has not answered: when it is past `turn`, the straggler's result is on its way. */
  private open = 0;
  /** Indices the pool answered above `open`. */
  private readonly answeredAbove = new Set<number>();
  /** `mayStart` said no since the pool was last woken: a result arriving may let a call start. */
  private held = false;
  /** The pool's pump. */
  private wake: (() => void) | undefined = undefined;

  /** @param maxPending - how many results may wait before only the straggler may start (a standalone reorder: `Infinity`). */
  constructor(private readonly maxPending = Infinity) {}

  /**
   * How many calls a run pulls from its source and holds unanswered at most: the most that can be out
   * of the pool and not yet out in order (see the bound above). The straggler and `maxPending +
   * concurrency - 1` calls ahead of it at most hold memory while the straggler can start; pulling more
   * would only queue them.
   */
  static pullLimit(maxPending: number, concurrency: number): number {
    return maxPending + concurrency;
  }

  /** The pool: `wake` is called when a result arrives after `mayStart` said no (a call may start now). */
  wakes(wake: () => void): void {
    this.wake = wake;
  }

  /** The pool: the result of `index` leaves it (told before it is passed on: it is outstanding until it is out). */
  answered(index: number): void {
    this.given++;
    if (index !== this.open) {
      this.answeredAbove.add(index);
      return;
    }
    this.open++;
    while (this.answeredAbove.delete(this.open)) this.open++;
  }

  /** The pool: whether the call of `index` may start now (its first start); `idle` when nothing runs. */
  mayStart(index: number, idle: boolean): boolean {
    const outstanding = this.given - this.turn;
    // Behind an earlier result not yet out: all outstanding ones but the straggler's own, on its way.
    const waiting = this.open > this.turn ? outstanding - 1 : outstanding;
    if (waiting < this.maxPending || index === this.turn || (idle && outstanding === this.early.size)) return true;
    this.held = true;
    return false;
  }

  /** The reorder: `item` arrived; it is returned if its turn has come (and the turn moves on), else kept. */
  take(item: T): T | undefined {
    if (item.index === this.turn) {
      this.turn++;
      return item;
    }
    this.early.set(item.index, item);
    return undefined;
  }

  /** The reorder: the kept item whose turn has come now, if any (and the turn moves on). */
  following(): T | undefined {
    const item = this.early.get(this.turn);
    if (item === undefined) return undefined;
    this.early.delete(this.turn);
    this.turn++;
    return item;
  }

  /** The reorder: an arrival is handled (given out, or kept): the pool, if it was held back, looks again. */
  arrived(): void {
    if (!this.held) return;
    this.held = false;
    this.wake?.();
  }

  /** What a clean end finds still kept: a gap, an index that never arrived. */
  gap(): { readonly missing: number; readonly kept: number } | undefined {
    return this.early.size === 0 ? undefined : { missing: this.turn, kept: this.early.size };
  }
}
