import type { Decision, TraceEntry } from './decision.js';
import type { CallSlots } from './slots.js';
import type { AnyTool } from './tool.js';
import type { ResultStatus } from './toolResult.js';

/**
 * What a layer sees of one call while it moves through the stages: a read-only view that the
 * engine's record implements, so a layer's hooks take the call without importing the record (and
 * the record, which holds the hooks, does not import them back). Nothing is allocated: the view is
 * the record itself, typed narrower.
 *
 * The fields the call hooks (`CallHooks`) need today; it grows with them.
 *
 * @example
 * ```ts
 * const started = (call: CallView) => console.log(`${call.name} ${call.id} started at ${call.startedAt}`);
 * ```
 */
export interface CallView {
  /** The call's place in the model's order, from 0. */
  readonly index: number;
  readonly id: string;
  readonly name: string;
  /** The call's turn (`call.turn`); `undefined` for the subscription's anonymous turn. */
  readonly turn: string | undefined;
  /** The tool, once intake found it. */
  readonly tool: AnyTool | undefined;
  /** The arguments as sent: the JSON text, the snapshot of an object, or an `IncompleteArguments`. */
  readonly rawArgs: unknown;
  /** The admitted arguments (the schema's output, after rewrites), frozen; as sent until intake parsed them. */
  readonly args: unknown;
  /** The folded pre-execute decision; undefined until pre-execute ran (or when intake failed). */
  readonly decision: Decision | undefined;
  /** The policy whose decision set the final level (`'(default)'` when none did). */
  readonly decidedBy: string;
  /** The reasons the policies gave, in order. */
  readonly reasons: readonly string[];
  /** The policies' decisions and rewrites so far, in order. */
  readonly trace: readonly TraceEntry[] | undefined;
  /** Set once, when the outcome is decided; a call with a status is finished. */
  readonly status: ResultStatus | undefined;
  /** The body was invoked (or, with execute middleware, the chain in its place). */
  readonly started: boolean;
  /** When it was, on the pipeline's clock (`performance.now()`, or a virtual scheduler's frame), or 0. */
  readonly startedAt: number;
  /** State layers keep with the call, each under a key of its own (`CallKey`); the engine only stores it. */
  readonly slots: CallSlots;
}
