import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import type {
  Response as OpenAIResponse,
  ResponseFunctionToolCall,
  ResponseOutputItem,
  ResponseStreamEvent,
} from 'openai/resources/responses/responses';
import { Stream } from 'openai/streaming';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolResult } from '../../../src/index.js';

type Delta = ChatCompletionChunk.Choice.Delta;
type Fragment = ChatCompletionChunk.Choice.Delta.ToolCall;
type FinishReason = ChatCompletionChunk.Choice['finish_reason'];

/** A Chat Completions chunk whose choice 0 carries `delta` (and `finish_reason`). */
export function chunk(delta: Delta, finish_reason: FinishReason = null): ChatCompletionChunk {
  return {
    id: 'chatcmpl-test',
    object: 'chat.completion.chunk',
    created: 1_727_346_178,
    model: 'gpt-4o-2024-08-06',
    choices: [{ index: 0, delta, logprobs: null, finish_reason }],
  };
}

/** A chunk of tool-call fragments. */
export const calls = (fragments: Fragment[], finish_reason: FinishReason = null): ChatCompletionChunk =>
  chunk({ tool_calls: fragments }, finish_reason);

/** The first fragment of a call: id, name and (often empty) arguments. */
export const first = (index: number, id: string, name: string, args = ''): Fragment => ({
  index,
  id,
  type: 'function',
  function: { name, arguments: args },
});

/** A later fragment of a call: arguments only. */
export const more = (index: number, args: string): Fragment => ({ index, function: { arguments: args } });

/** The last chunk of a turn: an empty delta with the finish reason. */
export const finish = (reason: NonNullable<FinishReason>): ChatCompletionChunk => chunk({}, reason);

/** The usage chunk `stream_options: { include_usage: true }` adds: no choices. */
export const usage = (): ChatCompletionChunk => ({
  id: 'chatcmpl-test',
  object: 'chat.completion.chunk',
  created: 1_727_346_178,
  model: 'gpt-4o-2024-08-06',
  choices: [],
  usage: { prompt_tokens: 10, completion_tokens: 20, total_tokens: 30 },
});

/** An async iterable over `items` that yields on later microtasks, like a network stream. */
export async function* asAsync<T>(items: Iterable<T>): AsyncGenerator<T, void, undefined> {
  for (const item of items) {
    await Promise.resolve();
    yield item;
  }
}

/** A promise with its resolver, for sources and bodies that wait on the test. */
export function gate(): { readonly promise: Promise<void>; open(): void } {
  let open!: () => void;
  const promise = new Promise<void>((resolve) => (open = resolve));
  return { promise, open };
}

/** A pipeline with one parallel `read_file` tool, and the paths its bodies read, in order. */
export function recordingTools() {
  const ran: string[] = [];
  const read = defineTool({
    name: 'read_file',
    description: 'Read a file',
    input: z.object({ path: z.string() }),
    mode: 'parallel',
    execute: ({ path }) => (ran.push(path), `contents of ${path}`),
  });
  return { ran, pipeline: createPipeline({ tools: [read] }) };
}

/** `[id, status, error code]` of each result, for compact assertions. */
export const outline = (results: readonly ToolResult[]) => results.map((r) => [r.id, r.status, r.error?.code]);

/** Parses SSE text with the SDK's own parser (`Stream.fromSSEResponse`), as `client.*.create({ stream: true })` does. */
export function sdkStream<T>(sse: string): Stream<T> {
  return Stream.fromSSEResponse<T>(new Response(sse), new AbortController());
}

/** Serializes events as the Responses API sends them: `event:` and `data:` lines, blank-line separated. */
export function toSSE(events: readonly ResponseStreamEvent[]): string {
  return events.map((event) => `event: ${event.type}\ndata: ${JSON.stringify(event)}\n\n`).join('');
}

// ---------------------------------------------------------------------------------------------------
// Responses API events, built with the SDK's types so they type-check.

/** A Response object in the given state. */
export function response(
  status: NonNullable<OpenAIResponse['status']>,
  output: ResponseOutputItem[] = [],
  more: Partial<OpenAIResponse> = {},
): OpenAIResponse {
  return {
    id: 'resp_68a1f0c2d4e08190b7c1a2b3c4d5e6f7',
    object: 'response',
    created_at: 1_755_000_000,
    status,
    error: null,
    incomplete_details: null,
    instructions: null,
    metadata: {},
    model: 'gpt-4.1-2025-04-14',
    output,
    output_text: '',
    parallel_tool_calls: true,
    temperature: 1,
    tool_choice: 'auto',
    tools: [],
    top_p: 1,
    ...more,
  };
}

/** A function_call output item. */
export function functionCall(
  id: string | undefined,
  call_id: string,
  name: string,
  args: string,
  status: ResponseFunctionToolCall['status'] = 'completed',
): ResponseFunctionToolCall {
  return { type: 'function_call', ...(id === undefined ? {} : { id }), call_id, name, arguments: args, status };
}

/** An event without its `sequence_number` (distributed over the union, so each event type-checks). */
export type Unnumbered = ResponseStreamEvent extends infer E ? (E extends unknown ? Omit<E, 'sequence_number'> : never) : never;

/** Numbers events in order (`sequence_number`), as the API does. */
export function sequence(events: Unnumbered[]): ResponseStreamEvent[] {
  return events.map((event, sequence_number) => ({ ...event, sequence_number }) as ResponseStreamEvent);
}
