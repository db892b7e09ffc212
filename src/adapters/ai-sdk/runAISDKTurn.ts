import type { AssistantModelMessage, ModelMessage } from 'ai';
import type { Pipeline } from '../../types/pipeline.js';
import { checkSecret, settleRun } from '../loop/index.js';
import type { AISDKStep, AISDKTurn, AISDKTurnOptions } from './aisdkTurn.js';
import { aisdkTurnOf } from './aisdkTurnOf.js';
import { fromAISDKStream } from './fromAISDKStream.js';

/**
 * Runs one `streamText` step through the pipeline and assembles what the next call needs: each call
 * starts the moment its `tool-call` part arrives (as with `fromAISDKStream`), while the model is still
 * streaming — the SDK itself would wait for the step to end — and the assistant message is the SDK's
 * own assembly of the same step (`result.response`). Give `streamText` the tools without `execute`
 * (`toAISDKTools(pipeline)`), so the SDK never runs them, and the default `stopWhen` (one step): the
 * loop is yours — {@link runAISDKLoop}, or `streamText`, `runAISDKTurn`, push `turn.messages`, until
 * `turn.outcome` is not `'next'`.
 *
 * Every call in the assistant message gets exactly one `tool-result` part, in order; a call the stream
 * cut off is in neither (the SDK records only complete calls). A call the provider sent twice in the
 * step (a Responses item replayed: the SDK reports it twice, under one id) runs once, and the assistant
 * message holds it once — a provider rejects a history with a call id twice.
 *
 * On a journaled pipeline with `{ turn }`, a call whose approval is suspended (`suspendApprovals()`)
 * does not fail the step: the turn resolves `'suspended'`, with the results so far, the pending
 * approvals, and the assistant message carrying them as `tool-approval-request` parts (the approval id
 * is the signed token) and a `continuation`. Go on with {@link continueAISDKTurn} once the answers are
 * in the history, in any process sharing the journal and the secret. A turn another process drives
 * resolves `'turn_leased'` or `'lease_lost'`; send nothing to the model then.
 *
 * @param pipeline The pipeline that runs the calls (one per process; each turn is a `run()` of it).
 * @param step What `streamText(...)` returned; its `fullStream` is read here (read no other branch).
 * @param options Passed to `pipeline.run()`: `signal` stops the turn, and every call still gets a
 *   result; `turn` makes the step a durable turn (one id per step: a turn is one model response).
 * @returns The turn, once every call has its result (or is suspended) and the step has ended.
 * @throws {ConfigError} (as a rejection, before anything runs) for a `secret` under 32 bytes.
 * @throws {SourceError} (as a rejection) when the stream fails midway (an `error` part), with the
 *   results so far. `DurableTurnError` `turn_exists` when the journal holds the turn already.
 *
 * @example
 * ```ts
 * import { streamText, type ModelMessage } from 'ai';
 * import { openai } from '@ai-sdk/openai';
 * import { runAISDKTurn, toAISDKTools } from 'toolstream/ai-sdk';
 *
 * const tools = toAISDKTools(pipeline);
 * const messages: ModelMessage[] = [{ role: 'user', content: 'Summarise the TODOs in notes/' }];
 * for (let step = 0; step < 20; step++) {
 *   const turn = await runAISDKTurn(pipeline, streamText({ model: openai.chat('gpt-4.1'), tools, messages }));
 *   messages.push(...turn.messages);
 *   if (turn.done) break;
 * }
 * ```
 */
export async function runAISDKTurn(pipeline: Pipeline, step: AISDKStep, options: AISDKTurnOptions = {}): Promise<AISDKTurn> {
  checkSecret('runAISDKTurn', options.secret);
  const { step: stepNumber = 1, secret, ...run } = options;
  const settled = await settleRun(pipeline, options.turn, pipeline.run(fromAISDKStream(step.fullStream), run));
  // Refused before it ran, the step is not read (the lease holder answers it); lost midway, its calls
  // are in the history all the same, and the turn's new driver answers them.
  const known = settled.kind !== 'turn_leased';
  return aisdkTurnOf(pipeline, settled, {
    assistant: known ? assistantOf((await step.response).messages) : [],
    text: known ? await step.text : '',
    turn: options.turn,
    step: stepNumber,
    ...(secret === undefined ? {} : { secret }),
  });
}

/** The step's assistant messages, as the SDK assembled them, each tool call once. */
function assistantOf(messages: readonly ModelMessage[]): AssistantModelMessage[] {
  return eachCallOnce(messages.filter((message): message is AssistantModelMessage => message.role === 'assistant'));
}

/**
 * The assistant messages with each tool call once: the SDK reports a call the provider sent twice in
 * its step twice, and the adapter emitted it once (`fromAISDKStream`: each call id once per step).
 */
function eachCallOnce(messages: readonly AssistantModelMessage[]): AssistantModelMessage[] {
  const seen = new Set<string>();
  return messages.map((message) => {
    if (typeof message.content === 'string') return message;
    const content = message.content.filter((part) => {
      if (part.type !== 'tool-call') return true;
      if (seen.has(part.toolCallId)) return false;
      seen.add(part.toolCallId);
      return true;
    });
    return content.length === message.content.length ? message : { ...message, content };
  });
}
