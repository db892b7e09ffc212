import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import { isRecord, replayingFetch, type WireFormat } from './recordings.js';

/**
 * What a recording's calls must come out as, derived from the recording itself — never from
 * toolstream's output: the ids, names and arguments from the SDK's own accumulators
 * (`finalMessage()`, `finalResponse()`) or, for Chat Completions, a plain reading of the chunks that is
 * checked against `finalChatCompletion()` wherever the SDK can read the recording; and the event at
 * which each call became complete, from the events themselves.
 */
export interface ExpectedCall {
  readonly id: string;
  readonly name: string;
  /** The arguments as the model sent them, parsed; `undefined` for a call that is not `ok`. */
  readonly input: unknown;
  /** `ok`, or the error code the pipeline answers with. */
  readonly outcome: 'ok' | 'incomplete_args' | 'invalid_json';
  /** The index of the event at which the call became complete; the number of events for "at the end". */
  readonly at: number;
}

/** How the parser's stream ended. */
export type Ending = 'clean' | 'error';

export async function expectedCalls(format: WireFormat, events: readonly unknown[], ending: Ending, sse: string): Promise<ExpectedCall[]> {
  switch (format) {
    case 'chat':
      return expectedChatCalls(events, ending, sse);
    case 'anthropic':
      return expectedAnthropicCalls(events, ending, sse);
    case 'responses':
      return expectedResponsesCalls(events, sse);
  }
}

// ---------------------------------------------------------------------------------------------------
// Chat Completions

interface ChatCall {
  id: string;
  name: string;
  args: string;
  readonly index: number | undefined;
  at: number | undefined;
  outcome: ExpectedCall['outcome'];
}

/**
 * A plain reading of the chunks' `choices[0].delta.tool_calls`. A fragment continues the call being
 * streamed when it has the same `index` (or none) and brings no other non-empty `id`; otherwise it
 * starts the next call, and the one before is complete there. A `finish_reason` completes the open
 * call (cut off for `length` and `content_filter`). A clean end without one completes it only when its
 * arguments parse as a JSON object; an error leaves it cut off.
 */
async function expectedChatCalls(chunks: readonly unknown[], ending: Ending, sse: string): Promise<ExpectedCall[]> {
  const calls: ChatCall[] = [];
  const complete = (at: number, outcome: ExpectedCall['outcome'] = 'ok') => {
    const open = calls.at(-1);
    if (open !== undefined && open.at === undefined) Object.assign(open, { at, outcome });
  };
  chunks.forEach((chunk, at) => {
    const choices = isRecord(chunk) ? chunk['choices'] : undefined;
    const choice = Array.isArray(choices) ? (choices as unknown[]).find((c) => isRecord(c) && (c['index'] ?? 0) === 0) : undefined;
    if (!isRecord(choice)) return;
    const fragments = isRecord(choice['delta']) ? choice['delta']['tool_calls'] : undefined;
    for (const fragment of Array.isArray(fragments) ? (fragments as unknown[]) : []) {
      if (!isRecord(fragment)) continue;
      const id = typeof fragment['id'] === 'string' && fragment['id'] !== '' ? fragment['id'] : undefined;
      const index = typeof fragment['index'] === 'number' ? fragment['index'] : undefined;
      const last = calls.at(-1);
      const continues = last !== undefined && last.at === undefined && index === last.index && (id === undefined || id === last.id);
      if (!continues) {
        if (id === undefined && index !== undefined && calls.some((c) => c.index === index)) {
          throw new Error(`a fragment of the finished call at index ${index} arrived later: not a plain reading`);
        }
        complete(at);
        calls.push({ id: id ?? '', name: '', args: '', index, at: undefined, outcome: 'ok' });
      }
      const call = calls.at(-1)!;
      const fn = fragment['function'];
      if (isRecord(fn) && typeof fn['name'] === 'string' && fn['name'] !== '') call.name = fn['name'];
      if (isRecord(fn) && typeof fn['arguments'] === 'string') call.args += fn['arguments'];
    }
    const finish = choice['finish_reason'];
    if (typeof finish === 'string' && finish !== '') complete(at, finish === 'length' || finish === 'content_filter' ? 'incomplete_args' : 'ok');
  });
  const open = calls.at(-1);
  if (open !== undefined && open.at === undefined) {
    Object.assign(open, { at: chunks.length, outcome: ending === 'clean' && parsesToObject(open.args) ? 'ok' : 'incomplete_args' });
  }

  await agreeWithChatCompletionStream(chunks, calls, sse);
  return calls.map(({ id, name, args, at, outcome }) => withInput({ id, name, at: at!, outcome }, args === '' ? '{}' : args));
}

/**
 * Checks the plain reading against the SDK's own accumulator, where the SDK can read the recording:
 * every fragment indexed, one id per index, and a `finish_reason` (else `finalChatCompletion()`
 * rejects or merges calls that are not one).
 */
