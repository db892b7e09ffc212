import { streamText, tool } from 'ai';
import { finalize, from, Subject, tap, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromAISDKStream, toAISDKToolMessage, type AISDKStreamPart } from '../../../src/adapters/ai-sdk/index.js';
import {
  createPipeline,
  IncompleteArguments,
  SourceError,
  type ToolCall,
  type ToolResult,
} from '../../../src/index.js';
import {
  collect,
  finish,
  modelOf,
  recordingTools,
  scriptedModel,
  sdkToolsOf,
  streamStep,
  type ModelPart,
} from './helpers.js';
import { withoutTurn } from '../withoutTurn.js';

/** Records the calls the adapter emits while the pipeline runs them (without the turn: turns.test.ts). */
function recorded(calls$: Observable<ToolCall>, calls: ToolCall[]): Observable<ToolCall> {
  return calls$.pipe(tap((call) => calls.push(withoutTurn(call))));
}

const text = (id: string, delta: string): ModelPart[] => [
  { type: 'text-start', id },
  { type: 'text-delta', id, delta },
  { type: 'text-end', id },
];

/** A tool call streamed as the SDK's providers do: input start, deltas, end, then the call. */
const streamedCall = (id: string, toolName: string, input: string): ModelPart[] => [
  { type: 'tool-input-start', id, toolName },
  { type: 'tool-input-delta', id, delta: input.slice(0, 5) },
  { type: 'tool-input-delta', id, delta: input.slice(5) },
  { type: 'tool-input-end', id },
  { type: 'tool-call', toolCallId: id, toolName, input },
];

