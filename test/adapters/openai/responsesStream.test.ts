import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { firstValueFrom, from, Observable, Subject, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  fromOpenAIResponsesStream,
  OpenAIResponsesStreamError,
  toOpenAIResponsesInput,
} from '../../../src/adapters/openai/index.js';
import { createPipeline, defineTool, IncompleteArguments, SourceError, type ToolCall } from '../../../src/index.js';
import { asAsync, functionCall, outline, response, sdkStream, sequence, toSSE } from './helpers.js';
import { dropTurns, withoutTurn } from '../withoutTurn.js';

const collect = (source: Observable<ToolCall>) => firstValueFrom(source.pipe(dropTurns(), toArray())); // turns: turns.test.ts

const ran: string[] = [];
const getWeather = defineTool({
  name: 'get_weather',
  description: 'Current weather',
  input: z.object({ location: z.string() }),
  mode: 'parallel',
  execute: ({ location }) => (ran.push(location), `${location}: 18°C, clear`),
});
const pipeline = createPipeline({ tools: [getWeather] });

const PARIS = '{"location":"Paris, France"}';
const TOKYO = '{"location":"Tokyo, Japan"}';
const paris = functionCall('fc_68a1f0c3a1b48190', 'call_Xr7pQ2mK9vLw3NsT', 'get_weather', PARIS);
const tokyo = functionCall('fc_68a1f0c3c9e08190', 'call_Bd4hJ8yF1cZq6WoE', 'get_weather', TOKYO);

/** What gpt-4.1 streams for two parallel function calls: each item added, its deltas, done, item done. */
function twoCalls(): ResponseStreamEvent[] {
  return sequence([
    { type: 'response.created', response: response('in_progress') },
    { type: 'response.in_progress', response: response('in_progress') },
    { type: 'response.output_item.added', output_index: 0, item: { ...paris, arguments: '', status: 'in_progress' } },
    ...['{"', 'location', '":"', 'Paris', ',', ' France', '"}'].map(
      (delta) => ({ type: 'response.function_call_arguments.delta', item_id: paris.id!, output_index: 0, delta }) as const,
    ),
    { type: 'response.function_call_arguments.done', item_id: paris.id!, output_index: 0, name: 'get_weather', arguments: PARIS },
    { type: 'response.output_item.done', output_index: 0, item: paris },
    { type: 'response.output_item.added', output_index: 1, item: { ...tokyo, arguments: '', status: 'in_progress' } },
    ...['{"', 'location', '":"', 'Tokyo', ',', ' Japan', '"}'].map(
      (delta) => ({ type: 'response.function_call_arguments.delta', item_id: tokyo.id!, output_index: 1, delta }) as const,
    ),
    { type: 'response.function_call_arguments.done', item_id: tokyo.id!, output_index: 1, name: 'get_weather', arguments: TOKYO },
    { type: 'response.output_item.done', output_index: 1, item: tokyo },
    { type: 'response.completed', response: response('completed', [paris, tokyo]) },
  ]);
}

const EXPECTED: ToolCall[] = [
  { id: 'call_Xr7pQ2mK9vLw3NsT', name: 'get_weather', args: PARIS },
  { id: 'call_Bd4hJ8yF1cZq6WoE', name: 'get_weather', args: TOKYO },
];

