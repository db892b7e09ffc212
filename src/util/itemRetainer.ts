import { ConfigError } from './errors.js';
import { isCount } from './validate.js';

/**
 * Keeps the first `maxItems` items of a stream and counts the rest, so memory stays bounded while
 * the count stays exact.
 *
 * A tool that streams a million rows should cost the model (and the process) no more than the rows it
 * will be shown; yet "and 999 900 more" must be a true number, so the items past the limit are counted,
 * not stored. Each `push` is O(1); reading `kept` copies nothing.
 *
 * Invariant: `kept.length + omitted === total`, and `kept` holds the first `min(total, maxItems)` items
 * in the order they were pushed.
 *
 * @typeParam T - the item type.
 *
 * @example
 * ```ts
 * const rows = new ItemRetainer<Row>(100);
 * for await (const row of queryRows(sql)) rows.push(row);
 * render(rows.kept); // at most 100 rows
 * if (rows.omitted > 0) note(`[... ${rows.omitted} more rows omitted]`);
 * ```
 */
export class ItemRetainer<T> {
  /** The items kept so far; never longer than `maxItems`. */
  readonly #kept: T[] = [];
  /** Items pushed after `#kept` was full. */
  #omitted = 0;

  /**
   * @param maxItems - how many items to keep: a non-negative integer, or `Infinity` to keep them all.
   * @throws {ConfigError} when `maxItems` is anything else; the message says what was given.
   *
   * @example
   * ```ts
   * new ItemRetainer<string>(0);  // keeps nothing, counts everything
   * new ItemRetainer<string>(-1); // ConfigError: "ItemRetainer: `maxItems` must be a non-negative
   *                               //   integer or Infinity; received -1"
   * ```
   */
  constructor(readonly maxItems: number) {
    // Validated here, not at the first push: a bad budget is a configuration mistake, found when built.
    if (!isCount(maxItems, 0)) throw new ConfigError('ItemRetainer', 'maxItems', 'a non-negative integer or Infinity', maxItems);
  }

  /**
   * Offer the next item: kept while there is room, otherwise only counted.
   *
   * @example
   * ```ts
   * const r = new ItemRetainer<number>(1);
   * r.push(1);
   * r.push(2); // r.kept is [1], r.omitted is 1
   * ```
   */
  push(item: T): void {
    if (this.#kept.length < this.maxItems) this.#kept.push(item);
    else this.#omitted++;
  }

  /**
   * The kept items, first pushed first. A live, read-only view (not a copy): later pushes may extend it
   * until it is full, so snapshot it with `[...kept]` if you need it frozen before the stream ends.
   *
   * @example
   * ```ts
   * const r = new ItemRetainer<string>(2);
   * ['a', 'b', 'c'].forEach((x) => r.push(x));
   * r.kept; // ['a', 'b']
   * ```
   */
  get kept(): readonly T[] {
    return this.#kept;
  }

  /**
   * How many items were pushed but not kept.
   *
   * @example
   * ```ts
   * const r = new ItemRetainer<string>(2);
   * ['a', 'b', 'c'].forEach((x) => r.push(x));
   * r.omitted; // 1
   * ```
   */
  get omitted(): number {
    return this.#omitted;
  }

  /**
   * How many items were pushed in all: `kept.length + omitted`.
   *
   * @example
   * ```ts
   * const r = new ItemRetainer<string>(2);
   * ['a', 'b', 'c'].forEach((x) => r.push(x));
   * r.total; // 3
   * ```
   */
  get total(): number {
    return this.#kept.length + this.#omitted;
  }
}
