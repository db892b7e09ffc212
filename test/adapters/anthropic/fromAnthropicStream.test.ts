import { APIError, type Anthropic } from '@anthropic-ai/sdk';
import type { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import type { MessageStream } from '@anthropic-ai/sdk/lib/MessageStream';
import { Stream } from '@anthropic-ai/sdk/core/streaming';
import { concat, from, Subject, take, throwError } from 'rxjs';
import { beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { AnthropicStreamError, fromAnthropicStream, type AnthropicStreamEvent } from '../../../src/adapters/anthropic/index.js';
import { createPipeline, defineTool, IncompleteArguments, SourceError, type ToolCall, type ToolResult } from '../../../src/index.js';
import { ev, label, message, now, ran, settle, slowly, toolUse, weather } from './helpers.js';
import { withoutTurn } from '../withoutTurn.js';

const LONDON = ['{"location": "Lon', 'don, UK", "units": "celsius"}'];
const PARIS = ['{"location": "Paris, France", ', '"units": "celsius"}'];
const londonCall: ToolCall = { id: 'toolu_a', name: 'weather', args: LONDON.join('') };
const parisCall: ToolCall = { id: 'toolu_b', name: 'weather', args: PARIS.join('') };

const pipeline = createPipeline({ tools: [weather, now] });
/** The parts of a result these tests look at. */
const outline = (r: ToolResult) => (r.status === 'ok' ? `${r.id} ok ${r.content}` : `${r.id} ${r.status} ${r.error.code}`);

beforeEach(() => {
  ran.length = 0;
});

describe('fromAnthropicStream: which calls, and their arguments', () => {
  it("accepts the SDK's streams as they are typed (compile time)", () => {
    const accepts = (
      raw: Stream<Anthropic.RawMessageStreamEvent>,
      betaRaw: Stream<Anthropic.Beta.Messages.BetaRawMessageStreamEvent>,
      stream: MessageStream,
      betaStream: BetaMessageStream,
    ) => [fromAnthropicStream(raw), fromAnthropicStream(betaRaw), fromAnthropicStream(stream), fromAnthropicStream(betaStream)];
    expect(accepts).toBeTypeOf('function');
  });

  it('emits each tool_use block with its id, name and joined input_json_delta fragments, in block order', async () => {
    const events = message([ev.textStart(0), ev.text(0, 'Checking.'), ev.stop(0), ...toolUse(1, 'toolu_a', 'weather', LONDON), ...toolUse(2, 'toolu_b', 'weather', PARIS)]);
    expect(await settle(fromAnthropicStream(slowly(events)))).toEqual({ values: [londonCall, parisCall], error: undefined, completed: true });
  });

  it('reads an Observable source as well as an async iterable', async () => {
    const events = message([...toolUse(0, 'toolu_a', 'weather', LONDON)]);
    expect((await settle(fromAnthropicStream(from(events)))).values).toEqual([londonCall]);
  });

  it("gives '{}' for a call without arguments (no fragment, or only empty ones), and the tool runs", async () => {
    const events = message([...toolUse(0, 'toolu_none', 'now', []), ...toolUse(1, 'toolu_empty', 'now', ['', '']), ...toolUse(2, 'toolu_obj', 'now', ['{}'])]);
    const { values } = await settle(fromAnthropicStream(slowly(events)));
    expect(values).toEqual([
      { id: 'toolu_none', name: 'now', args: '{}' },
      { id: 'toolu_empty', name: 'now', args: '{}' },
      { id: 'toolu_obj', name: 'now', args: '{}' },
    ]);
    const results = await pipeline.run(fromAnthropicStream(slowly(events)));
    expect(results.map(outline)).toEqual(['toolu_none ok 12:00', 'toolu_empty ok 12:00', 'toolu_obj ok 12:00']);
  });

  it('keeps a non-empty start input when no fragment came (as the SDK accumulator does)', async () => {
    const events = message([ev.toolStart(0, 'toolu_a', 'weather', { location: 'London, UK', units: 'celsius' }), ev.stop(0)]);
    const { values } = await settle(fromAnthropicStream(from(events)));
    expect(values).toEqual([{ id: 'toolu_a', name: 'weather', args: { location: 'London, UK', units: 'celsius' } }]);
  });

  it('ignores ping events, between fragments or anywhere', async () => {
    const events = message([
      ev.ping(),
      ev.toolStart(0, 'toolu_a', 'weather'),
      ev.json(0, LONDON[0]!),
      ev.ping(),
      ev.json(0, LONDON[1]!),
      ev.ping(),
      ev.stop(0),
      ev.ping(),
    ]);
    expect((await settle(fromAnthropicStream(slowly(events)))).values).toEqual([londonCall]);
  });

  it('ignores server_tool_use blocks (they run on Anthropic’s side), their results, text and thinking', async () => {
    const events = message([
      ev.serverToolStart(0, 'srvtoolu_1', 'web_search'),
      ev.json(0, '{"query": "weather London"}'),
      ev.stop(0),
      { type: 'content_block_start', index: 1, content_block: { type: 'web_search_tool_result', tool_use_id: 'srvtoolu_1', content: [] } } as unknown as AnthropicStreamEvent,
      ev.stop(1),
      { type: 'content_block_start', index: 2, content_block: { type: 'thinking', thinking: '', signature: '' } } as unknown as AnthropicStreamEvent,
      { type: 'content_block_delta', index: 2, delta: { type: 'thinking_delta', thinking: 'Paris too.' } } as unknown as AnthropicStreamEvent,
      { type: 'content_block_delta', index: 2, delta: { type: 'signature_delta', signature: 'sig' } } as unknown as AnthropicStreamEvent,
      ev.stop(2),
      ...toolUse(3, 'toolu_b', 'weather', PARIS),
    ]);
    expect((await settle(fromAnthropicStream(slowly(events)))).values).toEqual([parisCall]);
  });

  it('ignores unknown event types, unknown deltas and malformed events', async () => {
    const events = [
      { type: 'future_event', index: 0, payload: { anything: true } },
      null,
      42,
      'message_stop',
      {},
      ev.messageStart(),
      ev.toolStart(0, 'toolu_a', 'weather'),
      { type: 'content_block_delta', index: 0, delta: { type: 'future_delta', partial_json: 'x' } },
      { type: 'content_block_delta', index: 0, delta: { type: 'input_json_delta', partial_json: 7 } },
      { type: 'content_block_delta', index: 0 },
      { type: 'content_block_delta', index: 9, delta: { type: 'input_json_delta', partial_json: 'x' } },
      ...LONDON.map((fragment) => ev.json(0, fragment)),
      { type: 'content_block_stop', index: '0' },
      { type: 'content_block_stop', index: 5 },
      ev.stop(0),
      ev.messageDelta('tool_use'),
      { type: 'message_annotation', note: 'new in some future API' },
      ev.messageStop(),
    ] as unknown as AnthropicStreamEvent[];
    expect(await settle(fromAnthropicStream(slowly(events)))).toEqual({ values: [londonCall], error: undefined, completed: true });
  });

  it('bad JSON: that call gets an invalid_json result and never runs; the others run', async () => {
    const events = message([
      ...toolUse(0, 'toolu_a', 'weather', LONDON),
      ...toolUse(1, 'toolu_bad', 'weather', ['{"location": London, ', '"units": "celsius"}']),
      ...toolUse(2, 'toolu_b', 'weather', PARIS),
    ]);
    const results = await pipeline.run(fromAnthropicStream(slowly(events)));
    expect(results.map(outline)).toEqual(['toolu_a ok London, UK: 15 °C', 'toolu_bad error invalid_json', 'toolu_b ok Paris, France: 18 °C']);
    expect(ran).toEqual(['London, UK', 'Paris, France']);
  });
});

describe('fromAnthropicStream: calls that never completed', () => {
  it('max_tokens while a block is open: the call is emitted with IncompleteArguments and never runs', async () => {
    const events = [
      ev.messageStart(),
      ...toolUse(0, 'toolu_a', 'weather', LONDON),
      ev.toolStart(1, 'toolu_b', 'weather'),
      ev.json(1, '{"location": "Par'),
      ev.messageDelta('max_tokens'),
      ev.messageStop(),
    ];
    const { values } = await settle(fromAnthropicStream(slowly(events)));
    expect(values).toEqual([londonCall, { id: 'toolu_b', name: 'weather', args: new IncompleteArguments('max_tokens', '{"location": "Par') }]);

    const results = await pipeline.run(fromAnthropicStream(slowly(events)));
    expect(results.map(outline)).toEqual(['toolu_a ok London, UK: 15 °C', 'toolu_b error incomplete_args']);
    expect(results[1]?.error).toMatchObject({ code: 'incomplete_args', reason: 'max_tokens' });
    expect(ran).toEqual(['London, UK']);
  });

  it('emits the cut-off call at the message_delta that reports it, not later', () => {
    const source = new Subject<AnthropicStreamEvent>();
    const seen: unknown[] = [];
    fromAnthropicStream(source).subscribe((call) => seen.push(call.args));
    for (const event of [ev.messageStart(), ev.toolStart(0, 'toolu_a', 'weather'), ev.json(0, '{"loc')]) source.next(event);
    expect(seen).toEqual([]);
    source.next(ev.messageDelta('max_tokens'));
    expect(seen).toEqual([new IncompleteArguments('max_tokens', '{"loc')]);
    source.next(ev.messageStop());
    source.complete();
    expect(seen).toHaveLength(1);
  });

  it('a block never stopped when the stream ends is cut off too (max_tokens)', async () => {
    const events = [ev.messageStart(), ...toolUse(0, 'toolu_a', 'weather', LONDON), ev.toolStart(1, 'toolu_b', 'weather'), ev.json(1, '{"loc')];
    expect(await settle(fromAnthropicStream(slowly(events)))).toEqual({
      values: [londonCall, { id: 'toolu_b', name: 'weather', args: new IncompleteArguments('max_tokens', '{"loc') }],
      error: undefined,
      completed: true,
    });
  });

  it('another stop reason with a block open (e.g. refusal) is the reason given', async () => {
    const events = [ev.messageStart(), ev.toolStart(0, 'toolu_a', 'weather'), ev.json(0, '{"loc'), ev.messageDelta('refusal'), ev.messageStop()];
    const { values } = await settle(fromAnthropicStream(from(events)));
    expect(values).toEqual([{ id: 'toolu_a', name: 'weather', args: new IncompleteArguments('refusal', '{"loc') }]);
  });

  it('a second start for an open index (a broken stream) cuts the first one off', async () => {
    const events = message([ev.toolStart(0, 'toolu_a', 'weather'), ev.json(0, '{"loc'), ...toolUse(0, 'toolu_b', 'weather', PARIS)]);
    const { values } = await settle(fromAnthropicStream(from(events)));
    expect(values).toEqual([{ id: 'toolu_a', name: 'weather', args: new IncompleteArguments('stream_error', '{"loc') }, parisCall]);
  });
});

describe('fromAnthropicStream: a source that fails midway', () => {
  const cut = new Error('connection reset');
  /** London complete, Paris half-way, then the source throws. */
  async function* breaking(): AsyncGenerator<AnthropicStreamEvent> {
    yield* slowly([ev.messageStart(), ...toolUse(0, 'toolu_a', 'weather', LONDON), ev.toolStart(1, 'toolu_b', 'weather'), ev.json(1, PARIS[0]!)]);
    throw cut;
  }
  const cutParis: ToolCall = { id: 'toolu_b', name: 'weather', args: new IncompleteArguments('stream_error', PARIS[0]!) };

  it('emits the open call as incomplete (stream_error), then errors with the original error', async () => {
    expect(await settle(fromAnthropicStream(breaking()))).toEqual({ values: [londonCall, cutParis], error: cut, completed: false });
  });

  it('the same from an Observable source', async () => {
    const events = [ev.messageStart(), ...toolUse(0, 'toolu_a', 'weather', LONDON), ev.toolStart(1, 'toolu_b', 'weather'), ev.json(1, PARIS[0]!)];
    const source = concat(from(events), throwError(() => cut));
    expect(await settle(fromAnthropicStream(source))).toEqual({ values: [londonCall, cutParis], error: cut, completed: false });
  });

  it('pipeline.run: complete calls still run, the cut one gets incomplete_args, and run rejects with a SourceError holding both', async () => {
    const failure = await pipeline.run(fromAnthropicStream(breaking())).then(
      () => undefined,
      (error: unknown) => error,
    );
    expect(failure).toBeInstanceOf(SourceError);
    const { results, cause } = failure as SourceError;
    expect(cause).toBe(cut);
    expect(results.map(outline)).toEqual(['toolu_a ok London, UK: 15 °C', 'toolu_b error incomplete_args']);
    expect(results[1]?.error).toMatchObject({ reason: 'stream_error' });
    expect(ran).toEqual(['London, UK']);
  });

  it('operator(): the results arrive first, then the error', async () => {
    const log: string[] = [];
    await new Promise<void>((resolve) => {
      fromAnthropicStream(breaking())
        .pipe(pipeline.operator())
        .subscribe({
          next: (result) => log.push(outline(result)),
          // A SourceError, as run() gives: the stream's error is its cause.
          error: (error: unknown) => (log.push(`error: ${(error as Error).name}: ${((error as Error).cause as Error).message}`), resolve()),
          complete: () => (log.push('complete'), resolve()),
        });
    });
    expect(log).toEqual(['toolu_a ok London, UK: 15 °C', 'toolu_b error incomplete_args', 'error: SourceError: connection reset']);
  });

  it('an error event in the stream: open calls cut off, then an AnthropicStreamError', async () => {
    const overloaded = ev.error('overloaded_error', 'Overloaded');
    const events = [ev.messageStart(), ...toolUse(0, 'toolu_a', 'weather', LONDON), ev.toolStart(1, 'toolu_b', 'weather'), ev.json(1, PARIS[0]!), overloaded, ev.stop(1)];
    const { values, error } = await settle(fromAnthropicStream(slowly(events)));
    expect(values).toEqual([londonCall, cutParis]);
    expect(error).toBeInstanceOf(AnthropicStreamError);
    expect((error as AnthropicStreamError).event).toBe(overloaded);
    expect((error as Error).message).toBe('the Anthropic stream failed: overloaded_error: Overloaded');
  });

  it('an SSE error event read by the SDK (which throws an APIError): the same, with the SDK’s error', async () => {
    const sse = [
      ['message_start', ev.messageStart()],
      ...toolUse(0, 'toolu_a', 'weather', LONDON).map((event) => [event.type, event] as const),
      ['content_block_start', ev.toolStart(1, 'toolu_b', 'weather')],
      ['content_block_delta', ev.json(1, PARIS[0]!)],
      ['error', { type: 'error', error: { type: 'overloaded_error', message: 'Overloaded' } }],
    ]
      .map(([name, data]) => `event: ${String(name)}\ndata: ${JSON.stringify(data)}\n\n`)
      .join('');
    const stream = Stream.fromSSEResponse<AnthropicStreamEvent>(new Response(sse), new AbortController());
    const { values, error } = await settle(fromAnthropicStream(stream));
    expect(values).toEqual([londonCall, cutParis]);
    expect(error).toBeInstanceOf(APIError);
  });
});

describe('fromAnthropicStream: early start', () => {
  it("starts the first call's body before the source yields the next block, let alone message_stop", async () => {
    const log: string[] = [];
    let firstStarted!: () => void;
    const started = new Promise<void>((resolve) => (firstStarted = resolve));
    const traced = defineTool({
      name: 'weather',
      description: 'weather',
      input: z.object({ location: z.string(), units: z.string() }),
      mode: 'parallel',
      execute: async ({ location }) => {
        log.push(`body started: ${location}`);
        firstStarted();
        return location;
      },
    });
    async function* model(): AsyncGenerator<AnthropicStreamEvent> {
      for (const event of [ev.messageStart(), ...toolUse(0, 'toolu_a', 'weather', LONDON)]) {
        log.push(`yield ${label(event)}`);
        yield event;
      }
      // The model "keeps generating" until the first body has started. (The timer only turns a
      // regression into a failed order assertion instead of a hang.)
      await Promise.race([started, new Promise((resolve) => setTimeout(resolve, 5_000))]);
      for (const event of [...toolUse(1, 'toolu_b', 'weather', PARIS), ev.messageDelta('tool_use'), ev.messageStop()]) {
        log.push(`yield ${label(event)}`);
        yield event;
      }
    }

    const results = await createPipeline({ tools: [traced] }).run(fromAnthropicStream(model()));

    expect(results.map((r) => r.status)).toEqual(['ok', 'ok']);
    const at = (entry: string) => {
      expect(log).toContain(entry);
      return log.indexOf(entry);
    };
    expect(at('body started: London, UK')).toBeGreaterThan(at('yield content_block_stop 0'));
    expect(at('body started: London, UK')).toBeLessThan(at('yield content_block_start 1'));
    expect(at('body started: London, UK')).toBeLessThan(at('yield message_stop'));
    expect(at('body started: Paris, France')).toBeGreaterThan(at('yield content_block_stop 1'));
  });

  it('emits a call at its content_block_stop, before anything after it arrives', () => {
    const source = new Subject<AnthropicStreamEvent>();
    const seen: string[] = [];
    fromAnthropicStream(source).subscribe((call) => seen.push(call.id));
    for (const event of [ev.messageStart(), ...toolUse(0, 'toolu_a', 'weather', LONDON)]) source.next(event);
    expect(seen).toEqual(['toolu_a']);
    for (const event of [ev.toolStart(1, 'toolu_b', 'weather'), ...PARIS.map((f) => ev.json(1, f))]) source.next(event);
    expect(seen).toEqual(['toolu_a']);
    source.next(ev.stop(1));
    expect(seen).toEqual(['toolu_a', 'toolu_b']);
  });
});

describe('fromAnthropicStream: subscriptions', () => {
  it("unsubscribing stops reading an async iterable: its iterator's return() is called and next() no more", async () => {
    const events = message([...toolUse(0, 'toolu_a', 'weather', LONDON), ...toolUse(1, 'toolu_b', 'weather', PARIS)]);
    const calls = { next: 0, return: 0 };
    let position = 0;
    const source: AsyncIterable<AnthropicStreamEvent> = {
      [Symbol.asyncIterator]: () => ({
        next: async () => (calls.next++, position < events.length ? { value: events[position++]!, done: false } : { value: undefined, done: true }),
        return: async () => (calls.return++, { value: undefined, done: true }),
      }),
    };
    const { values, completed } = await settle(fromAnthropicStream(source).pipe(take(1)));
    expect(values).toEqual([londonCall]);
    expect(completed).toBe(true);
    await new Promise((resolve) => setImmediate(resolve));
    // message_start and London's four events: its stop ends take(1), which unsubscribes
    expect(calls).toEqual({ next: 5, return: 1 });
  });

  it('unsubscribing while a read is pending: return() is called, and the late event is dropped', async () => {
    const calls = { return: 0 };
    let deliver!: (step: IteratorResult<AnthropicStreamEvent>) => void;
    const source: AsyncIterable<AnthropicStreamEvent> = {
      [Symbol.asyncIterator]: () => ({
        next: () => new Promise((resolve) => (deliver = resolve)),
        return: async () => (calls.return++, { value: undefined, done: true }),
      }),
    };
    const seen: unknown[] = [];
    const subscription = fromAnthropicStream(source).subscribe({ next: (call) => seen.push(call), error: (error: unknown) => seen.push(error) });
    await new Promise((resolve) => setImmediate(resolve));
    subscription.unsubscribe();
    expect(calls.return).toBe(1);
    deliver({ value: ev.toolStart(0, 'toolu_a', 'weather'), done: false });
    await new Promise((resolve) => setImmediate(resolve));
    expect(seen).toEqual([]);
  });

  it("an async generator source is closed (its finally runs) when the subscriber stops", async () => {
    let closed = false;
    async function* source(): AsyncGenerator<AnthropicStreamEvent> {
      try {
        yield* message([...toolUse(0, 'toolu_a', 'weather', LONDON), ...toolUse(1, 'toolu_b', 'weather', PARIS)]);
      } finally {
        closed = true;
      }
    }
    const { values } = await settle(fromAnthropicStream(source()).pipe(take(1)));
    expect(values).toEqual([londonCall]);
    await new Promise((resolve) => setImmediate(resolve));
    expect(closed).toBe(true);
  });

  it('unsubscribing from an Observable source unsubscribes it', () => {
    const source = new Subject<AnthropicStreamEvent>();
    const subscription = fromAnthropicStream(source).subscribe();
    expect(source.observed).toBe(true);
    subscription.unsubscribe();
    expect(source.observed).toBe(false);
  });

  it('keeps state per subscription: each reads the source anew', async () => {
    const events = message([...toolUse(0, 'toolu_a', 'weather', LONDON), ...toolUse(1, 'toolu_b', 'weather', PARIS)]);
    const replayable: AsyncIterable<AnthropicStreamEvent> = { [Symbol.asyncIterator]: () => slowly(events) };
    const calls$ = fromAnthropicStream(replayable);
    const [first, second] = await Promise.all([settle(calls$), settle(calls$)]);
    expect(first.values).toEqual([londonCall, parisCall]);
    expect(second.values).toEqual([londonCall, parisCall]);
  });

  it('a subscription that left with a block open leaves nothing behind for the next one', () => {
    const source = new Subject<AnthropicStreamEvent>();
    const calls$ = fromAnthropicStream(source);
    const events = message([...toolUse(0, 'toolu_a', 'weather', LONDON), ...toolUse(1, 'toolu_b', 'weather', PARIS)]);

    const firstSaw: unknown[] = [];
    const first = calls$.subscribe((call) => firstSaw.push(call));
    for (const event of events.slice(0, 7)) source.next(event); // London done, Paris open
    first.unsubscribe();
    expect(firstSaw.map(withoutTurn)).toEqual([londonCall]);

    const secondSaw: unknown[] = [];
    calls$.subscribe((call) => secondSaw.push(call));
    for (const event of events) source.next(event);
    source.complete();
    expect(secondSaw.map(withoutTurn)).toEqual([londonCall, parisCall]);
  });
});