async function agreeWithChatCompletionStream(chunks: readonly unknown[], calls: readonly ChatCall[], sse: string): Promise<void> {
  const fragments = chunks.flatMap((chunk) => {
    const choice = isRecord(chunk) && Array.isArray(chunk['choices']) ? (chunk['choices'] as unknown[])[0] : undefined;
    const delta = isRecord(choice) ? choice['delta'] : undefined;
    return isRecord(delta) && Array.isArray(delta['tool_calls']) ? (delta['tool_calls'] as Record<string, unknown>[]) : [];
  });
  const idsByIndex = new Map<unknown, Set<unknown>>();
  for (const f of fragments) {
    if (typeof f['id'] === 'string' && f['id'] !== '') idsByIndex.set(f['index'], (idsByIndex.get(f['index']) ?? new Set()).add(f['id']));
  }
  const readable = fragments.every((f) => typeof f['index'] === 'number') && [...idsByIndex.values()].every((ids) => ids.size === 1);
  if (!readable) return;
  const client = new OpenAI({ apiKey: 'sk-corpus', baseURL: 'http://corpus.test/v1', fetch: replayingFetch(sse), maxRetries: 0 });
  const final = await client.chat.completions
    .stream({ model: 'recorded', messages: [] })
    .finalChatCompletion()
    .catch(() => undefined);
  if (final === undefined) return; // no finish_reason, or the stream failed: the SDK gives no answer
  const sdk = (final.choices[0]?.message.tool_calls ?? []).flatMap((call) =>
    call !== undefined && call.type === 'function' ? [{ id: call.id, name: call.function.name, args: call.function.arguments }] : [],
  );
  const ours = calls.filter((call) => call.outcome === 'ok').map(({ id, name, args }) => ({ id, name, args }));
  if (JSON.stringify(sdk) !== JSON.stringify(ours)) {
    throw new Error(`the plain reading disagrees with finalChatCompletion(): ${JSON.stringify(ours)} vs ${JSON.stringify(sdk)}`);
  }
}

// ---------------------------------------------------------------------------------------------------
// Anthropic Messages

/**
 * The `tool_use` blocks of `MessageStream.finalMessage()` (the SDK's accumulator): those inside
 * `message_start` (programmatic tool calling) are complete at that event, the others at their
 * `content_block_stop`; a block that never stopped was cut off.
 */
async function expectedAnthropicCalls(events: readonly unknown[], ending: Ending, sse: string): Promise<ExpectedCall[]> {
  const client = new Anthropic({ apiKey: 'sk-corpus', baseURL: 'http://corpus.test', fetch: replayingFetch(sse), maxRetries: 0 });
  const stream = client.messages.stream({ model: 'recorded', max_tokens: 1, messages: [] });
  const message = await stream.finalMessage().catch((error: unknown) => {
    if (ending === 'error') return undefined;
    throw error;
  });
  if (message === undefined) return [];
  const startAt = events.findIndex((event) => isRecord(event) && event['type'] === 'message_start');
  const start = events[startAt] as { message: { content: unknown[] } };
  return message.content.flatMap((block, position): ExpectedCall[] => {
    if (block.type !== 'tool_use') return [];
    const call = { id: block.id, name: block.name };
    if (position < start.message.content.length) return [{ ...call, input: block.input, outcome: 'ok', at: startAt }];
    const opened = events.findIndex(
      (event) => isRecord(event) && event['type'] === 'content_block_start' && isRecord(event['content_block']) && event['content_block']['id'] === block.id,
    );
    const index = (events[opened] as { index: number }).index;
    const stopAt = events.findIndex((event, at) => at > opened && isRecord(event) && event['type'] === 'content_block_stop' && event['index'] === index);
    if (stopAt === -1) return [{ ...call, input: undefined, outcome: 'incomplete_args', at: events.length }];
    return [{ ...call, input: block.input, outcome: 'ok', at: stopAt }];
  });
}

// ---------------------------------------------------------------------------------------------------
// Responses

/**
 * The `function_call` items of `ResponseStream.finalResponse()` (the response the server completed),
 * each complete at the first of its `response.function_call_arguments.done` and
 * `response.output_item.done`.
 */
async function expectedResponsesCalls(events: readonly unknown[], sse: string): Promise<ExpectedCall[]> {
  const client = new OpenAI({ apiKey: 'sk-corpus', baseURL: 'http://corpus.test/v1', fetch: replayingFetch(sse), maxRetries: 0 });
  const response = await client.responses.stream({ model: 'recorded', input: 'replay' }).finalResponse();
  return response.output.flatMap((item): ExpectedCall[] => {
    if (item.type !== 'function_call') return [];
    const at = events.findIndex(
      (event) =>
        isRecord(event) &&
        ((event['type'] === 'response.function_call_arguments.done' && event['item_id'] === item.id && item.id !== undefined) ||
          (event['type'] === 'response.output_item.done' && isRecord(event['item']) && event['item']['call_id'] === item.call_id)),
    );
    if (item.status === 'incomplete') return [{ id: item.call_id, name: item.name, input: undefined, outcome: 'incomplete_args', at }];
    return [withInput({ id: item.call_id, name: item.name, outcome: 'ok', at }, item.arguments)];
  });
}

// ---------------------------------------------------------------------------------------------------

/** The call with its arguments text parsed as the pipeline will (`invalid_json` when it is not JSON). */
function withInput(call: Omit<ExpectedCall, 'input'>, args: string): ExpectedCall {
  if (call.outcome !== 'ok') return { ...call, input: undefined };
  try {
    return { ...call, input: JSON.parse(args.trim() === '' ? '{}' : args) as unknown };
  } catch {
    return { ...call, input: undefined, outcome: 'invalid_json' };
  }
}

function parsesToObject(text: string): boolean {
  try {
    return isRecord(JSON.parse(text));
  } catch {
    return false;
  }
}
