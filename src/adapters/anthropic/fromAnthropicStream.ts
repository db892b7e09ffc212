import { Observable } from 'rxjs';
import { SourceReader } from '../../stream/sourceReader.js';
import type { ToolCall } from '../../types/toolCall.js';
import type { AnthropicEventSource, AnthropicStreamEvent } from './events.js';
import { ToolUseAssembler } from './toolUseAssembler.js';

/**
 * The tool calls of an Anthropic Messages stream, each emitted the moment its arguments are complete,
 * so the pipeline starts running it while the model is still streaming the rest.
 *
 * **When a call is emitted.** A `tool_use` block's arguments arrive as `input_json_delta` fragments
 * between its `content_block_start` and its `content_block_stop`. The block is complete at its
 * `content_block_stop` — the precise event for "the next block starts, or the message stops with
 * `stop_reason: "tool_use"`" — so that is when the call `{ id, name, args }` is emitted, without
 * waiting for later blocks or the end of the message. `args` is the joined fragments as JSON text
 * (the pipeline's intake parses it, and answers bad JSON with an `invalid_json` result for that call
 * alone); a block without arguments gives `'{}'`; a block that got no fragment at all but started with
 * a non-empty `input` keeps that input, as the SDK's own accumulator does.
 *
 * **Programmatic tool calling.** When a program (the code execution tool) calls a client tool, the
 * continuation turn carries that `tool_use` block whole inside `message_start.message.content` (with
 * its `caller`), and no content-block events for it. Such a block is complete at `message_start`, so
 * it is emitted there, with its `input` as the `args`.
 *
 * **Only calls of the message being streamed.** A message runs from its `message_start` to its
 * `message_stop`. Content events outside one — before the first `message_start`, or after a
 * `message_stop` and before the next `message_start` — belong to no message the model is streaming
 * (a broken or tampered stream): they are ignored, and a `tool_use` among them is never emitted, so it
 * never runs. A source that carries several messages one after the other is read message by message.
 *
 * **Each call once per turn.** A turn is a message (its `message.id`). A `tool_use` block whose id the
 * turn already has — the same block in `message_start.message.content` and streamed, or replayed — is
 * the same call: it is emitted once, so it runs once and gets one result. A later message (another
 * id) that reuses an id holds a new call: it is emitted, and the pipeline answers it `duplicate_id`
 * when it reaches the same `run()` as the first (every adapter does the same across responses).
 *
 * **What is not ours.** `server_tool_use` and `mcp_tool_use` blocks run on Anthropic's side; text,
 * thinking and result blocks carry no call; `ping` and event types this adapter does not know are
 * skipped.
 *
 * **Calls that never completed still get a result, and never run.** A block that is open when the
 * model stops (`message_delta` with `stop_reason: "max_tokens"`, or another reason such as `refusal`),
 * or that never stopped when the message or the stream ended, is emitted with
 * `args: new IncompleteArguments(reason, partialText)` (reason: the `stop_reason`, else
 * `'max_tokens'`); the pipeline answers it with an `incomplete_args` error telling the model to send
 * it again. When the source fails midway — it throws or errors, or the stream carries an `error`
 * event — every open call is emitted with reason `'stream_error'` first, then the Observable errors
 * with the source's error (an {@link AnthropicStreamError} for an `error` event). The pipeline gives
 * every call it received its result before forwarding that error (`run()` rejects with a
 * `SourceError` holding them).
 *
 * **Which SDK reader.** Both work. `client.messages.stream()` (a `MessageStream`) also gives you the
 * assembled reply for the history (`finalMessage()`), but it parses each tool input itself at the
 * block's end and fails the whole stream on bad JSON: that call then arrives as incomplete
 * (`stream_error`) and the stream errors. With `client.messages.create({ …, stream: true })` (a raw
 * `Stream`), a call with bad JSON gets its own `invalid_json` result and the other calls run.
 *
 * **Subscription.** Cold: each subscription reads the source anew with its own state (an SDK stream
 * can be read only once). Unsubscribing stops reading: an Observable source is unsubscribed, an async
 * iterable's iterator is told `return()` (`MessageStream` aborts its request at once; the `Stream` of
 * `messages.create({ stream: true })` aborts once its pending read settles — pass a `signal` in the
 * request options to cut it at once). Subscribe right away: a `MessageStream` drops the events it
 * emitted before it was iterated.
 *
 * @param events The stream: what `client.messages.stream(…)` or `client.messages.create({ …, stream:
 *   true })` returns (or the beta variants), or any async iterable or Observable of those events.
 * @returns The calls in the order their blocks completed (the model's order); completes when the
 *   source does.
 *
 * @example
 * ```ts
 * import Anthropic from '@anthropic-ai/sdk';
 * import { createPipeline } from 'toolstream';
 * import { fromAnthropicStream, toAnthropicToolResults, toAnthropicTools } from 'toolstream/anthropic';
 *
 * const client = new Anthropic();
 * const pipeline = createPipeline({ tools: [weather] });
 * const messages: Anthropic.MessageParam[] = [{ role: 'user', content: 'Weather in London and Paris?' }];
 *
 * const stream = client.messages.stream({
 *   model: 'claude-sonnet-4-5',
 *   max_tokens: 1024,
 *   tools: toAnthropicTools(pipeline),
 *   messages,
 * });
 * // Each call starts as soon as its block is complete, while the model streams the next one.
 * const results = await pipeline.run(fromAnthropicStream(stream));
 * const reply = await stream.finalMessage();
 * messages.push({ role: 'assistant', content: reply.content });
 * if (results.length > 0) messages.push(toAnthropicToolResults(results));
 * ```
 */
export function fromAnthropicStream(events: AnthropicEventSource): Observable<ToolCall> {
  return readAnthropicCalls(events);
}

/**
 * `fromAnthropicStream`, with `onEvent` shown every event as it is read, before the calls it completes
 * are emitted (`runAnthropicTurn` assembles the assistant message from the same events). Internal.
 */
export function readAnthropicCalls(events: AnthropicEventSource, onEvent?: (event: AnthropicStreamEvent) => void): Observable<ToolCall> {
  return new Observable<ToolCall>((subscriber) => {
    const assembler = new ToolUseAssembler((call) => subscriber.next(call));
    const reader = new SourceReader<AnthropicStreamEvent>(
      events,
      {
        next: (event) => {
          onEvent?.(event);
          const failure = assembler.push(event);
          if (failure !== undefined) subscriber.error(failure);
        },
        error: (error) => {
          assembler.cutOff('stream_error');
          subscriber.error(error);
        },
        complete: () => {
          assembler.end();
          subscriber.complete();
        },
      },
      // Unsubscribing tells the iterator `return()` at once (see "Subscription" above).
      { stopSynchronously: true },
    );
    reader.start();
    return () => reader.stop();
  });
}
