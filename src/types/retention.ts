// Output budgets: how much of a tool's output reaches the model. (A leaf: imports nothing from src/.)

/**
 * How much of a tool's output reaches the model. Items are counted as a stream is collected (memory
 * stays bounded); text is cut after post-execute policies, with an in-band note of what was omitted.
 *
 * @example
 * ```ts
 * const budget: RetentionBudget = { maxItems: 1000, maxChars: 30_000, maxLines: 400, keep: 'head+tail' };
 * ```
 */
export interface RetentionBudget {
  /** Items of a streamed output kept; the rest are counted. */
  readonly maxItems?: number;
  /** Characters of `content` kept. */
  readonly maxChars?: number;
  /** Lines of `content` kept. */
  readonly maxLines?: number;
  /** Keep the start, or the start and the end. @default 'head' */
  readonly keep?: 'head' | 'head+tail';
}
