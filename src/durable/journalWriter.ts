import type { JournalEntry } from '../types/journal.js';
import { isThenable, Later, type MaybeLater } from '../util/later.js';

/**
 * The one writer of a durable batch: the stages report a call's transitions here, and it appends them
 * to the store in order. `durable()` answers once everything reported so far is in the store. Appends
 * never overlap, so the store sees the batch's entries in the order they happened.
 *
 * 1. What is written within one tick goes in one `append` (one transaction), a microtask later; what is
 *    written while an append is in flight goes in one append right after it.
 * 2. `durable()` with nothing written since the last append and none in flight: `undefined`, nothing
 *    to wait for. Else a `Later` that settles once the append holding the entries is done.
 * 3. `atOnce` (a batch on a virtual-time scheduler): `durable()` with nothing in flight appends what is
 *    queued **now**, and a store that answers at once (`memoryJournal`, `sqliteJournal`) makes it done
 *    at once: `undefined`, synchronously — virtual time cannot wait for a tick, which is real time.
 *    Each `durable()` is then an append of its own: on a real clock, batching per tick is kept, as one
 *    transaction per call start and end costs a store that syncs each commit to disk many times over.
 *
 * A failed append — the store's error, or a refusal (`append` throws: the lease was lost) — fails the
 * writer: every later `durable()` rejects with that error, so no body starts and no result is given out
 * as if it were recorded.
 *
 * @example
 * ```ts
 * const writer = new JournalWriter((entries) => store.append(turn, entries, lease), undefined, true);
 * writer.write({ kind: 'started', index: 0, at: Date.now() });
 * const done = writer.durable(); // undefined: appended at once by a synchronous store
 * ```
 */
export class JournalWriter {
  #queue: JournalEntry[] = [];
  /** The append in flight, with a store that answers later; undefined while none is. */
  #inFlight: Later<void> | undefined = undefined;
  /** Settles once the next append (of what is queued) is done; made when someone waits for it. */
  #next: Later<void> | undefined = undefined;
  /** A microtask flush is queued. */
  #ticking = false;
  #failure: { readonly error: unknown } | undefined = undefined;

  constructor(
    /** Appends a batch under the writer's key (a turn, or a program's call in it), fenced by the turn's lease; throws or rejects on failure. */
    private readonly append: (entries: readonly JournalEntry[]) => MaybeLater<void> | PromiseLike<void>,
    /** Where the batch's call `index` is kept in that journal: itself, unless given (a program's sub-calls, by slot). */
    private readonly indexOf?: (index: number) => number,
    /** `durable()` appends at once when nothing is in flight, instead of at the tick (see 3). */
    private readonly atOnce = false,
  ) {}

  write(entry: JournalEntry): void {
    this.#queue.push(this.indexOf === undefined || entry.kind === 'ended' ? entry : { ...entry, index: this.indexOf(entry.index) });
    if (this.#ticking) return;
    this.#ticking = true;
    queueMicrotask(this.#tick);
  }

  /**
   * Nothing once every entry written so far is durable (at once with a synchronous store, `atOnce`);
   * else a `Later` that resolves when they are, or rejects if an append failed.
   */
  durable(): MaybeLater<void> {
    if (this.#failure !== undefined) return Later.rejected(this.#failure.error);
    if (this.#queue.length === 0) return this.#inFlight;
    if (this.atOnce && this.#inFlight === undefined) return this.#flush();
    return (this.#next ??= new Later<void>());
  }

  /** The tick's flush; while an append is in flight, the one after it takes what is queued. */
  readonly #tick = (): void => {
    this.#ticking = false;
    if (this.#inFlight === undefined) this.#flush();
  };

  /** Appends what is queued (nothing is in flight); `undefined` when the store answered at once, or nothing was queued. */
  #flush(): MaybeLater<void> {
    const waiting = this.#next;
    this.#next = undefined;
    const done = this.#appendQueued();
    if (done instanceof Later) {
      this.#inFlight = done;
      const after = () => {
        this.#inFlight = undefined;
        if (this.#queue.length > 0) this.#flush();
      };
      done.then(after, after);
    }
    waiting?.resolve(done);
    return done;
  }

  #appendQueued(): MaybeLater<void> {
    const batch = this.#queue;
    this.#queue = [];
    if (this.#failure !== undefined) return Later.rejected(this.#failure.error); // failed: nothing is appended any more
    if (batch.length === 0) return undefined;
    let appended: MaybeLater<void> | PromiseLike<void>;
    try {
      appended = this.append(batch);
    } catch (error) {
      return this.#failed(error);
    }
    return isThenable(appended) ? Later.from(appended).then(undefined, (error: unknown) => this.#failed(error)) : undefined;
  }

  #failed(error: unknown): Later<never> {
    this.#failure ??= { error };
    return Later.rejected(this.#failure.error);
  }
}
