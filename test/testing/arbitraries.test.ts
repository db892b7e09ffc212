import fc from 'fast-check';
import { from, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createPipeline, type ToolCall } from '../../src/index.js';
import { anthropicStreams, chatStreams, checkInvariants, jsonFragments, TestingOptionError, toolCalls } from '../../src/testing/index.js';
import { adapt, args, STREAMS, tools } from './support.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

const parses = (text: string) => {
  try {
    JSON.parse(text);
    return true;
  } catch {
    return false;
  }
};
/** Nested at least 100 levels deep at its start. */
const deep = (text: string) => /^(\[|\{"a":){100}/.test(text);

describe('toolCalls', () => {
  it('valid calls: unique ids, known names, the tools’ arguments — every one runs', async () => {
    const pipeline = createPipeline({ tools, concurrency: 3 });
    await fc.assert(
      fc.asyncProperty(toolCalls({ tools: args, maxLength: 10 }), async (calls) => {
        expect(new Set(calls.map((c) => c.id)).size).toBe(calls.length);
        for (const call of calls) expect(Object.keys(args)).toContain(call.name);
        const results = await pipeline.run(calls);
        expect(results.map((r) => r.status)).toEqual(calls.map(() => 'ok'));
        expect(checkInvariants({ calls, results, tools, concurrency: 3 })).toEqual({ ok: true });
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('hostile calls: each kind is generated', () => {
    const kinds = new Set<string>();
    for (const calls of fc.sample(toolCalls({ tools: args, hostile: true, minLength: 4, maxLength: 12 }), { numRuns: 200, seed: 26 })) {
      const ids = new Set<string>();
      for (const call of calls) {
        if (ids.has(call.id)) kinds.add('duplicate id');
        ids.add(call.id);
        if (!Object.hasOwn(args, call.name)) kinds.add('unknown name');
        const text = typeof call.args === 'string' ? call.args : JSON.stringify(call.args);
        if (typeof call.args === 'string' && !parses(call.args)) kinds.add('not JSON');
        if (text.includes('"__proto__"') || text.includes('"constructor"')) kinds.add('prototype keys');
        if (text.length >= 50_000) kinds.add('huge');
        if (deep(text)) kinds.add('deep');
        const value: unknown = typeof call.args === 'string' && parses(call.args) ? JSON.parse(call.args) : call.args;
        if (typeof value !== 'object' || value === null || Array.isArray(value)) kinds.add('no object');
      }
    }
    expect([...kinds].sort()).toEqual(['deep', 'duplicate id', 'huge', 'no object', 'not JSON', 'prototype keys', 'unknown name']);
  });

  it('hostile calls: a structured result each, in order, and no prototype polluted', async () => {
    const pipeline = createPipeline({ tools, onError: 'continue' });
    await fc.assert(
      fc.asyncProperty(toolCalls({ tools: args, hostile: true }), async (calls) => {
        const results = await pipeline.run(calls);
        expect(checkInvariants({ calls, results, tools, concurrency: 10 })).toEqual({ ok: true });
        const seen = new Set<string>();
        for (const [i, call] of calls.entries()) {
          const { status, error } = results[i]!;
          if (seen.has(call.id)) expect(error?.code).toBe('duplicate_id');
          else if (!Object.hasOwn(args, call.name)) expect(error?.code).toBe('unknown_tool');
          else if (typeof call.args === 'string' && !parses(call.args)) expect(error?.code).toBe('invalid_json');
          else if (typeof call.args === 'string' && deep(call.args)) expect(['ok', 'invalid_args', 'invalid_json']).toContain(status === 'ok' ? 'ok' : error?.code);
          else expect(['ok', 'invalid_args']).toContain(status === 'ok' ? 'ok' : error?.code);
          seen.add(call.id);
        }
        expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
      }),
      { numRuns: Math.max(50, NUM_RUNS / 5) },
    );
  });

  it('refuses options it cannot use, naming them', () => {
    const refusal = (make: () => unknown) => {
      try {
        make();
      } catch (error) {
        return error instanceof TestingOptionError ? [error.code, error.where, error.option] : error;
      }
      return 'accepted';
    };
    expect(refusal(() => toolCalls({ tools: {} }))).toEqual(['invalid_option', 'toolCalls', 'tools']);
    expect(refusal(() => toolCalls({ tools: { read: { path: 'x' } as never } }))).toEqual(['invalid_option', 'toolCalls', 'tools.read']);
    expect(refusal(() => toolCalls({ tools: args, maxLength: -1 }))).toEqual(['invalid_option', 'toolCalls', 'maxLength']);
    expect(refusal(() => toolCalls({ tools: args, minLength: 5, maxLength: 2 }))).toEqual(['invalid_option', 'toolCalls', 'maxLength']);
    expect(refusal(() => chatStreams({ calls: toolCalls({ tools: args }), mode: 'broken' as never }))).toEqual(['invalid_option', 'chatStreams', 'mode']);
    expect(refusal(() => anthropicStreams({ calls: [] as never }))).toEqual(['invalid_option', 'anthropicStreams', 'calls']);
    expect(refusal(() => jsonFragments('{}', { maxPieces: 0 }))).toEqual(['invalid_option', 'jsonFragments', 'maxPieces']);
  });
});

describe('jsonFragments', () => {
  it('pieces that join to the text, at most maxPieces non-empty ones', () => {
    const split = fc
      .tuple(fc.oneof(fc.json(), fc.string({ unit: 'grapheme' })), fc.integer({ min: 1, max: 64 }))
      .chain(([text, maxPieces]) => jsonFragments(text, { maxPieces }).map((pieces) => ({ text, maxPieces, pieces })));
    fc.assert(
      fc.property(split, ({ text, maxPieces, pieces }) => {
        expect(pieces.join('')).toBe(text);
        expect(pieces.filter((piece) => piece !== '').length).toBeLessThanOrEqual(Math.max(1, maxPieces));
      }),
      { numRuns: NUM_RUNS },
    );
  });

  it('splits as real streams do: an empty piece first, one character a piece, the whole text', () => {
    const text = '{"path":"README.md"}';
    const shapes = new Set<string>();
    for (const pieces of fc.sample(jsonFragments(text), { numRuns: 300, seed: 26 })) {
      if (pieces[0] === '') shapes.add('empty first');
      if (pieces.filter((p) => p !== '').every((p) => p.length === 1)) shapes.add('one character each');
      if (pieces.filter((p) => p !== '').length === 1) shapes.add('whole');
      if (pieces.filter((p) => p !== '').some((p) => p.length > 1 && p.length < text.length)) shapes.add('cut');
      if (pieces.at(-1) === '' && pieces.length > 1) shapes.add('empty last');
    }
    expect([...shapes].sort()).toEqual(['cut', 'empty first', 'empty last', 'one character each', 'whole']);
  });
});

describe('the stream arbitraries, as event objects into the adapters', () => {
  for (const format of ['anthropic', 'chat', 'responses'] as const) {
    it(`${format}: valid and fragmented streams give exactly their calls, in their turn`, async () => {
      const streams = fc.constantFrom('valid' as const, 'fragmented' as const).chain((mode) => STREAMS[format]({ calls: toolCalls({ tools: args, hostile: true }), mode }));
      await fc.assert(
        fc.asyncProperty(streams, async (stream) => {
          const received = await lastValueFrom(adapt(format, from(stream.events)).pipe(toArray()));
          expect(received).toEqual(stream.calls);
          for (const call of received) expect(call.turn).toBe(stream.turn);
        }),
        { numRuns: Math.max(50, NUM_RUNS / 5) },
      );
    });
  }

  it('ids repeated within a response are made unique there (a provider never repeats one)', () => {
    const repeated = fc.constant<ToolCall[]>([
      { id: 'same', name: 'read_file', args: { path: 'a' } },
      { id: 'same', name: 'read_file', args: { path: 'b' } },
      { id: 'same_2', name: 'none', args: {} },
      { id: '', name: 'none', args: {} },
    ]);
    const [stream] = fc.sample(chatStreams({ calls: repeated }), 1);
    expect(stream!.calls.map((call) => call.id)).toEqual(['same', 'same_3', 'same_2', 'call_2']);
    const [hostile] = fc.sample(chatStreams({ calls: repeated, mode: 'hostile' }), 1);
    expect(hostile!.calls.map((call) => call.id)).toEqual(['same', 'same', 'same_2', '']);
  });
});
