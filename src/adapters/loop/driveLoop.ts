import type { ApprovalResponse, PendingApproval } from '../../types/pendingApproval.js';
import type { ToolResult } from '../../types/toolResult.js';
import { ConfigError } from '../../util/errors.js';
import { checkSecret } from './continuation.js';
import type { Continuation, ContinuationOptions, DurableTurnFields } from './outcome.js';
import type { StopCondition } from './stopConditions.js';

/**
 * What a loop's `request` is told besides the conversation: the step the response will be (1 for the
 * first; a loop re-entered from a continuation counts on) and the loop's `signal`.
 *
 * @example
 * ```ts
 * const request = (messages: MessageParam[], { step, signal }: LoopRequestContext) =>
 *   client.messages.create({ model, max_tokens: 4096, tools, messages, stream: true, metadata: { user_id: `step-${step}` } }, { signal });
 * ```
 */
export interface LoopRequestContext {
  /** The step the response will be (1 for the first; loops re-entered count on). */
  readonly step: number;
  /** The loop's `signal`: pass it to the client so an abort stops the request too. */
  readonly signal: AbortSignal | undefined;
}

/**
 * `maxSteps` unless set: a loop makes at most 20 model responses.
 *
 * @example
 * ```ts
 * const loop = await runAnthropicLoop(pipeline, { messages, request, maxSteps: DEFAULT_MAX_STEPS * 2 });
 * ```
 */
export const DEFAULT_MAX_STEPS = 20;

/**
 * What a loop needs of each provider's turn: the durable fields, the results and the text (the
 * messages to append come from `LoopSteps.messagesOf`).
 *
 * @example
 * ```ts
 * const turn: LoopTurn = await runAnthropicTurn(pipeline, stream);
 * ```
 */
export interface LoopTurn extends DurableTurnFields {
  readonly results: readonly ToolResult[];
  readonly text: string;
}

/**
 * The options every provider's loop takes (`runAnthropicLoop`, `runOpenAIChatLoop`,
 * `runOpenAIResponsesLoop`, and the AI SDK's), beside its history and its `request` function.
 *
 * @example
 * ```ts
 * const options: LoopOptions = { turn: `conv-${id}`, maxSteps: 10, stopWhen: hasToolCall('final_answer') };
 * ```
 */
export interface LoopOptions extends ContinuationOptions {
  /**
   * Makes each step a durable turn (the pipeline needs a `journal`): a string is the loop's id, and
   * step `n` runs as turn `${turn}/${n}`; a function names each step's turn. Without it, steps are
   * plain runs (nothing suspends).
   */
  readonly turn?: string | ((step: number) => string);
  /** The most model responses the loop makes, counted across continuations; then it stops with `'max_steps'`. @default 20 */
  readonly maxSteps?: number;
  /** Asked after each step whose calls were all answered: one that says `true` stops the loop (`'stopped'`). */
  readonly stopWhen?: StopCondition | readonly StopCondition[];
  /** Stops the loop: the running step's calls are cancelled (each gets a result), and no request follows (`'aborted'`). */
  readonly signal?: AbortSignal;
  /** Re-enters a loop that stopped `'suspended'` (or leased): its continuation, as received; the loop goes on from its step. */
  readonly continuation?: unknown;
  /** With `continuation`: the answers to its pending approvals. */
  readonly answers?: readonly ApprovalResponse[];
}

/**
 * Why a loop stopped:
 * - `'done'`: the model answered without calling a tool.
 * - `'stopped'`: a `stopWhen` condition said so; `'max_steps'`: the step limit was reached.
 * - `'aborted'`: the signal aborted.
 * - `'suspended'`, `'turn_leased'`, `'lease_lost'`: the last step's turn did (see `TurnOutcome`); a
 *   `continuation` re-enters the loop.
 *
 * @example
 * ```ts
 * if (loop.outcome === 'suspended') save(loop.messages, loop.continuation);
 * ```
 */
export type LoopOutcome = 'done' | 'stopped' | 'max_steps' | 'aborted' | 'suspended' | 'turn_leased' | 'lease_lost';

/**
 * What a loop resolves to.
 *
 * @example
 * ```ts
 * const loop: LoopResult<Anthropic.MessageParam, AnthropicTurn> = await runAnthropicLoop(pipeline, options);
 * ```
 */
export interface LoopResult<Message, Turn extends LoopTurn> {
  readonly outcome: LoopOutcome;
  /**
   * The conversation: the history given, then every step's messages (each assistant message followed
   * by its results). A suspended step's are not in it yet: its continuation brings them. Keep it with
   * the continuation, and pass it back as the history when you re-enter.
   */
  readonly messages: Message[];
  /** The turns this call ran (a continued one first), in order. */
  readonly steps: readonly Turn[];
  /** The last step's number (0 when none ran). */
  readonly step: number;
  /** The last step's text (`''` when none). */
  readonly text: string;
  /** For `'suspended'`: the approvals the last step waits for. */
  readonly pending: readonly PendingApproval[];
  /** For `'suspended'`, `'turn_leased'`, `'lease_lost'`: re-enters the loop (see `LoopOptions.continuation`). */
  readonly continuation: Continuation | undefined;
}

