import type { JournalEntry } from '../types/journal.js';

/**
 * The one writer of a durable batch: the stages report a call's transitions here, and it appends them
 * to the store in order, batching what is reported within one tick into one `append` (one
 * transaction). `durable()` resolves once everything reported so far is in the store. Appends never
 * overlap, so the store sees the batch's entries in the order they happened.
 *
 * A failed append — the store's error, or a refusal (`append` throws: the lease was lost) — fails the
 * writer: every later `durable()` rejects with that error, so no body starts and no result is given out
 * as if it were recorded.
 */
export class JournalWriter {
  #queue: JournalEntry[] = [];
  /** Settles after the last flush scheduled so far. */
  #tail: Promise<void> = Promise.resolve();
  #scheduled = false;
  #failure: { readonly error: unknown } | undefined = undefined;

  constructor(
    /** Appends a batch under the writer's key (a turn, or a program's call in it), fenced by the turn's lease. */
    private readonly append: (entries: readonly JournalEntry[]) => Promise<void>,
    /** Where the batch's call `index` is kept in that journal: itself, unless given (a program's sub-calls, by slot). */
    private readonly indexOf?: (index: number) => number,
  ) {}

  write(entry: JournalEntry): void {
    this.#queue.push(this.indexOf === undefined || entry.kind === 'ended' ? entry : { ...entry, index: this.indexOf(entry.index) });
    this.#schedule();
  }

  /** Resolves when every entry written so far is durable; rejects if an append failed. */
  durable(): Promise<void> {
    if (this.#queue.length > 0) this.#schedule();
    return this.#tail;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    this.#tail = this.#tail.then(async () => {
      this.#scheduled = false;
      if (this.#failure !== undefined) throw this.#failure.error;
      const batch = this.#queue;
      this.#queue = [];
      if (batch.length === 0) return;
      try {
        await this.append(batch);
      } catch (error) {
        this.#failure = { error };
        throw error;
      }
    });
    this.#tail.catch(() => undefined); // reported through durable(), not as an unhandled rejection
  }
}