describe('fromAISDKStream with a real streamText call', () => {
  it('emits the two tool calls of the stream (not the text), the pipeline runs them, and the tool message answers both', async () => {
    const { tools, events } = recordingTools();
    const pipeline = createPipeline({ tools: [...tools] });
    const model = modelOf([
      { type: 'stream-start', warnings: [] },
      ...text('t1', 'Let me look.'),
      ...streamedCall('call_1', 'read_file', '{"path":"a.txt"}'),
      { type: 'tool-call', toolCallId: 'call_2', toolName: 'add', input: '{"a":1,"b":2}' },
      finish('tool-calls'),
    ]);
    const step = streamStep(model, sdkToolsOf(tools));

    const calls: ToolCall[] = [];
    const results = await pipeline.run(recorded(fromAISDKStream(step.fullStream), calls));

    expect(calls).toEqual([
      { id: 'call_1', name: 'read_file', args: { path: 'a.txt' } },
      { id: 'call_2', name: 'add', args: { a: 1, b: 2 } },
    ]);
    expect(results.map((r) => [r.id, r.status, r.value])).toEqual([
      ['call_1', 'ok', 'contents of a.txt'],
      ['call_2', 'ok', 3],
    ]);
    expect(toAISDKToolMessage(results)).toEqual({
      role: 'tool',
      content: [
        { type: 'tool-result', toolCallId: 'call_1', toolName: 'read_file', output: { type: 'text', value: 'contents of a.txt' } },
        { type: 'tool-result', toolCallId: 'call_2', toolName: 'add', output: { type: 'text', value: '3' } },
      ],
    });
    expect(events.filter((e) => e.endsWith(':start')).sort()).toEqual(['body:call_1:start', 'body:call_2:start']);

    // The SDK ran nothing itself: its response holds the assistant message only, with both calls.
    const { messages } = await step.response;
    expect(messages.map((m) => m.role)).toEqual(['assistant']);
    expect(messages[0]!.content).toEqual([
      { type: 'text', text: 'Let me look.' },
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'read_file', input: { path: 'a.txt' } },
      { type: 'tool-call', toolCallId: 'call_2', toolName: 'add', input: { a: 1, b: 2 } },
    ]);
  });

  it('skips provider-executed calls and their input parts, even when the step is cut off', async () => {
    const { tools, events } = recordingTools();
    const pipeline = createPipeline({ tools: [...tools] });
    const model = modelOf([
      { type: 'tool-input-start', id: 'srv_1', toolName: 'web_search', providerExecuted: true, dynamic: true },
      { type: 'tool-input-delta', id: 'srv_1', delta: '{"query":"rxjs"}' },
      { type: 'tool-input-end', id: 'srv_1' },
      { type: 'tool-call', toolCallId: 'srv_1', toolName: 'web_search', input: '{"query":"rxjs"}', providerExecuted: true, dynamic: true },
      { type: 'tool-result', toolCallId: 'srv_1', toolName: 'web_search', result: { hits: 3 }, dynamic: true },
      { type: 'tool-call', toolCallId: 'call_1', toolName: 'add', input: '{"a":2,"b":2}' },
      { type: 'tool-input-start', id: 'srv_2', toolName: 'web_search', providerExecuted: true, dynamic: true },
      { type: 'tool-input-delta', id: 'srv_2', delta: '{"que' },
      finish('length'),
    ]);
    const step = streamStep(model, sdkToolsOf(tools));

    const seen: string[] = [];
    const calls: ToolCall[] = [];
    const parts$ = fromAISDKStream(step.fullStream);
    const results = await pipeline.run(
      recorded(parts$, calls).pipe(tap({ complete: () => seen.push('complete') })),
    );

    expect(calls).toEqual([{ id: 'call_1', name: 'add', args: { a: 2, b: 2 } }]);
    expect(results.map((r) => [r.id, r.status, r.content])).toEqual([['call_1', 'ok', '4']]);
    expect(events).toEqual(['body:call_1:start']);
    expect(seen).toEqual(['complete']);
  });

  it('a call cut off by max tokens is emitted with IncompleteArguments and answered incomplete_args; the complete one runs', async () => {
    const { tools, events } = recordingTools();
    const pipeline = createPipeline({ tools: [...tools] });
    const model = modelOf([
      ...streamedCall('call_1', 'read_file', '{"path":"a.txt"}'),
      { type: 'tool-input-start', id: 'call_2', toolName: 'read_file' },
      { type: 'tool-input-delta', id: 'call_2', delta: '{"path":' },
      { type: 'tool-input-delta', id: 'call_2', delta: '"src/ind' },
      finish('length'),
    ]);
    const step = streamStep(model, sdkToolsOf(tools));

    const calls: ToolCall[] = [];
    const results = await pipeline.run(recorded(fromAISDKStream(step.fullStream), calls));

    expect(calls).toEqual([
      { id: 'call_1', name: 'read_file', args: { path: 'a.txt' } },
      { id: 'call_2', name: 'read_file', args: new IncompleteArguments('max_tokens', '{"path":"src/ind') },
    ]);
    expect(calls[1]!.args).toBeInstanceOf(IncompleteArguments);
    expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
      ['call_1', 'ok', undefined],
      ['call_2', 'error', 'incomplete_args'],
    ]);
    expect(results[1]!.error).toMatchObject({ code: 'incomplete_args', reason: 'max_tokens' });
    expect(results[1]!.started).toBe(false);
    expect(events.filter((e) => e.endsWith(':start'))).toEqual(['body:call_1:start']);
    // The SDK records only complete tool-call parts in the assistant message, so the cut-off call has
    // no place in the history: its result is left out of the tool message.
    expect(toAISDKToolMessage(results)).toEqual({
      role: 'tool',
      content: [{ type: 'tool-result', toolCallId: 'call_1', toolName: 'read_file', output: { type: 'text', value: 'contents of a.txt' } }],
    });
    expect(results[1]!.content).toMatch(/cut off.*max_tokens.*Send the call again/);
  });

  it('an error part midway: complete calls still run, the open one gets incomplete_args, the error comes after the results', async () => {
    const { tools, events } = recordingTools();
    const pipeline = createPipeline({ tools: [...tools] });
    const boom = new Error('overloaded');
    const model = modelOf([
      ...streamedCall('call_1', 'read_file', '{"path":"a.txt"}'),
      { type: 'tool-input-start', id: 'call_2', toolName: 'add' },
      { type: 'tool-input-delta', id: 'call_2', delta: '{"a":1,' },
      { type: 'error', error: boom },
      // streamText goes on after an error part; the adapter stops reading there.
      { type: 'tool-call', toolCallId: 'call_3', toolName: 'add', input: '{"a":1,"b":1}' },
      finish('error'),
    ]);
    const step = streamStep(model, sdkToolsOf(tools));

    const calls: ToolCall[] = [];
    const seen: string[] = [];
    await new Promise<void>((resolve) => {
      recorded(fromAISDKStream(step.fullStream), calls)
        .pipe(pipeline.operator())
        .subscribe({
          next: (result) => seen.push(`result:${result.id}:${result.status}:${result.error?.code ?? ''}`),
          error: (error: unknown) => {
            // A SourceError, as run() gives: the model's error is its cause.
            seen.push(`error:${error instanceof SourceError && error.cause === boom ? 'SourceError: overloaded' : String(error)}`);
            resolve();
          },
          complete: () => resolve(),
        });
    });

    expect(calls).toEqual([
      { id: 'call_1', name: 'read_file', args: { path: 'a.txt' } },
      { id: 'call_2', name: 'add', args: new IncompleteArguments('stream_error', '{"a":1,') },
    ]);
    expect(seen).toEqual(['result:call_1:ok:', 'result:call_2:error:incomplete_args', 'error:SourceError: overloaded']);
    expect(events).toEqual(['body:call_1:start', 'body:call_1:end']);

    // With run(): a SourceError holding both results, caused by the model's error.
    const again = streamStep(
      modelOf([
        { type: 'tool-call', toolCallId: 'call_1', toolName: 'add', input: '{"a":1,"b":2}' },
        { type: 'tool-input-start', id: 'call_2', toolName: 'add' },
        { type: 'error', error: boom },
      ]),
      sdkToolsOf(tools),
    );
    const failure = await pipeline.run(fromAISDKStream(again.fullStream)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SourceError);
    expect((failure as SourceError).cause).toBe(boom);
    expect((failure as SourceError).results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
      ['call_1', 'ok', undefined],
      ['call_2', 'error', 'incomplete_args'],
    ]);
  });

  it('a model stream that breaks (the fullStream throws): open calls become incomplete, then the error', async () => {
    const { tools } = recordingTools();
    const pipeline = createPipeline({ tools: [...tools] });
    const broken = new Error('socket hang up');
    const model = scriptedModel(async function* () {
      yield { type: 'tool-call', toolCallId: 'call_1', toolName: 'add', input: '{"a":1,"b":2}' };
      yield { type: 'tool-input-start', id: 'call_2', toolName: 'add' };
      yield { type: 'tool-input-delta', id: 'call_2', delta: '{"a"' };
      await new Promise((resolve) => setTimeout(resolve, 5));
      throw broken;
    });
    const step = streamStep(model, sdkToolsOf(tools));

    const failure = await pipeline.run(fromAISDKStream(step.fullStream)).catch((error: unknown) => error);
    expect(failure).toBeInstanceOf(SourceError);
    expect((failure as SourceError).cause).toBe(broken);
    expect((failure as SourceError).results.map((r) => [r.id, r.status, r.error])).toEqual([
      ['call_1', 'ok', undefined],
      ['call_2', 'error', expect.objectContaining({ code: 'incomplete_args', reason: 'stream_error' })],
    ]);
  });

  it('calls the SDK marks invalid are emitted and answered with an error result, never run', async () => {
    const { tools, events, readFile, add } = recordingTools();
    const pipeline = createPipeline({ tools: [...tools] });
    const model = modelOf([
      { type: 'tool-call', toolCallId: 'bad_json', toolName: 'read_file', input: '{"path":' },
      { type: 'tool-call', toolCallId: 'bad_args', toolName: 'add', input: '{"a":1,"b":"two"}' },
      { type: 'tool-call', toolCallId: 'no_tool', toolName: 'delete_everything', input: '{}' },
      { type: 'tool-call', toolCallId: 'good', toolName: 'add', input: '{"a":1,"b":2}' },
      finish('tool-calls'),
    ]);
    // The SDK validates with the same zod schemas here, so it flags the schema failure too. (Inline: a
    // tool set without `execute` declared ahead is not assignable to ToolSet under exactOptionalPropertyTypes.)
    const step = streamStep(model, {
      read_file: tool({ description: readFile.description, inputSchema: readFile.input }),
      add: tool({ description: add.description, inputSchema: add.input }),
    });

    const calls: ToolCall[] = [];
    // Each read of `fullStream` is a branch of its own: one for the adapter, one to look at the parts.
    const [results, parts] = await Promise.all([
      pipeline.run(recorded(fromAISDKStream(step.fullStream), calls)),
      collect(step.fullStream),
    ]);

    // v6 marks them on the tool-call part (invalid: true, dynamic: true, error) and answers each
    // itself with a tool-error part.
    expect(parts.filter((p) => p.type === 'tool-call').map((p) => [p.toolCallId, 'invalid' in p && p.invalid === true])).toEqual([
      ['bad_json', true],
      ['bad_args', true],
      ['no_tool', true],
      ['good', false],
    ]);
    expect(parts.filter((p) => p.type === 'tool-error').map((p) => p.toolCallId)).toEqual(['bad_json', 'bad_args', 'no_tool']);

    expect(calls).toEqual([
      { id: 'bad_json', name: 'read_file', args: '{"path":' },
      { id: 'bad_args', name: 'add', args: { a: 1, b: 'two' } },
      { id: 'no_tool', name: 'delete_everything', args: {} },
      { id: 'good', name: 'add', args: { a: 1, b: 2 } },
    ]);
    expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
      ['bad_json', 'error', 'invalid_json'],
      ['bad_args', 'error', 'invalid_args'],
      ['no_tool', 'error', 'unknown_tool'],
      ['good', 'ok', undefined],
    ]);
    expect(results[1]!.content).toContain('- b: Invalid input: expected number, received string');
    expect(events).toEqual(['body:good:start']);

    // The SDK's own error results for them are in response.messages too: send one answer per call.
    const { messages } = await step.response;
    expect(messages.map((m) => m.role)).toEqual(['assistant', 'tool']);
    expect((messages[1]!.content as { toolCallId: string }[]).map((p) => p.toolCallId)).toEqual(['bad_json', 'bad_args', 'no_tool']);
  });

  it('starts the first body before the model has produced the second tool call', async () => {
    const events: string[] = [];
    const { tools } = recordingTools(events);
    const pipeline = createPipeline({ tools: [...tools] });
    const model = scriptedModel(async function* () {
      events.push('model:call_1');
      yield { type: 'tool-call', toolCallId: 'call_1', toolName: 'read_file', input: '{"path":"a.txt"}' };
      // The model takes its time over the next call: until the first body has started, or 2 s.
      await until(() => events.includes('body:call_1:start')).catch(() => undefined);
      events.push('model:call_2');
      yield { type: 'tool-call', toolCallId: 'call_2', toolName: 'read_file', input: '{"path":"b.txt"}' };
      yield finish('tool-calls');
    });
    const step = streamStep(model, sdkToolsOf(tools));

    const results = await pipeline.run(
      fromAISDKStream(step.fullStream).pipe(tap((call) => events.push(`emitted:${call.id}`))),
    );

    expect(results.map((r) => [r.id, r.status])).toEqual([
      ['call_1', 'ok'],
      ['call_2', 'ok'],
    ]);
    const order = (event: string) => events.indexOf(event);
    expect(order('model:call_1')).toBeLessThan(order('emitted:call_1'));
    expect(order('body:call_1:start')).toBeGreaterThan(-1);
    expect(order('body:call_1:start')).toBeLessThan(order('model:call_2'));
    expect(order('model:call_2')).toBeLessThan(order('emitted:call_2'));
  });
});

