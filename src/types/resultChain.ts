// The result chain: the final wrapping of every result before it is frozen. (A leaf: imports only from types/.)
import type { AnswerInput, NextAnswer } from './answer.js';
import type { ToolResult } from './toolResult.js';

/**
 * What a result middleware may change of a result, shared by the whole chain: change it in place,
 * before or after `await next()`. The status and the error are not in it: no middleware turns a
 * failure into success or the other way round.
 *
 * @example
 * ```ts
 * const stamp: ResultMiddleware = (draft) => {
 *   draft.meta.servedBy = hostname();
 * };
 * ```
 */
export interface ResultDraft {
  /** The model-facing text. Changing `value` does not render it again. */
  content: string;
  /** Metadata for the host (`result.meta`): a fresh object holding what post-execute policies added. */
  meta: Record<string, unknown>;
  /** The value of an `ok` result (`result.value`); `undefined`, and not used, for any other status. */
  value: unknown;
  /** The result as it was built before this chain (frozen): status, error, args, trace, timing, … */
  readonly result: ToolResult;
}

/**
 * Result middleware: the final wrapping of every result before it is frozen and given out — redact,
 * add metadata, count — for every call, denied and failed ones too (a tool's own chain: every call of
 * that tool). A waterfall over one {@link ResultDraft}: `next()` runs the rest of the chain once and
 * gives the draft as the rest left it, as a {@link NextAnswer} (await it, or pipe RxJS operators into
 * it). The chain always runs whole: a middleware that returns without calling `next()` has the rest run
 * after it, so none can skip a later one (a redaction).
 *
 * It answers nothing or the draft: at once, with a promise, or with an Observable (see
 * {@link AnswerInput}). An Observable is **one answer**: its first value counts and it is unsubscribed
 * then (`timer(5).pipe(map(() => draft))` finishes the result 5 ms later, on the pipeline's
 * `scheduler`); one that errors or completes without a value fails closed, and one still pending at
 * `policyTimeoutMs` is unsubscribed at that deadline. Anything but nothing or the draft, a throw, a
 * rejection, `next()` twice, a draft left without a string `content` or an object `meta`, or no answer
 * within `policyTimeoutMs` fails closed: an `ok` result's output is withheld (`error`, `policy_error`,
 * `stage: 'result'`); a failed result keeps its status, error and text. Synchronous while every
 * middleware answers at once. Results replayed from a durable turn's journal were wrapped when they
 * were first built and skip it.
 *
 * Order: the pipeline's `result` (outermost first), then the tool's `chains.result`.
 *
 * @example
 * ```ts
 * const redactKeys: ResultMiddleware = function redactKeys(draft) {
 *   draft.content = draft.content.replaceAll(/sk-[A-Za-z0-9]{20,}/g, '[redacted]');
 * };
 * const pipeline = createPipeline({ tools, result: [redactKeys] });
 * ```
 */
export type ResultMiddleware = (draft: ResultDraft, next: () => NextAnswer<ResultDraft>) => AnswerInput<void | ResultDraft>;
