import type { Decision } from '../../types/decision.js';
import type { ResultStatus } from '../../types/toolResult.js';

/**
 * One thing a run did that toolstream's invariants forbid, discriminated on `code`; `message` says it
 * in a sentence. Indexes are calls' arrival indexes (`result.index`).
 * - `missing_result`, `duplicate_result`, `unexpected_result`, `out_of_order`, `id_mismatch`: every call
 *   gets exactly one result, in model order, carrying its id (invariant 1);
 * - `concurrency_exceeded`: more than `concurrency` bodies ran at once (invariant 2);
 * - `exclusive_overlap`: an exclusive call's body overlapped another body (invariant 3);
 * - `not_admitted`: a body ran for a call neither allowed nor approved (invariant 5);
 * - `started_after_cancel`: a body ran for a call its result says was cancelled before it started
 *   (invariant 6);
 * - `start_not_reported`: a body ran for a call whose result says it never started.
 *
 * @example
 * ```ts
 * const report = checkInvariants({ calls, results, tools, concurrency: 2 });
 * if (!report.ok) for (const v of report.violations) if (v.code === 'exclusive_overlap') console.log(v.index, v.overlapping);
 * ```
 */
export type InvariantViolation =
  | { readonly code: 'missing_result'; readonly index: number; readonly id: string | undefined; readonly message: string }
  | { readonly code: 'duplicate_result'; readonly index: number; readonly id: string; readonly position: number; readonly message: string }
  | { readonly code: 'unexpected_result'; readonly index: number; readonly id: string; readonly position: number; readonly message: string }
  | { readonly code: 'out_of_order'; readonly index: number; readonly position: number; readonly after: number; readonly message: string }
  | { readonly code: 'id_mismatch'; readonly index: number; readonly expected: string; readonly received: string; readonly message: string }
  | { readonly code: 'concurrency_exceeded'; readonly index: number; readonly running: readonly number[]; readonly concurrency: number; readonly message: string }
  | { readonly code: 'exclusive_overlap'; readonly index: number; readonly overlapping: readonly number[]; readonly message: string }
  | { readonly code: 'not_admitted'; readonly index: number; readonly id: string; readonly decision: Decision | undefined; readonly message: string }
  | { readonly code: 'started_after_cancel'; readonly index: number; readonly id: string; readonly message: string }
  | { readonly code: 'start_not_reported'; readonly index: number; readonly id: string; readonly status: ResultStatus; readonly message: string };

/**
 * The code of an {@link InvariantViolation}.
 *
 * @example
 * ```ts
 * const ordering: InvariantViolationCode[] = ['missing_result', 'duplicate_result', 'out_of_order'];
 * ```
 */
export type InvariantViolationCode = InvariantViolation['code'];

/**
 * What {@link checkInvariants} found: `{ ok: true }`, or every violation, in the order found.
 *
 * @example
 * ```ts
 * const report: InvariantReport = checkInvariants(run);
 * expect(report).toEqual({ ok: true }); // on failure, the diff lists each violation's message
 * ```
 */
export type InvariantReport = { readonly ok: true } | { readonly ok: false; readonly violations: readonly InvariantViolation[] };

/** A violation without its message: the message is derived from the fields. */
type Fields<V> = V extends InvariantViolation ? Omit<V, 'message'> : never;

const list = (indexes: readonly number[]) => indexes.map((i) => `#${i}`).join(', ');

/** The violation, with its message. */
export function violation(fields: Fields<InvariantViolation>): InvariantViolation {
  return { ...fields, message: describe(fields) } as InvariantViolation;
}

function describe(v: Fields<InvariantViolation>): string {
  switch (v.code) {
    case 'missing_result':
      return `call #${v.index}${v.id === undefined ? '' : ` (${v.id})`} got no result`;
    case 'duplicate_result':
      return `call #${v.index} (${v.id}) got a second result, at position ${v.position}`;
    case 'unexpected_result':
      return `the result at position ${v.position} is for call #${v.index} (${v.id}), which was never sent`;
    case 'out_of_order':
      return `the result of call #${v.index} came at position ${v.position}, after the result of call #${v.after}: not in model order`;
    case 'id_mismatch':
      return `the result of call #${v.index} carries id ${JSON.stringify(v.received)}, not the call's ${JSON.stringify(v.expected)}`;
    case 'concurrency_exceeded':
      return `call #${v.index} started while ${v.running.length - 1} other bodies ran (${list(v.running)}): more than concurrency ${v.concurrency}`;
    case 'exclusive_overlap':
      return `the body of exclusive call #${v.index} overlapped ${list(v.overlapping)}`;
    case 'not_admitted':
      return `the body of call #${v.index} (${v.id}) ran, but the call was ${v.decision === undefined ? 'never decided' : `decided '${v.decision}'`} and not approved`;
    case 'started_after_cancel':
      return `the body of call #${v.index} (${v.id}) ran, but its result says it was cancelled before it started`;
    case 'start_not_reported':
      return `the body of call #${v.index} (${v.id}) ran, but its result (${v.status}) says it never started`;
  }
}