describe('fromAISDKStream on any source of parts', () => {
  async function* partsOf(parts: readonly AISDKStreamPart[]) {
    yield* parts;
  }

  it('a source that ends with a call open emits it as incomplete (stream_ended); unknown and malformed parts are ignored', async () => {
    const parts = [
      { type: 'start' },
      { type: 'raw', rawValue: { anything: true } },
      { type: 'something-new-in-v7' },
      null,
      42,
      { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: { a: 1, b: 2 } },
      { type: 'tool-input-start', id: 'c2', toolName: 'add' },
      { type: 'tool-input-delta', id: 'c2', delta: '{"a":' },
      { type: 'tool-input-delta', id: 'unknown', delta: 'ignored' },
    ] as unknown as AISDKStreamPart[];
    const calls = (await collect(toAsync(fromAISDKStream(partsOf(parts))))).map(withoutTurn);
    expect(calls).toEqual([
      { id: 'c1', name: 'add', args: { a: 1, b: 2 } },
      { id: 'c2', name: 'add', args: new IncompleteArguments('stream_ended', '{"a":') },
    ]);
  });

  it('closes open calls at each finish-step, with the reason of that step', async () => {
    const subject = new Subject<AISDKStreamPart>();
    const calls: ToolCall[] = [];
    const done = new Promise<void>((resolve) => fromAISDKStream(subject).subscribe({ next: (c) => calls.push(withoutTurn(c)), complete: resolve }));
    subject.next({ type: 'tool-input-start', id: 'c1', toolName: 'add' } as AISDKStreamPart);
    subject.next({ type: 'finish-step', finishReason: 'content-filter' } as AISDKStreamPart);
    expect(calls).toEqual([{ id: 'c1', name: 'add', args: new IncompleteArguments('content_filter', '') }]);
    // A late part for a closed call does not reopen it.
    subject.next({ type: 'tool-input-start', id: 'c1', toolName: 'add' } as AISDKStreamPart);
    subject.next({ type: 'tool-input-start', id: 'c2', toolName: 'read_file' } as AISDKStreamPart);
    subject.next({ type: 'abort', reason: 'user' } as AISDKStreamPart);
    subject.next({ type: 'tool-input-start', id: 'c3', toolName: 'read_file' } as AISDKStreamPart);
    subject.next({ type: 'finish', finishReason: 'length' } as AISDKStreamPart);
    subject.complete();
    await done;
    expect(calls.slice(1)).toEqual([
      { id: 'c2', name: 'read_file', args: new IncompleteArguments('aborted', '') },
      { id: 'c3', name: 'read_file', args: new IncompleteArguments('max_tokens', '') },
    ]);
  });

  it('a synchronous Observable with an error part: open calls closed, the error delivered once, nothing after it', () => {
    const seen: string[] = [];
    fromAISDKStream(
      from([
        { type: 'tool-input-start', id: 'c1', toolName: 'add' },
        { type: 'tool-call', toolCallId: 'c0', toolName: 'add', input: { a: 1, b: 1 } },
        { type: 'error', error: 'rate limited' },
        { type: 'tool-call', toolCallId: 'c2', toolName: 'add', input: { a: 1, b: 1 } },
        { type: 'error', error: 'second' },
      ] as unknown as AISDKStreamPart[]),
    ).subscribe({
      next: (call) => seen.push(`call:${call.id}:${call.args instanceof IncompleteArguments ? call.args.reason : 'complete'}`),
      error: (error: unknown) => seen.push(`error:${String(error)}`),
      complete: () => seen.push('complete'),
    });
    expect(seen).toEqual(['call:c0:complete', 'call:c1:stream_error', 'error:rate limited']);
  });

  it('a string input (a parsed JSON string) stays that string for the pipeline', async () => {
    const calls = (await collect(
      toAsync(
        fromAISDKStream(
          partsOf([
            { type: 'tool-call', toolCallId: 'c1', toolName: 'echo', input: 'hello' },
            { type: 'tool-call', toolCallId: 'c2', toolName: 'echo', input: '{"not":"parsed"}', invalid: true, dynamic: true },
          ] as unknown as AISDKStreamPart[]),
        ),
      ),
    )).map(withoutTurn);
    expect(calls).toEqual([
      { id: 'c1', name: 'echo', args: '"hello"' },
      { id: 'c2', name: 'echo', args: '"{\\"not\\":\\"parsed\\"}"' },
    ]);
  });

  it('a part that cannot be read errors the Observable after closing the open calls', async () => {
    const hostile = {
      get type(): string {
        throw new Error('bad getter');
      },
    };
    const calls: ToolCall[] = [];
    const error = await new Promise<unknown>((resolve) =>
      fromAISDKStream(partsOf([{ type: 'tool-input-start', id: 'c1', toolName: 'add' } as AISDKStreamPart, hostile])).subscribe({
        next: (call) => calls.push(withoutTurn(call)),
        error: resolve,
      }),
    );
    expect((error as Error).message).toBe('bad getter');
    expect(calls).toEqual([{ id: 'c1', name: 'add', args: new IncompleteArguments('stream_error', '') }]);
  });

  it('unsubscribing cancels a ReadableStream at once, even while a read is pending', async () => {
    let cancelled: unknown = 'not cancelled';
    let pulls = 0;
    const stream = new ReadableStream<AISDKStreamPart>({
      pull(controller) {
        pulls++;
        if (pulls === 1) {
          controller.enqueue({ type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: {} } as AISDKStreamPart);
          return;
        }
        return new Promise(() => undefined); // the model goes quiet
      },
      cancel(reason) {
        cancelled = reason;
      },
    });
    const calls: ToolCall[] = [];
    const subscription = fromAISDKStream(stream).subscribe((call) => calls.push(call));
    await until(() => calls.length === 1 && pulls === 2);
    subscription.unsubscribe();
    await until(() => cancelled !== 'not cancelled');
    expect(cancelled).toBeUndefined();
    expect(calls.map((c) => c.id)).toEqual(['c1']);
  });

  it('unsubscribing stops an async iterable: return() is called and no further part is pulled', async () => {
    const pulled: string[] = [];
    let finalized = false;
    async function* parts() {
      try {
        for (let i = 1; ; i++) {
          pulled.push(`c${i}`);
          yield { type: 'tool-call', toolCallId: `c${i}`, toolName: 'add', input: {} } as AISDKStreamPart;
          await new Promise((resolve) => setTimeout(resolve, 1));
        }
      } finally {
        finalized = true;
      }
    }
    const calls: ToolCall[] = [];
    const subscription = fromAISDKStream(parts()).subscribe((call) => {
      calls.push(call);
      if (calls.length === 2) subscription.unsubscribe();
    });
    await until(() => finalized);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(calls.map((c) => c.id)).toEqual(['c1', 'c2']);
    expect(pulled).toEqual(['c1', 'c2']);
  });

  it('unsubscribing from a streamText fullStream stops the calls; the model request stops through streamText\'s abortSignal', async () => {
    const { tools, events } = recordingTools();
    const pipeline = createPipeline({ tools: [...tools] });
    let produced = 0;
    let modelFinalized = false;
    const model = scriptedModel(async function* () {
      try {
        for (let i = 1; i <= 50; i++) {
          produced++;
          yield { type: 'tool-call', toolCallId: `call_${i}`, toolName: 'add', input: '{"a":1,"b":2}' };
          await new Promise((resolve) => setTimeout(resolve, 2));
        }
      } finally {
        modelFinalized = true;
      }
    });
    // Cancelling our branch of fullStream does not stop streamText from reading the model (it reads
    // its own branches), so the abort is wired to the unsubscription.
    const controller = new AbortController();
    const step = streamText({ model, tools: sdkToolsOf(tools), prompt: 'go', abortSignal: controller.signal, onError: () => undefined });
    const results: ToolResult[] = [];
    const subscription = fromAISDKStream(step.fullStream)
      .pipe(finalize(() => controller.abort()), pipeline.operator())
      .subscribe((result) => {
        results.push(result);
        if (results.length === 2) subscription.unsubscribe();
      });
    await until(() => modelFinalized);
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(results.map((r) => r.id)).toEqual(['call_1', 'call_2']);
    expect(events.length).toBeLessThanOrEqual(3); // call_3 may have started before the unsubscription
    expect(produced).toBeLessThan(10);
  });
});