describe('fromOpenAIResponsesStream', () => {
  it('turns a realistic two-call stream (through the SDK’s SSE parser) into the calls, then function_call_output items', async () => {
    expect(await collect(fromOpenAIResponsesStream(sdkStream<ResponseStreamEvent>(toSSE(twoCalls()))))).toEqual(EXPECTED);

    const results = await pipeline.run(fromOpenAIResponsesStream(sdkStream<ResponseStreamEvent>(toSSE(twoCalls()))));
    expect(outline(results)).toEqual([
      ['call_Xr7pQ2mK9vLw3NsT', 'ok', undefined],
      ['call_Bd4hJ8yF1cZq6WoE', 'ok', undefined],
    ]);
    expect(toOpenAIResponsesInput(results)).toEqual([
      { type: 'function_call_output', call_id: 'call_Xr7pQ2mK9vLw3NsT', output: 'Paris, France: 18°C, clear' },
      { type: 'function_call_output', call_id: 'call_Bd4hJ8yF1cZq6WoE', output: 'Tokyo, Japan: 18°C, clear' },
    ]);
  });

  it('emits each call once, at its arguments’ done event, before the next item streams', () => {
    const source = new Subject<ResponseStreamEvent>();
    const seen: string[] = [];
    let completed = false;
    fromOpenAIResponsesStream(source).subscribe({ next: (call) => seen.push(call.id), complete: () => (completed = true) });
    const events = twoCalls();
    const at = (type: string, n = 0) => events.filter((e) => e.type === type)[n]!;
    for (const event of events) {
      source.next(event);
      if (event === at('response.function_call_arguments.done')) expect(seen).toEqual(['call_Xr7pQ2mK9vLw3NsT']);
      if (event === at('response.output_item.added', 1)) expect(seen).toEqual(['call_Xr7pQ2mK9vLw3NsT']);
    }
    expect(seen).toEqual(EXPECTED.map((c) => c.id)); // output_item.done did not emit them again
    expect(completed).toBe(true); // at response.completed, although the Subject never completed
    expect(source.observed).toBe(false);
  });

  it('emits at output_item.done when no arguments done event came', async () => {
    const events = twoCalls().filter((e) => e.type !== 'response.function_call_arguments.done');
    expect(await collect(fromOpenAIResponsesStream(from(events)))).toEqual(EXPECTED);
  });

  it('correlates interleaved deltas by item_id', async () => {
    const a = functionCall('fc_a', 'call_a', 'get_weather', '');
    const b = functionCall('fc_b', 'call_b', 'get_weather', '');
    const events = sequence([
      { type: 'response.output_item.added', output_index: 0, item: a },
      { type: 'response.output_item.added', output_index: 1, item: b },
      // output_index deliberately swapped: item_id decides when both sides have one
      { type: 'response.function_call_arguments.delta', item_id: 'fc_b', output_index: 0, delta: '{"location":' },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_a', output_index: 1, delta: '{"location":' },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_a', output_index: 1, delta: '"A"}' },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_b', output_index: 0, delta: '"B"}' },
      { type: 'response.output_item.done', output_index: 1, item: { ...b, arguments: '{"location":"B"}' } },
      { type: 'response.output_item.done', output_index: 0, item: { ...a, arguments: '{"location":"A"}' } },
      { type: 'response.completed', response: response('completed') },
    ]);
    // Without the final text of the done items, the concatenated deltas must be right on their own:
    const withoutFinalText = events.map((e) => (e.type === 'response.output_item.done' ? { ...e, item: { ...e.item, arguments: undefined } } : e));
    expect(await collect(fromOpenAIResponsesStream(from(withoutFinalText as ResponseStreamEvent[])))).toEqual([
      { id: 'call_b', name: 'get_weather', args: '{"location":"B"}' },
      { id: 'call_a', name: 'get_weather', args: '{"location":"A"}' },
    ]);
  });

  it('correlates by output_index when the items have no id', async () => {
    const a = functionCall(undefined, 'call_a', 'get_weather', '');
    const b = functionCall(undefined, 'call_b', 'get_weather', '');
    const events = sequence([
      { type: 'response.output_item.added', output_index: 2, item: a },
      { type: 'response.output_item.added', output_index: 3, item: b },
      { type: 'response.function_call_arguments.delta', item_id: '', output_index: 3, delta: '{"location":"B"}' },
      { type: 'response.function_call_arguments.delta', item_id: '', output_index: 2, delta: '{"location":"A"}' },
    ]);
    // The source just ends: both calls are open, so both are incomplete, with what arrived.
    expect(await collect(fromOpenAIResponsesStream(asAsync(events)))).toEqual([
      { id: 'call_a', name: 'get_weather', args: new IncompleteArguments('stream_ended', '{"location":"A"}') },
      { id: 'call_b', name: 'get_weather', args: new IncompleteArguments('stream_ended', '{"location":"B"}') },
    ]);
  });

  it('ignores other items: reasoning, messages, web searches', async () => {
    const events = sequence([
      { type: 'response.created', response: response('in_progress') },
      { type: 'response.output_item.added', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } },
      { type: 'response.reasoning_summary_text.delta', item_id: 'rs_1', output_index: 0, summary_index: 0, delta: 'Thinking' },
      { type: 'response.output_item.done', output_index: 0, item: { id: 'rs_1', type: 'reasoning', summary: [] } },
      {
        type: 'response.output_item.added',
        output_index: 1,
        item: { id: 'ws_1', type: 'web_search_call', status: 'in_progress', action: { type: 'search', query: 'weather' } },
      },
      { type: 'response.web_search_call.completed', item_id: 'ws_1', output_index: 1 },
      {
        type: 'response.output_item.added',
        output_index: 2,
        item: { id: 'msg_1', type: 'message', role: 'assistant', status: 'in_progress', content: [] },
      },
      { type: 'response.output_text.delta', item_id: 'msg_1', output_index: 2, content_index: 0, delta: 'Checking.', logprobs: [] },
      { type: 'response.output_item.added', output_index: 3, item: { ...paris, arguments: '' } },
      { type: 'response.function_call_arguments.delta', item_id: paris.id!, output_index: 3, delta: PARIS },
      { type: 'response.function_call_arguments.done', item_id: paris.id!, output_index: 3, name: 'get_weather', arguments: PARIS },
      { type: 'response.completed', response: response('completed', [paris]) },
    ]);
    expect(await collect(fromOpenAIResponsesStream(asAsync(events)))).toEqual([EXPECTED[0]]);
  });

  it('response.incomplete (max_output_tokens) with a call open → incomplete_args; complete calls still run', async () => {
    ran.length = 0;
    const cut = functionCall('fc_cut', 'call_cut', 'get_weather', '');
    const events = sequence([
      { type: 'response.output_item.added', output_index: 0, item: { ...paris, arguments: '' } },
      { type: 'response.function_call_arguments.done', item_id: paris.id!, output_index: 0, name: 'get_weather', arguments: PARIS },
      { type: 'response.output_item.added', output_index: 1, item: cut },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_cut', output_index: 1, delta: '{"location":"Osl' },
      {
        type: 'response.incomplete',
        response: response('incomplete', [paris, { ...cut, arguments: '{"location":"Osl', status: 'in_progress' }], {
          incomplete_details: { reason: 'max_output_tokens' },
        }),
      },
    ]);
    expect(await collect(fromOpenAIResponsesStream(from(events)))).toEqual([
      EXPECTED[0],
      { id: 'call_cut', name: 'get_weather', args: new IncompleteArguments('max_tokens', '{"location":"Osl') },
    ]);
    const results = await pipeline.run(fromOpenAIResponsesStream(asAsync(events)));
    expect(outline(results)).toEqual([
      ['call_Xr7pQ2mK9vLw3NsT', 'ok', undefined],
      ['call_cut', 'error', 'incomplete_args'],
    ]);
    expect(results[1]?.error).toMatchObject({ reason: 'max_tokens' });
    expect(ran).toEqual(['Paris, France']);
  });

  it('a function_call item done with status incomplete is not run', async () => {
    const events = sequence([
      { type: 'response.output_item.added', output_index: 0, item: { ...paris, arguments: '' } },
      { type: 'response.output_item.done', output_index: 0, item: { ...paris, arguments: '{"loc', status: 'incomplete' } },
    ]);
    expect(await collect(fromOpenAIResponsesStream(from(events)))).toEqual([
      { id: paris.call_id, name: 'get_weather', args: new IncompleteArguments('incomplete', '{"loc') },
    ]);
  });

  it('response.completed with a call still open: taken whole from the final output, else incomplete', async () => {
    const other = functionCall('fc_other', 'call_other', 'get_weather', '');
    const events = sequence([
      { type: 'response.output_item.added', output_index: 0, item: { ...paris, arguments: '' } },
      { type: 'response.function_call_arguments.delta', item_id: paris.id!, output_index: 0, delta: '{"loc' },
      { type: 'response.output_item.added', output_index: 1, item: other },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_other', output_index: 1, delta: '{"loc' },
      { type: 'response.completed', response: response('completed', [paris]) },
    ]);
    expect(await collect(fromOpenAIResponsesStream(from(events)))).toEqual([
      EXPECTED[0],
      { id: 'call_other', name: 'get_weather', args: new IncompleteArguments('stream_ended', '{"loc') },
    ]);
  });

  it('an error event: open calls incomplete, then the Observable errors; run() rejects with SourceError', async () => {
    const events = sequence([
      { type: 'response.output_item.added', output_index: 0, item: { ...paris, arguments: '' } },
      { type: 'response.function_call_arguments.done', item_id: paris.id!, output_index: 0, name: 'get_weather', arguments: PARIS },
      { type: 'response.output_item.added', output_index: 1, item: { ...tokyo, arguments: '' } },
      { type: 'response.function_call_arguments.delta', item_id: tokyo.id!, output_index: 1, delta: '{"loca' },
      { type: 'error', code: 'server_error', message: 'The server had an error while processing your request.', param: null },
    ]);
    const rejection = await pipeline.run(fromOpenAIResponsesStream(sdkStream<ResponseStreamEvent>(toSSE(events)))).then(
      () => expect.fail('run() resolved'),
      (e: unknown) => e,
    );
    expect(rejection).toBeInstanceOf(SourceError);
    const { results, cause } = rejection as SourceError;
    expect(outline(results)).toEqual([
      ['call_Xr7pQ2mK9vLw3NsT', 'ok', undefined],
      ['call_Bd4hJ8yF1cZq6WoE', 'error', 'incomplete_args'],
    ]);
    expect(results[1]?.error).toMatchObject({ reason: 'stream_error' });
    expect(cause).toBeInstanceOf(OpenAIResponsesStreamError);
    expect(cause).toMatchObject({
      code: 'server_error',
      message: 'OpenAI stream error (server_error): The server had an error while processing your request.',
    });
    expect((cause as OpenAIResponsesStreamError).event.type).toBe('error');
  });

  it('response.failed: open calls incomplete, then an OpenAIResponsesStreamError; the rest of the source is ignored', async () => {
    let finished = false;
    let returned = false;
    async function* source() {
      try {
        yield* asAsync(
          sequence([
            { type: 'response.output_item.added', output_index: 0, item: { ...paris, arguments: '' } },
            { type: 'response.function_call_arguments.delta', item_id: paris.id!, output_index: 0, delta: '{"l' },
            {
              type: 'response.failed',
              response: response('failed', [], { error: { code: 'rate_limit_exceeded', message: 'Slow down.' } }),
            },
            // Nothing after a terminal event is taken:
            { type: 'response.output_item.done', output_index: 1, item: tokyo },
          ]),
        );
        finished = true;
      } finally {
        returned = !finished;
      }
    }
    const emitted: ToolCall[] = [];
    const error = await new Promise<unknown>((resolve) =>
      fromOpenAIResponsesStream(source()).subscribe({ next: (c) => emitted.push(c), error: resolve }),
    );
    expect(emitted.map(withoutTurn)).toEqual([{ id: paris.call_id, name: 'get_weather', args: new IncompleteArguments('stream_error', '{"l') }]);
    expect(error).toBeInstanceOf(OpenAIResponsesStreamError);
    expect((error as Error).message).toBe('OpenAI response failed (rate_limit_exceeded): Slow down.');
    await new Promise((resolve) => setTimeout(resolve, 5));
    // Let go of, not aborted (return() on the SDK's helper streams aborts the request), and not read
    // on: a connection that stays open may carry the next response, for another reader.
    expect(finished).toBe(false);
    expect(returned).toBe(false);
  });

  it('unsubscribing before the terminal event calls the iterator’s return()', async () => {
    const events = twoCalls().slice(0, 4);
    let returned = 0;
    const iterable: AsyncIterable<ResponseStreamEvent> = {
      [Symbol.asyncIterator]: () => {
        let i = 0;
        return {
          // The events, then a connection that stalls.
          next: () => (i < events.length ? Promise.resolve({ done: false, value: events[i++]! }) : new Promise(() => {})),
          return: async () => (returned++, { done: true, value: undefined }),
        };
      },
    };
    const subscription = fromOpenAIResponsesStream(iterable).subscribe();
    await new Promise((resolve) => setTimeout(resolve, 5));
    subscription.unsubscribe();
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(returned).toBe(1);
  });

  it('a source that throws: open calls incomplete, then the error as thrown', async () => {
    const cut = new TypeError('terminated');
    const source = new Observable<ResponseStreamEvent>((s) => {
      for (const event of sequence([{ type: 'response.output_item.added', output_index: 0, item: { ...paris, arguments: '' } }])) s.next(event);
      s.error(cut);
    });
    const emitted: ToolCall[] = [];
    const error = await new Promise<unknown>((resolve) => fromOpenAIResponsesStream(source).subscribe({ next: (c) => emitted.push(c), error: resolve }));
    expect(error).toBe(cut);
    expect(emitted).toEqual([{ id: paris.call_id, name: 'get_weather', args: new IncompleteArguments('stream_error', '') }]);
  });

  it('tolerates odd events: null, unknown types, deltas for unknown items, a done item never added', async () => {
    const odd = [
      null,
      { type: 'response.something_new', payload: 1 },
      { type: 'response.function_call_arguments.delta', item_id: 'fc_nobody', output_index: 9, delta: 'x' },
      { type: 'response.function_call_arguments.done', item_id: 'fc_nobody', output_index: 9, arguments: 'x' },
      { type: 'response.output_item.done', output_index: 0, item: paris },
      { type: 'response.output_item.done', output_index: 0, item: paris },
    ] as unknown as ResponseStreamEvent[];
    expect(await collect(fromOpenAIResponsesStream(from(odd)))).toEqual([EXPECTED[0]]);
  });
});