/**
 * How a provider runs a step and continues one, for {@link driveLoop}.
 *
 * @example
 * ```ts
 * const steps: LoopSteps<MessageParam, AnthropicTurn> = {
 *   where: 'runAnthropicLoop',
 *   run: async (messages, step, turn) => runAnthropicTurn(pipeline, await request(messages), { step, ...(turn === undefined ? {} : { turn }) }),
 *   resume: (continuation, answers) => continueAnthropicTurn(pipeline, continuation, { answers }),
 *   messagesOf: (turn) => turn.messages,
 * };
 * ```
 */
export interface LoopSteps<Message, Turn extends LoopTurn> {
  /** The loop the user called, named by the `ConfigError` for a bad option. */
  readonly where: 'runAnthropicLoop' | 'runOpenAIChatLoop' | 'runOpenAIResponsesLoop' | 'runAISDKLoop';
  /** Requests the next response with `messages` and runs it as step `step` (under `turn` when durable). */
  readonly run: (messages: readonly Message[], step: number, turn: string | undefined) => Promise<Turn>;
  /** Continues a step from its continuation (as received) with the answers. */
  readonly resume: (continuation: unknown, answers: readonly ApprovalResponse[]) => Promise<Turn>;
  /** What a step adds to the conversation (`turn.messages`; a Responses turn's `items`). */
  readonly messagesOf: (turn: Turn) => readonly Message[];
}

/**
 * The multi-step loop every provider shares: re-enters from a continuation when given one, then
 * requests, runs and appends step after step until the model is done, a stop condition or the step
 * limit says stop, the signal aborts, or a step's turn suspends or is leased. SDK-agnostic: the
 * provider's `run` makes the request with the caller's own client.
 *
 * @throws {ConfigError} (as the rejection, naming `steps.where`) for a `maxSteps` that is not a
 *   positive integer, or a `secret` under 32 bytes; before anything runs.
 *
 * @example
 * ```ts
 * const loop = await driveLoop({ messages, maxSteps: 10 }, {
 *   where: 'runAnthropicLoop',
 *   run: async (history, step, turn) => runAnthropicTurn(pipeline, await request(history), { turn, step }),
 *   resume: (continuation, answers) => continueAnthropicTurn(pipeline, continuation, { answers }),
 *   messagesOf: (turn) => turn.messages,
 * });
 * ```
 */
export async function driveLoop<Message, Turn extends LoopTurn>(
  options: LoopOptions & { readonly messages: readonly Message[] },
  steps: LoopSteps<Message, Turn>,
): Promise<LoopResult<Message, Turn>> {
  const { maxSteps = DEFAULT_MAX_STEPS, signal } = options;
  if (!Number.isSafeInteger(maxSteps) || maxSteps < 1) throw new ConfigError(steps.where, 'maxSteps', 'a positive integer', maxSteps);
  checkSecret(steps.where, options.secret);
  const conditions: readonly StopCondition[] = options.stopWhen === undefined ? [] : typeof options.stopWhen === 'function' ? [options.stopWhen] : options.stopWhen;
  const messages = [...options.messages];
  const ran: Turn[] = [];
  let last: Turn | undefined;
  const finish = (outcome: LoopOutcome): LoopResult<Message, Turn> => ({
    outcome,
    messages,
    steps: ran,
    step: last?.step ?? 0,
    text: last?.text ?? '',
    pending: last?.pending ?? [],
    continuation: last?.continuation,
  });
  const took = (turn: Turn) => {
    last = turn;
    ran.push(turn);
    messages.push(...steps.messagesOf(turn));
  };

  if (options.continuation !== undefined) took(await steps.resume(options.continuation, options.answers ?? []));
  for (;;) {
    if (last !== undefined) {
      if (last.outcome !== 'next') return finish(last.outcome);
      for (const condition of conditions) if (await condition({ step: last.step, steps: ran })) return finish('stopped');
      if (last.step >= maxSteps) return finish('max_steps');
    }
    if (signal?.aborted === true) return finish('aborted');
    const step = (last?.step ?? 0) + 1;
    took(await steps.run(messages, step, turnOf(options.turn, step)));
  }
}

function turnOf(turn: LoopOptions['turn'], step: number): string | undefined {
  if (turn === undefined) return undefined;
  return typeof turn === 'function' ? turn(step) : `${turn}/${step}`;
}