async function until(condition: () => boolean, timeoutMs = 2_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 1));
  }
}

function toAsync<T>(source: Observable<T>): AsyncIterable<T> {
  return {
    async *[Symbol.asyncIterator]() {
      const items: T[] = [];
      await new Promise<void>((resolve, reject) => source.subscribe({ next: (item) => items.push(item), error: reject, complete: resolve }));
      yield* items;
    },
  };
}

it('a repeated tool-call part (or one after its call was cut off) is emitted once', async () => {
  const parts: AISDKStreamPart[] = [
    { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: { a: 1 } } as AISDKStreamPart,
    { type: 'tool-call', toolCallId: 'c1', toolName: 'add', input: { a: 1 } } as AISDKStreamPart,
    { type: 'tool-input-start', id: 'c2', toolName: 'add' } as AISDKStreamPart,
    { type: 'finish-step', finishReason: 'length' } as AISDKStreamPart,
    { type: 'tool-call', toolCallId: 'c2', toolName: 'add', input: { a: 2 } } as AISDKStreamPart,
  ];
  const ids: string[] = [];
  await new Promise<void>((resolve, reject) =>
    fromAISDKStream(from(parts)).subscribe({ next: (call) => ids.push(call.id), error: reject, complete: resolve }),
  );
  expect(ids).toEqual(['c1', 'c2']);
});
