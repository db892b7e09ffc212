import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { firstValueFrom, from, Observable, Subject, take, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromOpenAIChatStream, toOpenAIChatToolMessages } from '../../../src/adapters/openai/index.js';
import { createPipeline, defineTool, IncompleteArguments, SourceError, type ToolCall } from '../../../src/index.js';
import { asAsync, calls, chunk, finish, first, gate, more, outline, recordingTools, usage } from './helpers.js';
import { dropTurns } from '../withoutTurn.js';

const collect = (source: Observable<ToolCall>) => firstValueFrom(source.pipe(dropTurns(), toArray())); // turns: turns.test.ts

describe('fromOpenAIChatStream: merging fragments', () => {
  it('takes id and name from the first fragment of an index and concatenates the arguments', async () => {
    const result = await collect(
      fromOpenAIChatStream(
        from([
          chunk({ role: 'assistant', content: null }),
          calls([first(0, 'call_a', 'read_file')]),
          calls([more(0, '{"pa')]),
          calls([more(0, 'th": "a.')]),
          calls([more(0, 'txt"}')]),
          finish('tool_calls'),
        ]),
      ),
    );
    expect(result).toEqual([{ id: 'call_a', name: 'read_file', args: '{"path": "a.txt"}' }]);
  });

  it('handles one chunk that carries several whole calls and the finish_reason', async () => {
    const result = await collect(
      fromOpenAIChatStream(
        from([
          calls(
            [
              first(0, 'call_a', 'read_file', '{"path":"a"}'),
              first(1, 'call_b', 'read_file', '{"path":"b"}'),
              first(2, 'call_c', 'read_file', ''),
            ],
            'tool_calls',
          ),
        ]),
      ),
    );
    expect(result).toEqual([
      { id: 'call_a', name: 'read_file', args: '{"path":"a"}' },
      { id: 'call_b', name: 'read_file', args: '{"path":"b"}' },
      { id: 'call_c', name: 'read_file', args: '' },
    ]);
  });

  it('emits a call at once when a new index appears or the finish arrives', () => {
    const source = new Subject<ChatCompletionChunk>();
    const seen: string[] = [];
    let completed = false;
    fromOpenAIChatStream(source).subscribe({ next: (call) => seen.push(call.id), complete: () => (completed = true) });

    source.next(calls([first(0, 'call_a', 'read_file', '{"path":')]));
    source.next(calls([more(0, '"a"}')]));
    expect(seen).toEqual([]);
    source.next(calls([first(1, 'call_b', 'read_file')]));
    expect(seen).toEqual(['call_a']);
    source.next(calls([more(1, '{"path":"b"}')]));
    expect(seen).toEqual(['call_a']);
    source.next(finish('tool_calls'));
    expect(seen).toEqual(['call_a', 'call_b']);
    expect(completed).toBe(false); // the usage chunk may still come
    source.next(usage());
    source.complete();
    expect(completed).toBe(true);
  });

  it('ignores the usage chunk, text deltas, other choices and unknown fields', async () => {
    const withExtras = { ...calls([first(0, 'call_a', 'read_file', '{}')]), obfuscation: 'x9', future_field: { a: 1 } };
    const otherChoice: ChatCompletionChunk = {
      ...chunk({}),
      choices: [{ index: 1, delta: { tool_calls: [first(0, 'call_n1', 'read_file', '{}')] }, finish_reason: 'length' }],
    };
    const result = await collect(
      fromOpenAIChatStream(
        asAsync<ChatCompletionChunk>([
          chunk({ role: 'assistant', content: 'Let me look.' }),
          withExtras,
          otherChoice,
          chunk({ refusal: null }),
          finish('tool_calls'),
          usage(),
        ]),
      ),
    );
    expect(result).toEqual([{ id: 'call_a', name: 'read_file', args: '{}' }]);
  });

  it('tolerates odd chunks without crashing: null, no choices, a fragment without an index', async () => {
    const odd = [
      null,
      { object: 'chat.completion.chunk' },
      { choices: [{ delta: { tool_calls: [{ id: 'call_x', function: { name: 'read_file', arguments: '{"path":' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ function: { arguments: '"x"}' } }] } }] },
      { choices: [{ delta: { tool_calls: [{ id: 'call_y', function: { name: 'read_file', arguments: '{}' } }] } }] },
      { choices: [{ delta: {}, finish_reason: 'tool_calls' }] },
    ] as unknown as ChatCompletionChunk[];
    expect(await collect(fromOpenAIChatStream(from(odd)))).toEqual([
      { id: 'call_x', name: 'read_file', args: '{"path":"x"}' },
      { id: 'call_y', name: 'read_file', args: '{}' },
    ]);
  });

  it('drops a late fragment of a call already emitted', async () => {
    const result = await collect(
      fromOpenAIChatStream(
        from([
          calls([first(0, 'call_a', 'read_file', '{"path":"a"}')]),
          calls([first(1, 'call_b', 'read_file', '{"path":"b"}')]),
          calls([more(0, 'garbage')]),
          finish('tool_calls'),
        ]),
      ),
    );
    expect(result.map((c) => c.args)).toEqual(['{"path":"a"}', '{"path":"b"}']);
  });
});

describe('fromOpenAIChatStream: calls that never arrived whole', () => {
  it("finish_reason 'length' with a call open → IncompleteArguments('max_tokens'); the pipeline answers incomplete_args", async () => {
    const chunks = [
      calls([first(0, 'call_a', 'read_file', '{"path":"a"}')]),
      calls([first(1, 'call_b', 'read_file', '{"path":"src/ind')]),
      finish('length'),
    ];
    const emitted = await collect(fromOpenAIChatStream(from(chunks)));
    expect(emitted[1]?.args).toBeInstanceOf(IncompleteArguments);
    expect(emitted[1]?.args).toEqual(new IncompleteArguments('max_tokens', '{"path":"src/ind'));

    const { ran, pipeline } = recordingTools();
    const results = await pipeline.run(fromOpenAIChatStream(from(chunks)));
    expect(outline(results)).toEqual([
      ['call_a', 'ok', undefined],
      ['call_b', 'error', 'incomplete_args'],
    ]);
    expect(results[1]?.error).toMatchObject({ code: 'incomplete_args', reason: 'max_tokens' });
    expect(ran).toEqual(['a']); // the cut-off call never ran
  });

  it("finish_reason 'content_filter' with a call open → incomplete ('content_filter')", async () => {
    const emitted = await collect(
      fromOpenAIChatStream(from([calls([first(0, 'call_a', 'read_file', '{"pa')]), finish('content_filter')])),
    );
    expect(emitted).toEqual([{ id: 'call_a', name: 'read_file', args: new IncompleteArguments('content_filter', '{"pa') }]);
  });

  it("the source ends with a call open and no finish_reason → IncompleteArguments('stream_ended')", async () => {
    const emitted = await collect(
      fromOpenAIChatStream(asAsync([calls([first(0, 'call_a', 'read_file', '{"path":"a"}')]), calls([first(1, 'call_b', 'read_file', '{')])])),
    );
    expect(emitted).toEqual([
      { id: 'call_a', name: 'read_file', args: '{"path":"a"}' },
      { id: 'call_b', name: 'read_file', args: new IncompleteArguments('stream_ended', '{') },
    ]);
  });

  it('a stream error midway: complete calls run, the open one gets incomplete_args, then run() rejects with SourceError', async () => {
    const cut = new Error('socket hang up');
    async function* breaking() {
      yield calls([first(0, 'call_a', 'read_file', '{"path":"a"}')]);
      yield calls([first(1, 'call_b', 'read_file', '{"path":"b"}')]);
      yield calls([first(2, 'call_c', 'read_file', '{"path":"c')]);
      await Promise.resolve();
      throw cut;
    }
    const emitted: ToolCall[] = [];
    const error = await new Promise<unknown>((resolve) =>
      fromOpenAIChatStream(breaking()).subscribe({ next: (c) => emitted.push(c), error: resolve, complete: () => resolve('completed') }),
    );
    expect(error).toBe(cut);
    expect(emitted.map((c) => c.args)).toEqual(['{"path":"a"}', '{"path":"b"}', new IncompleteArguments('stream_error', '{"path":"c')]);

    const { ran, pipeline } = recordingTools();
    const rejection = await pipeline.run(fromOpenAIChatStream(breaking())).then(
      () => expect.fail('run() resolved'),
      (e: unknown) => e,
    );
    expect(rejection).toBeInstanceOf(SourceError);
    const { results, cause } = rejection as SourceError;
    expect(cause).toBe(cut);
    expect(outline(results)).toEqual([
      ['call_a', 'ok', undefined],
      ['call_b', 'ok', undefined],
      ['call_c', 'error', 'incomplete_args'],
    ]);
    expect(results[2]?.error).toMatchObject({ reason: 'stream_error' });
    expect(ran.sort()).toEqual(['a', 'b']);
    // Every call is answered, so the next request is valid.
    expect(toOpenAIChatToolMessages(results).map((m) => m.tool_call_id)).toEqual(['call_a', 'call_b', 'call_c']);
  });

  it('an Observable source that errors: the same', async () => {
    const cut = new Error('boom');
    const source = new Observable<ChatCompletionChunk>((s) => {
      s.next(calls([first(0, 'call_a', 'read_file', '{"path":"a"}')]));
      s.next(calls([first(1, 'call_b', 'read_file', '{"pa')]));
      s.error(cut);
    });
    const emitted: ToolCall[] = [];
    const error = await new Promise<unknown>((resolve) => fromOpenAIChatStream(source).subscribe({ next: (c) => emitted.push(c), error: resolve }));
    expect(error).toBe(cut);
    expect(emitted.map((c) => c.args)).toEqual(['{"path":"a"}', new IncompleteArguments('stream_error', '{"pa')]);
  });
});

describe('fromOpenAIChatStream through a pipeline', () => {
  it('bad JSON gives that call invalid_json while the others run; empty arguments mean {}', async () => {
    const ran: string[] = [];
    const list = defineTool({
      name: 'list',
      description: 'List files',
      input: z.object({ dir: z.string().default('.') }),
      mode: 'parallel',
      execute: ({ dir }) => (ran.push(`list ${dir}`), ['a.txt']),
    });
    const read = defineTool({
      name: 'read_file',
      description: 'Read a file',
      input: z.object({ path: z.string() }),
      mode: 'parallel',
      execute: ({ path }) => (ran.push(`read ${path}`), 'text'),
    });
    const pipeline = createPipeline({ tools: [read, list] });
    const results = await pipeline.run(
      fromOpenAIChatStream(
        asAsync([
          calls([first(0, 'call_a', 'read_file', '{"path":"a"}')]),
          calls([first(1, 'call_b', 'read_file', '{"path": a.txt}')]),
          calls([first(2, 'call_c', 'list', '')]),
          finish('tool_calls'),
        ]),
      ),
    );
    expect(outline(results)).toEqual([
      ['call_a', 'ok', undefined],
      ['call_b', 'error', 'invalid_json'],
      ['call_c', 'ok', undefined],
    ]);
    expect(ran.sort()).toEqual(['list .', 'read a']);
    expect(results[1]?.content).toMatch(/not valid JSON/);
  });
});

describe('fromOpenAIChatStream: stopping', () => {
  it('unsubscribing calls the async iterator’s return() and pulls no more', async () => {
    const pulled: number[] = [];
    let returned = 0;
    const items = [
      calls([first(0, 'call_a', 'read_file', '{}')]),
      calls([first(1, 'call_b', 'read_file', '{}')]),
      calls([first(2, 'call_c', 'read_file', '{}')]),
      finish('tool_calls'),
    ];
    const iterable: AsyncIterable<ChatCompletionChunk> = {
      [Symbol.asyncIterator]: () => {
        let i = 0;
        return {
          next: async () => (pulled.push(i), i < items.length ? { done: false, value: items[i++]! } : { done: true, value: undefined }),
          return: async () => (returned++, { done: true, value: undefined }),
        };
      },
    };
    const first$ = await firstValueFrom(fromOpenAIChatStream(iterable).pipe(take(1)));
    expect(first$.id).toBe('call_a');
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(returned).toBe(1);
    expect(pulled).toEqual([0, 1]); // call_a is complete when index 1 appears; nothing pulled after
  });

  it('unsubscribing runs an async generator’s finally (the SDK stream closes its request)', async () => {
    let closed = false;
    const wait = gate();
    async function* source() {
      try {
        yield calls([first(0, 'call_a', 'read_file', '{}')]);
        await wait.promise; // a network stall
        yield finish('tool_calls');
      } finally {
        closed = true;
      }
    }
    const subscription = fromOpenAIChatStream(source()).subscribe();
    await new Promise((resolve) => setTimeout(resolve, 5));
    subscription.unsubscribe();
    wait.open(); // the generator's queued return() runs once the stalled step settles
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(closed).toBe(true);
  });

  it('does not call return() on an iterator that finished', async () => {
    let returned = 0;
    const items = [calls([first(0, 'call_a', 'read_file', '{}')], 'tool_calls')];
    const iterable: AsyncIterable<ChatCompletionChunk> = {
      [Symbol.asyncIterator]: () => {
        let i = 0;
        return {
          next: async () => (i < items.length ? { done: false, value: items[i++]! } : { done: true, value: undefined }),
          return: async () => (returned++, { done: true, value: undefined }),
        };
      },
    };
    expect(await collect(fromOpenAIChatStream(iterable))).toHaveLength(1);
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(returned).toBe(0);
  });

  it('unsubscribing from an Observable source unsubscribes it', () => {
    const source = new Subject<ChatCompletionChunk>();
    const subscription = fromOpenAIChatStream(source).subscribe();
    expect(source.observed).toBe(true);
    subscription.unsubscribe();
    expect(source.observed).toBe(false);
  });
});

describe('fromOpenAIChatStream: early start', () => {
  it("starts the first call's body before the source yields the finish chunk", async () => {
    const events: string[] = [];
    const bodyStarted = gate();
    const read = defineTool({
      name: 'read_file',
      description: 'Read a file',
      input: z.object({ path: z.string() }),
      mode: 'parallel',
      execute: ({ path }) => {
        events.push(`body:${path}`);
        if (path === 'a') bodyStarted.open();
        return `contents of ${path}`;
      },
    });
    // A safety net so a regression fails the assertion below instead of hanging; the order is what is tested.
    const fallback = new Promise<void>((resolve) => setTimeout(resolve, 2_000).unref());
    async function* model() {
      events.push('yield:a');
      yield calls([first(0, 'call_a', 'read_file', '{"path":"a"}')]);
      events.push('yield:b-start');
      yield calls([first(1, 'call_b', 'read_file', '{"path":')]); // call_a is complete now
      await Promise.race([bodyStarted.promise, fallback]);
      events.push('yield:b-rest');
      yield calls([more(1, '"b"}')]);
      events.push('yield:finish');
      yield finish('tool_calls');
    }
    const results = await createPipeline({ tools: [read] }).run(fromOpenAIChatStream(model()));
    expect(outline(results)).toEqual([
      ['call_a', 'ok', undefined],
      ['call_b', 'ok', undefined],
    ]);
    expect(events).toEqual(['yield:a', 'yield:b-start', 'body:a', 'yield:b-rest', 'yield:finish', 'body:b']);
  });
});
