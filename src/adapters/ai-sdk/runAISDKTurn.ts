import type { AssistantModelMessage, ModelMessage, ToolModelMessage } from 'ai';
import type { Pipeline, RunOptions } from '../../types/pipeline.js';
import type { ToolResult } from '../../types/toolResult.js';
import { fromAISDKStream, type AISDKStreamPart } from './fromAISDKStream.js';
import { toAISDKToolMessage } from './toAISDKToolMessage.js';

/**
 * What {@link runAISDKTurn} reads of a `streamText` result: its `fullStream`, and the SDK's own
 * assembly of the same step (`response`, `text`). `streamText(...)` returns one.
 *
 * @example
 * ```ts
 * const step: AISDKStep = streamText({ model, tools: toAISDKTools(pipeline), messages });
 * ```
 */
export interface AISDKStep {
  readonly fullStream: AsyncIterable<AISDKStreamPart> | ReadableStream<AISDKStreamPart>;
  readonly response: PromiseLike<{ readonly messages: readonly ModelMessage[] }>;
  readonly text: PromiseLike<string>;
}

/**
 * One model step, run: its tool calls' results and the messages that carry it into the next
 * `streamText` call. What {@link runAISDKTurn} resolves to.
 *
 * @example
 * ```ts
 * const turn: AISDKTurn = await runAISDKTurn(pipeline, streamText({ model, tools, messages }));
 * messages.push(...turn.messages);
 * ```
 */
export interface AISDKTurn {
  /** One result per tool call, in the model's order. Empty when the model called no tool. */
  readonly results: readonly ToolResult[];
  /** The tool message answering the calls (see `toAISDKToolMessage`); `undefined` when there is none to answer. */
  readonly toolMessage: ToolModelMessage | undefined;
  /**
   * What to append to `messages`: the step's assistant message, as the SDK assembled it
   * (`response.messages`, without the SDK's own error results for calls it found invalid: the
   * pipeline answers those; each tool call once), then `toolMessage` when there is one.
   */
  readonly messages: ModelMessage[];
  /** The text the model wrote in this step. */
  readonly text: string;
  /** Whether the model is done: no call to answer. Stop the loop here. */
  readonly done: boolean;
}

/**
 * Runs one `streamText` step through the pipeline and assembles what the next call needs: each call
 * starts the moment its `tool-call` part arrives (as with `fromAISDKStream`), while the model is still
 * streaming — the SDK itself would wait for the step to end — and the assistant message is the SDK's
 * own assembly of the same step (`result.response`). Give `streamText` the tools without `execute`
 * (`toAISDKTools(pipeline)`), so the SDK never runs them, and the default `stopWhen` (one step): the
 * loop is yours. An agent loop is then: `streamText`, `runAISDKTurn`, push `turn.messages`, stop when
 * `turn.done`.
 *
 * Every call in the assistant message gets exactly one `tool-result` part, in order; a call the stream
 * cut off is in neither (the SDK records only complete calls). A call the provider sent twice in the
 * step (a Responses item replayed: the SDK reports it twice, under one id) runs once, and the assistant
 * message holds it once — a provider rejects a history with a call id twice.
 *
 * @param pipeline The pipeline that runs the calls (one per process; each turn is a `run()` of it).
 * @param step What `streamText(...)` returned; its `fullStream` is read here (read no other branch).
 * @param options Passed to `pipeline.run()`: `signal` stops the turn, and every call still gets a result.
 * @returns The turn, once every call has its result and the step has ended.
 * @throws {SourceError} (as a rejection) when the stream fails midway (an `error` part), with the
 *   results so far.
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
export async function runAISDKTurn(pipeline: Pipeline, step: AISDKStep, options?: RunOptions): Promise<AISDKTurn> {
  const results = await pipeline.run(fromAISDKStream(step.fullStream), options);
  const response = await step.response;
  const answer = toAISDKToolMessage(results);
  const toolMessage = answer.content.length > 0 ? answer : undefined;
  const assistant = eachCallOnce(response.messages.filter((message): message is AssistantModelMessage => message.role === 'assistant'));
  return {
    results,
    toolMessage,
    messages: toolMessage === undefined ? assistant : [...assistant, toolMessage],
    text: await step.text,
    done: toolMessage === undefined,
  };
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