it('two responses over one long-lived async iterable: each reader takes its own response and leaves the rest', async () => {
  const connection = new Subject<ResponseStreamEvent>();
  const queue: ResponseStreamEvent[] = [];
  let wake: (() => void) | undefined;
  connection.subscribe((event) => (queue.push(event), wake?.()));
  const shared: AsyncIterable<ResponseStreamEvent> = {
    [Symbol.asyncIterator]: () => ({
      next: async () => {
        while (queue.length === 0) await new Promise<void>((resolve) => (wake = resolve));
        return { done: false, value: queue.shift()! };
      },
    }),
  };
  const response = (n: number): ResponseStreamEvent[] => {
    const item = { type: 'function_call', id: `fc_${n}`, call_id: `call_${n}`, name: 'get_weather', arguments: '', status: 'in_progress' } as const;
    return [
      { type: 'response.output_item.added', output_index: 0, item, sequence_number: 1 },
      { type: 'response.function_call_arguments.done', output_index: 0, item_id: item.id, arguments: '{}', sequence_number: 2 },
      { type: 'response.completed', sequence_number: 3 } as unknown as ResponseStreamEvent,
    ] as ResponseStreamEvent[];
  };
  const first = firstValueFrom(fromOpenAIResponsesStream(shared).pipe(toArray()));
  for (const event of response(1)) connection.next(event);
  expect((await first).map((c) => c.id)).toEqual(['call_1']);
  const second = firstValueFrom(fromOpenAIResponsesStream(shared).pipe(toArray()));
  for (const event of response(2)) connection.next(event);
  expect((await second).map((c) => c.id)).toEqual(['call_2']);
});
