import { DurableTurnError } from '../../durable/errors.js';
import { durabilityOf } from '../../durable/durability.js';
import type { JsonValue } from '../../types/json.js';
import type { ApprovalResponse, PendingApproval } from '../../types/pendingApproval.js';
import type { Pipeline } from '../../types/pipeline.js';
import type { ToolResult } from '../../types/toolResult.js';
import { issueContinuation, verifyContinuation } from './continuation.js';
import { ContinuationError } from './errors.js';
import type { Continuation, ContinuationOptions, DurableTurnFields, LoopProvider } from './outcome.js';

/**
 * How a run (or resume) of a turn ended, before a provider formats it: every call answered, calls
 * suspended, or a lease that stopped it (`turn_leased` before anything ran, `lease_lost` midway).
 *
 * @example
 * ```ts
 * const settled = await settleRun(pipeline, 'conv-1/1', pipeline.run(calls, { turn: 'conv-1/1' }));
 * if (settled.kind === 'suspended') console.log(settled.pending);
 * ```
 */
export interface Settlement {
  readonly kind: 'answered' | 'suspended' | 'turn_leased' | 'lease_lost';
  /** Every call's result in order (`answered`, `suspended`); those given out before (`lease_lost`); none (`turn_leased`). */
  readonly results: readonly ToolResult[];
  readonly pending: readonly PendingApproval[];
}

/**
 * Waits for a run of a turn (`pipeline.run(…, { turn })` or `pipeline.resume(turn)`) and says how it
 * ended: a lease refused or lost is an outcome, not an error, and a suspended call brings the turn's
 * pending approvals. Other failures reject as the run did.
 *
 * @example
 * ```ts
 * const settled = await settleRun(pipeline, turn, pipeline.resume(turn, { answers }));
 * ```
 */
export async function settleRun(pipeline: Pipeline, turn: string | undefined, run: Promise<readonly ToolResult[]>): Promise<Settlement> {
  let results: readonly ToolResult[];
  try {
    results = await run;
  } catch (error) {
    if (turn !== undefined && error instanceof DurableTurnError && error.code === 'turn_leased') return { kind: 'turn_leased', results: [], pending: [] };
    if (turn !== undefined && error instanceof DurableTurnError && error.code === 'lease_lost') return { kind: 'lease_lost', results: error.results, pending: [] };
    throw error;
  }
  if (turn === undefined || !results.some((result) => result.status === 'suspended')) return { kind: 'answered', results, pending: [] };
  return { kind: 'suspended', results, pending: await pipeline.pendingApprovals(turn) };
}

/**
 * What a provider says of its turn, to make the durable fields of it (see {@link durableFields}).
 *
 * @example
 * ```ts
 * const facts: TurnFacts = { provider: 'ai-sdk', turn: 'conv-1/2', step: 2, state: { messages }, done: false };
 * ```
 */
/**
 * Where a provider's turn stands, as its formatter needs it: the durable turn, its step, the secret of
 * its continuation, and whether its assistant message is known in full (see {@link readInFull}).
 *
 * @example
 * ```ts
 * const place: TurnPlace = { turn: 'conv-1/1', step: 1, known: readInFull(settled), secret: undefined };
 * ```
 */
export interface TurnPlace {
  readonly turn: string | undefined;
  readonly step: number;
  readonly known: boolean;
  readonly secret: ContinuationOptions['secret'];
}

/**
 * Whether a run read its model stream to the end, so the assistant message assembled from it is whole:
 * a run stopped by a lease (`turn_leased`, `lease_lost`) may not have. (A continued turn's message comes
 * from its continuation, whole.)
 *
 * @example
 * ```ts
 * const known = readInFull(await settleRun(pipeline, turn, pipeline.run(calls, { turn })));
 * ```
 */
export function readInFull(settled: Settlement): boolean {
  return settled.kind === 'answered' || settled.kind === 'suspended';
}

