import type { ApprovalPendingError } from '../types/toolError.js';
import type { ExecuteOutcome, Outcomes, Streamed, SuspendedOutcome, UnknownOutcome } from '../types/outcome.js';
import { describeValue } from './describe.js';

// The mark of an outcome: a registered symbol (`Symbol.for`), so the ESM and CJS builds of toolstream
// loaded in one process recognise each other's outcomes (a CJS `toolstream/bullmq` body in an ESM
// pipeline), and a non-enumerable property holding the kind, so equality checks and JSON ignore it.
const OUTCOME = Symbol.for('toolstream.outcome');

function marked<T extends ExecuteOutcome>(value: T): T {
  Object.defineProperty(value, OUTCOME, { value: value.kind });
  return Object.freeze(value);
}

/**
 * Typed outcomes a body or an execute middleware may end an attempt with (see `ExecuteOutcome`):
 * returned or thrown, the same. The engine recognises only values made here (by any copy of
 * toolstream in the process); a plain object of the same shape is an ordinary value.
 *
 * @example
 * ```ts
 * // A body whose effect may or may not have happened: never retried, a failure of its mode.
 * const charge = defineTool({
 *   name: 'charge', description: 'Charge a card', input: z.object({ cents: z.number() }),
 *   execute: async ({ cents }, ctx) => {
 *     try {
 *       return await payments.charge(cents, { signal: ctx.signal });
 *     } catch (error) {
 *       if (isConnectionReset(error)) return outcome.unknown('the connection dropped after the charge was sent');
 *       throw error;
 *     }
 *   },
 * });
 * ```
 */
export const outcome: Outcomes = Object.freeze({
  unknown(message: string): UnknownOutcome {
    if (typeof message !== 'string') throw new TypeError(`outcome.unknown(message) takes a string; received ${describeValue(message)}`);
    return marked<UnknownOutcome>({ kind: 'outcome-unknown', message });
  },
  suspended(error: ApprovalPendingError): SuspendedOutcome {
    if (typeof error !== 'object' || error === null || error.code !== 'approval_pending') {
      throw new TypeError(`outcome.suspended(error) takes an ApprovalPendingError ({ code: 'approval_pending', … }); received ${describeValue(error)}`);
    }
    return marked<SuspendedOutcome>({ kind: 'suspended', error });
  },
  streamed<Items extends AsyncIterable<unknown> | readonly unknown[]>(items: Items): Streamed<Items> {
    if (!Array.isArray(items) && typeof (items as Partial<AsyncIterable<unknown>> | null)?.[Symbol.asyncIterator] !== 'function') {
      throw new TypeError(`outcome.streamed(items) takes an array or an AsyncIterable; received ${describeValue(items)}`);
    }
    return marked<Streamed<Items>>({ kind: 'streamed', items });
  },
  of: outcomeOf,
});

/**
 * `value` if it is an outcome made by `outcome` (by any copy of toolstream in the process), else
 * `undefined`. Never throws: a hostile value (a Proxy whose traps throw) is just a value.
 */
export function outcomeOf(value: unknown): ExecuteOutcome | undefined {
  if (typeof value !== 'object' || value === null) return undefined;
  try {
    return (value as Record<symbol, unknown>)[OUTCOME] === undefined ? undefined : (value as ExecuteOutcome);
  } catch {
    return undefined;
  }
}
