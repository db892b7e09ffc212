import type { JournalEntry } from '../types/journal.js';
import { isThenable, Later, type MaybeLater } from '../util/later.js';

/**
 * The one writer of a durable batch: the stages report a call's transitions here, and it appends them
 * to the store in order. `durable()` answers once everything reported so far is in the store. Appends
 * never overlap, so the store sees the batch's entries in the order they happened.
 *
 * 1. `durable()` with nothing written since the last append, none in flight and no failure: `undefined`
 *    — nothing to wait for.
 * 2. `durable()` with entries queued and no append in flight appends them **now**; a store that answers
 *    at once (`memoryJournal`, `sqliteJournal`) makes it done at once: `undefined`, synchronously, so a
 *    durable turn on such a store can follow a virtual-time scheduler. A store that answers later
 *    gives a `Later` that settles with its answer.
 * 3. While an append is in flight, what is written meanwhile waits and goes in one append right after
 *    it (whatever `durable()` calls asked for it meanwhile).
 * 4. `write()` also flushes a microtask later: what is written within one tick and not asked for before
 *    goes in one `append` (one transaction).
 *
 * A failed append — the store's error, or a refusal (`append` throws: the lease was lost) — fails the
 * writer: every later `durable()` rejects with that error, so no body starts and no result is given out
 * as if it were recorded.
 *
 * @example
 * ```ts
 * const writer = new JournalWriter((entries) => store.append(turn, entries, lease));
 * writer.write({ kind: 'started', index: 0, at: Date.now() });
 * const done = writer.durable(); // undefined: appended at once by a synchronous store
 * ```
 */
export class JournalWriter {
  #queue: JournalEntry[] = [];
  /** Settles after the last append in flight (and the one chained after it); undefined while none is. */
  #tail: Later<void> | undefined = undefined;
  /** An append of what is queued is chained after the one in flight. */
  #chained = false;
  /** A microtask flush is queued. */
  #ticking = false;
  #failure: { readonly error: unknown } | undefined = undefined;

  constructor(
    /** Appends a batch under the writer's key (a turn, or a program's call in it), fenced by the turn's lease; throws or rejects on failure. */
    private readonly append: (entries: readonly JournalEntry[]) => MaybeLater<void> | PromiseLike<void>,
    /** Where the batch's call `index` is kept in that journal: itself, unless given (a program's sub-calls, by slot). */
    private readonly indexOf?: (index: number) => number,
  ) {}

  write(entry: JournalEntry): void {
    this.#queue.push(this.indexOf === undefined || entry.kind === 'ended' ? entry : { ...entry, index: this.indexOf(entry.index) });
    if (this.#ticking) return;
    this.#ticking = true;
    queueMicrotask(this.#tick);
  }

  /**
   * Nothing once every entry written so far is durable (at once with a synchronous store); else a
   * `Later` that resolves when they are, or rejects if an append failed.
   */
  durable(): MaybeLater<void> {
    if (this.#failure !== undefined) return Later.rejected(this.#failure.error);
    if (this.#tail === undefined) return this.#follow(this.#flush());
    if (this.#queue.length > 0 && !this.#chained) {
      this.#chained = true;
      const after = () => {
        this.#chained = false;
        return this.#flush();
      };
      this.#follow(this.#tail.then(after, after));
    }
    return this.#tail;
  }

  readonly #tick = (): void => {
    this.#ticking = false;
    this.durable(); // a failure is reported through the next durable(), not here
  };

  /** Appends what is queued; `undefined` when the store answered at once (or nothing was queued). */
  #flush(): MaybeLater<void> {
    if (this.#failure !== undefined) return Later.rejected(this.#failure.error);
    const batch = this.#queue;
    if (batch.length === 0) return undefined;
    this.#queue = [];
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

  /** `flushed` is the append in flight now (if pending): `durable()` waits for it until it settles. */
  #follow(flushed: MaybeLater<void>): MaybeLater<void> {
    if (!(flushed instanceof Later)) return flushed;
    this.#tail = flushed;
    const settled = () => {
      if (this.#tail === flushed) this.#tail = undefined;
    };
    flushed.then(settled, settled);
    return flushed;
  }
}
