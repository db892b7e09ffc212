import fc from 'fast-check';
import type { ChatCompletionChunk } from 'openai/resources/chat/completions';
import { firstValueFrom, from, Observable, Subject, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { fromOpenAIChatStream } from '../../../src/adapters/openai/index.js';
import { IncompleteArguments, type ToolCall } from '../../../src/index.js';
import { asAsync, calls, finish, first, more, outline, recordingTools, sdkStream } from './helpers.js';
import { dropTurns, withoutTurn } from '../withoutTurn.js';

// How OpenAI-compatible servers other than OpenAI shape their tool-call fragments (see the corpus's
// quirks table), each through the SDK's own SSE parser where the wire matters.

const collect = (source: Observable<ToolCall>) => firstValueFrom(source.pipe(dropTurns(), toArray())); // turns: turns.test.ts
const toSSE = (chunks: readonly ChatCompletionChunk[]) => chunks.map((c) => `data: ${JSON.stringify(c)}\n\n`).join('') + 'data: [DONE]\n\n';

describe('fromOpenAIChatStream: a server that never sends finish_reason (OpenRouter → Novita)', () => {
  it('a call whose arguments parse as a JSON object runs when the stream ends cleanly', async () => {
    const { ran, pipeline } = recordingTools();
    const chunks = [calls([first(0, '0', 'read_file', '')]), calls([first(0, '0', 'read_file', '{"path":"a"}')])];
    expect(await collect(fromOpenAIChatStream(sdkStream<ChatCompletionChunk>(toSSE(chunks))))).toEqual([
      { id: '0', name: 'read_file', args: '{"path":"a"}' },
    ]);
    const results = await pipeline.run(fromOpenAIChatStream(sdkStream<ChatCompletionChunk>(toSSE(chunks))));
    expect(outline(results)).toEqual([['0', 'ok', undefined]]);
    expect(ran).toEqual(['a']);
  });

  it.each([
    ['cut off mid-object', '{"path":"a'],
    ['no arguments at all', ''],
    ['an array, not an object', '["a"]'],
    ['a string, not an object', '"a"'],
    ['not JSON', '{path: a}'],
  ])('arguments that are not a whole JSON object stay incomplete (stream_ended): %s', async (_, args) => {
    const { ran, pipeline } = recordingTools();
    const chunks = [calls([first(0, 'call_a', 'read_file', args)])];
    expect(await collect(fromOpenAIChatStream(asAsync(chunks)))).toEqual([
      { id: 'call_a', name: 'read_file', args: new IncompleteArguments('stream_ended', args) },
    ]);
    const results = await pipeline.run(fromOpenAIChatStream(asAsync(chunks)));
    expect(outline(results)).toEqual([['call_a', 'error', 'incomplete_args']]);
    expect(ran).toEqual([]);
  });

  it('a stream that errors leaves even a whole object incomplete (stream_error): only a clean end counts', async () => {
    const cut = new Error('socket hang up');
    const source = new Observable<ChatCompletionChunk>((subscriber) => {
      subscriber.next(calls([first(0, 'call_a', 'read_file', '{"path":"a"}')]));
      subscriber.error(cut);
    });
    const emitted: ToolCall[] = [];
    const error = await new Promise((resolve) => fromOpenAIChatStream(source).subscribe({ next: (call) => emitted.push(call), error: resolve }));
    expect(error).toBe(cut);
    expect(emitted.map(withoutTurn)).toEqual([{ id: 'call_a', name: 'read_file', args: new IncompleteArguments('stream_error', '{"path":"a"}') }]);
  });

  it('the earlier calls are complete when the next one starts, as always; only the last waits for the end', () => {
    const source = new Subject<ChatCompletionChunk>();
    const seen: unknown[] = [];
    fromOpenAIChatStream(source).subscribe((call) => seen.push(call.args));
    source.next(calls([first(0, 'call_a', 'read_file', '{"path":"a"}')]));
    source.next(calls([first(1, 'call_b', 'read_file', '{"path":"b"}')]));
    expect(seen).toEqual(['{"path":"a"}']);
    source.complete();
    expect(seen).toEqual(['{"path":"a"}', '{"path":"b"}']);
  });
});

describe('fromOpenAIChatStream: several calls on one index (Ollama 0.20)', () => {
  it('a new non-empty id on the same index starts a new call, and the previous one is complete there', () => {
    const source = new Subject<ChatCompletionChunk>();
    const seen: ToolCall[] = [];
    fromOpenAIChatStream(source).subscribe((call) => seen.push(call));
    source.next(calls([first(0, 'call_a', 'read_file', '{"path":"a"}')]));
    expect(seen).toEqual([]);
    source.next(calls([first(0, 'call_b', 'read_file', '{"path":"b"}')]));
    expect(seen.map(withoutTurn)).toEqual([{ id: 'call_a', name: 'read_file', args: '{"path":"a"}' }]);
    source.next(finish('tool_calls'));
    expect(seen.map(withoutTurn)).toEqual([
      { id: 'call_a', name: 'read_file', args: '{"path":"a"}' },
      { id: 'call_b', name: 'read_file', args: '{"path":"b"}' },
    ]);
  });

  it('through the SDK parser and a pipeline: both calls run, each with its own arguments', async () => {
    const { ran, pipeline } = recordingTools();
    const chunks = [
      calls([first(0, 'call_a', 'read_file', '{"path":')]),
      calls([more(0, '"a"}')]),
      calls([first(0, 'call_b', 'read_file', '{"path":"b"}')]),
      finish('tool_calls'),
    ];
    const results = await pipeline.run(fromOpenAIChatStream(sdkStream<ChatCompletionChunk>(toSSE(chunks))));
    expect(outline(results)).toEqual([
      ['call_a', 'ok', undefined],
      ['call_b', 'ok', undefined],
    ]);
    expect(ran.sort()).toEqual(['a', 'b']);
  });

  it('the same id repeated on continuation fragments, or id "", continues the call', async () => {
    const chunks = [
      calls([first(0, 'call_a', 'read_file', '{"pa')]),
      calls([{ index: 0, id: 'call_a', function: { arguments: 'th":' } }]),
      calls([{ index: 0, id: '', function: { arguments: '"a"}' } }]),
      finish('tool_calls'),
    ];
    expect(await collect(fromOpenAIChatStream(from(chunks)))).toEqual([{ id: 'call_a', name: 'read_file', args: '{"path":"a"}' }]);
  });

  it('a late id fills in a call whose first fragment had none', async () => {
    const chunks = [calls([{ index: 0, function: { name: 'read_file', arguments: '' } }]), calls([{ index: 0, id: 'call_a', function: { arguments: '{}' } }])];
    expect(await collect(fromOpenAIChatStream(from([...chunks, finish('tool_calls')])))).toEqual([{ id: 'call_a', name: 'read_file', args: '{}' }]);
  });

  it('a late fragment that repeats the id of a call already emitted is dropped', async () => {
    const chunks = [
      calls([first(0, 'call_a', 'read_file', '{"path":"a"}')]),
      calls([first(0, 'call_b', 'read_file', '{"path":"b"}')]),
      calls([{ index: 0, id: 'call_a', function: { arguments: 'garbage' } }]),
      finish('tool_calls'),
    ];
    expect((await collect(fromOpenAIChatStream(from(chunks)))).map((c) => [c.id, c.args])).toEqual([
      ['call_a', '{"path":"a"}'],
      ['call_b', '{"path":"b"}'],
    ]);
  });
});

describe('fromOpenAIChatStream: the merge rules, as a property', () => {
  /** How a server numbers and labels the fragments of its calls. */
  type Style = 'openai' | 'one index' | 'no index' | 'id repeated' | 'id empty';
  const STYLES: Style[] = ['openai', 'one index', 'no index', 'id repeated', 'id empty'];

  /** The fragments a server of that style sends for calls whose arguments are cut at the given points. */
  function fragmentsOf(style: Style, list: readonly { id: string; args: string; cuts: number[] }[]) {
    return list.flatMap(({ id, args, cuts }, n) => {
      const points = [...new Set([0, ...cuts.map((c) => c % (args.length + 1)), args.length])].sort((a, b) => a - b);
      const pieces = points.slice(1).map((end, i) => args.slice(points[i], end));
      if (pieces.length === 0) pieces.push('');
      const index = style === 'openai' || style === 'id repeated' || style === 'id empty' ? n : style === 'one index' ? 0 : undefined;
      return pieces.map((piece, i) => {
        const later = style === 'id repeated' ? { id } : style === 'id empty' ? { id: '' } : {};
        const head = i === 0 ? { id, type: 'function' as const, function: { name: 'read_file', arguments: piece } } : { ...later, function: { arguments: piece } };
        return index === undefined ? head : { index, ...head };
      });
    });
  }

  it('recovers every call — id, name, arguments — whatever the style and wherever the fragments are cut', () => {
    const call = fc.record({ path: fc.string({ maxLength: 12 }), cuts: fc.array(fc.nat(40), { maxLength: 4 }) });
    fc.assert(
      fc.property(fc.constantFrom(...STYLES), fc.array(call, { minLength: 1, maxLength: 5 }), fc.boolean(), (style, specs, finished) => {
        const list = specs.map(({ path, cuts }, n) => ({ id: `call_${n}`, args: JSON.stringify({ path }), cuts }));
        const chunks = fragmentsOf(style, list).map((fragment) => calls([fragment as ChatCompletionChunk.Choice.Delta.ToolCall]));
        const emitted: ToolCall[] = [];
        const source = new Subject<ChatCompletionChunk>();
        fromOpenAIChatStream(source).subscribe((c) => emitted.push(c));
        for (const c of chunks) source.next(c);
        if (finished) source.next(finish('tool_calls'));
        source.complete();
        // With or without a finish_reason: the arguments are whole objects, so every call is complete.
        expect(emitted.map(withoutTurn)).toEqual(list.map(({ id, args }) => ({ id, name: 'read_file', args })));
      }),
    );
  });
});