export interface TurnFacts extends ContinuationOptions {
  readonly provider: LoopProvider;
  /** The durable turn; `undefined` for a plain run (it never suspends). */
  readonly turn: string | undefined;
  readonly step: number;
  /** The provider's state for a continuation (the assistant message): `undefined` when it is not known in full. */
  readonly state: JsonValue | undefined;
  /** The model is done: it called no tool (and did not pause). */
  readonly done: boolean;
}

/**
 * The outcome, pending approvals and continuation of a settled turn.
 *
 * @example
 * ```ts
 * const fields = durableFields(pipeline, settled, { provider: 'anthropic', turn, step: 1, state: { message }, done: false });
 * ```
 */
export function durableFields(pipeline: Pipeline, settled: Settlement, facts: TurnFacts): DurableTurnFields {
  const { provider, turn, step, state } = facts;
  const continuation = () => (turn === undefined || state === undefined ? undefined : issueContinuation(pipeline, { provider, turn, step, state }, facts));
  if (settled.kind === 'answered') return { outcome: facts.done ? 'done' : 'next', pending: [], continuation: undefined, step };
  return { outcome: settled.kind, pending: settled.pending, continuation: continuation(), step };
}

/**
 * Options of the `continue…Turn` functions.
 *
 * @example
 * ```ts
 * const options: ContinueOptions = { answers: [{ token: approval.token, answer: 'allowed-once' }], signal };
 * ```
 */
export interface ContinueOptions extends ContinuationOptions {
  /** Answers to the turn's pending approvals (any of them; an unanswered one stays suspended). */
  readonly answers?: readonly ApprovalResponse[];
  /** Stops the resumed turn, as for `pipeline.resume`. */
  readonly signal?: AbortSignal;
}

/**
 * Checks a continuation, consumes it, and resumes its turn with the answers: the shared part of every
 * `continue…Turn`. In order: its shape, signature, provider and expiry (`verifyContinuation`); that this
 * pipeline's journal holds the turn; its nonce, consumed in the journal store (compare-and-set), so a
 * second submit is refused with `continuation_used` before anything runs; the answers, each one a
 * token the turn waits for; then `pipeline.resume(turn, { answers })`.
 *
 * @throws {ContinuationError} as the rejection, before anything ran (see its codes).
 * @throws {DurableTurnError} as `resume` does (a token that expired in between, the store failing).
 *
 * @example
 * ```ts
 * const { continuation, settled } = await continueDurableTurn(pipeline, body.continuation, 'ai-sdk', { answers });
 * ```
 */
export async function continueDurableTurn(
  pipeline: Pipeline,
  value: unknown,
  provider: LoopProvider,
  options: ContinueOptions = {},
): Promise<{ readonly continuation: Continuation; readonly settled: Settlement }> {
  const continuation = verifyContinuation(pipeline, value, provider, options);
  const { turn } = continuation;
  const { store } = durabilityOf(pipeline)!;
  if ((await store.read(turn)).length === 0) {
    throw new ContinuationError('continuation_wrong_pipeline', `This pipeline's journal does not hold turn ${JSON.stringify(turn)}: continue it with a pipeline on the store it ran in (or it was pruned).`);
  }
  if (!(await store.consume(turn, `continuation:${continuation.nonce}`))) {
    throw new ContinuationError('continuation_used', `This continuation of turn ${JSON.stringify(turn)} was submitted already: nothing ran, nothing was sent to the model.`);
  }
  const answers = options.answers ?? [];
  if (answers.length > 0) {
    const waiting = new Set((await pipeline.pendingApprovals(turn)).map((approval) => approval.token));
    const stale = answers.filter((answer) => !waiting.has(answer.token)).length;
    if (stale > 0) {
      const fresh = issueContinuation(pipeline, { provider, turn, step: continuation.step, state: continuation.state }, options);
      throw new ContinuationError('answer_not_pending', `${stale} of the ${answers.length} answer(s) given answer no approval turn ${JSON.stringify(turn)} waits for (answered already, or another turn's): nothing ran. Submit again with the error's \`continuation\`.`, fresh);
    }
  }
  const resume = pipeline.resume(turn, options.signal === undefined ? { answers } : { answers, signal: options.signal });
  return { continuation, settled: await settleRun(pipeline, turn, resume) };
}
