import { streamText } from 'ai';
import { describe, expect, it, vi } from 'vitest';
import { continueAnthropicTurn, runAnthropicLoop, runAnthropicTurn } from '../../../src/adapters/anthropic/index.js';
import { continueAISDKTurn, runAISDKLoop, runAISDKTurn, stepCountIs } from '../../../src/adapters/ai-sdk/index.js';
import {
  continueOpenAIChatTurn,
  continueOpenAIResponsesTurn,
  runOpenAIChatLoop,
  runOpenAIChatTurn,
  runOpenAIResponsesLoop,
  runOpenAIResponsesTurn,
} from '../../../src/adapters/openai/index.js';
import { ConfigError, createPipeline } from '../../../src/index.js';
import { conversation, finish } from '../ai-sdk/helpers.js';

// Configuration mistakes of the loops and turns are ConfigErrors naming the function the user called
// and the option, found before anything runs: no request is made, no stream is read.

const pipeline = createPipeline({ tools: [] });
const SHORT = 'short-secret'; // 12 bytes

/** The structured check every converted site shares; a ConfigError is a TypeError still. */
function expectConfigError(error: unknown, where: ConfigError['where'], option: string): void {
  expect(error).toBeInstanceOf(ConfigError);
  expect(error).toBeInstanceOf(TypeError);
  expect(error).toMatchObject({ code: 'invalid_config', where, option });
}

/** What a synchronous throw or a rejection gave, whichever the function does. */
async function caught(run: () => unknown): Promise<unknown> {
  try {
    await run();
  } catch (error) {
    return error;
  }
  throw new Error('it did not throw');
}

/** A stream that records whether anything read it. */
function untouched() {
  const seen = { read: false };
  const stream: AsyncIterable<never> = {
    [Symbol.asyncIterator]() {
      seen.read = true;
      return { next: async () => ({ done: true as const, value: undefined as never }) };
    },
  };
  return { seen, stream };
}

describe('stepCountIs', () => {
  it.each([[0], [-1], [1.5], [Number.NaN], ['3']])('refuses count %j with a ConfigError', async (count) => {
    const error = await caught(() => stepCountIs(count as number));
    expectConfigError(error, 'stepCountIs', 'count');
    expect((error as Error).message).toBe(`stepCountIs: \`count\` must be a positive integer; received ${typeof count === 'string' ? '"3"' : String(count)}`);
  });
});

describe('the loops', () => {
  const loops = [
    ['runAnthropicLoop', (options: object) => runAnthropicLoop(pipeline, { messages: [], request: vi.fn(), ...options })],
    ['runOpenAIChatLoop', (options: object) => runOpenAIChatLoop(pipeline, { messages: [], request: vi.fn(), ...options })],
    ['runOpenAIResponsesLoop', (options: object) => runOpenAIResponsesLoop(pipeline, { input: [], request: vi.fn(), ...options })],
    ['runAISDKLoop', (options: object) => runAISDKLoop(pipeline, { messages: [], request: vi.fn(), ...options })],
  ] as const;

  it.each(loops)('%s names itself and maxSteps for a maxSteps that is not a positive integer, before any request', async (where, loop) => {
    for (const maxSteps of [0, 2.5, Infinity]) {
      const request = vi.fn();
      const error = await caught(() => loop({ maxSteps, request }));
      expectConfigError(error, where, 'maxSteps');
      expect((error as Error).message).toBe(`${where}: \`maxSteps\` must be a positive integer; received ${maxSteps}`);
      expect(request).not.toHaveBeenCalled();
    }
  });

  it.each(loops)('%s names itself and secret for a secret under 32 bytes, before any request, never showing it', async (where, loop) => {
    const request = vi.fn();
    const error = await caught(() => loop({ secret: SHORT, request }));
    expectConfigError(error, where, 'secret');
    expect((error as Error).message).toMatch(new RegExp(`^${where}: \`secret\` must be a string or Uint8Array of at least 32 bytes .*; received "\\(12 bytes\\)"$`));
    expect((error as Error).message).not.toContain(SHORT);
    expect(request).not.toHaveBeenCalled();
  });

  it('runOpenAIResponsesLoop names itself, not runOpenAIResponsesTurn, for a custom option not from openAICustomTools', async () => {
    const error = await caught(() => runOpenAIResponsesLoop(pipeline, { input: [], request: vi.fn(), custom: {} as never }));
    expectConfigError(error, 'runOpenAIResponsesLoop', 'options.custom');
  });

  it('runAISDKLoop with a writer names request when a step is not a streamText result (no toUIMessageStream)', async () => {
    const { model } = conversation([[{ type: 'text-start', id: 't' }, { type: 'text-delta', id: 't', delta: 'Hi.' }, { type: 'text-end', id: 't' }, finish('stop')]]);
    const writer = { write: vi.fn() };
    const error = await caught(() =>
      runAISDKLoop(pipeline, {
        messages: [{ role: 'user', content: 'Hello' }],
        request: (messages) => {
          const { fullStream, response, text } = streamText({ model, messages });
          return { fullStream, response, text }; // what a wrapper that keeps only the AISDKStep fields gives
        },
        writer,
      }),
    );
    expectConfigError(error, 'runAISDKLoop', 'request');
    expect((error as Error).message).toContain('streamText result');
    expect((error as Error).message).toContain('`writer`');
  });
});

describe('the turns', () => {
  const turns = [
    ['runAnthropicTurn', (stream: AsyncIterable<never>, secret: unknown) => runAnthropicTurn(pipeline, stream, { secret: secret as string })],
    ['continueAnthropicTurn', (_: AsyncIterable<never>, secret: unknown) => continueAnthropicTurn(pipeline, {}, { secret: secret as string })],
    ['runOpenAIChatTurn', (stream: AsyncIterable<never>, secret: unknown) => runOpenAIChatTurn(pipeline, stream, { secret: secret as string })],
    ['continueOpenAIChatTurn', (_: AsyncIterable<never>, secret: unknown) => continueOpenAIChatTurn(pipeline, {}, { secret: secret as string })],
    ['runOpenAIResponsesTurn', (stream: AsyncIterable<never>, secret: unknown) => runOpenAIResponsesTurn(pipeline, stream, { secret: secret as string })],
    ['continueOpenAIResponsesTurn', (_: AsyncIterable<never>, secret: unknown) => continueOpenAIResponsesTurn(pipeline, {}, { secret: secret as string })],
    ['runAISDKTurn', (stream: AsyncIterable<never>, secret: unknown) => runAISDKTurn(pipeline, { fullStream: stream, response: Promise.resolve({ messages: [] }), text: Promise.resolve('') }, { secret: secret as string })],
    ['continueAISDKTurn', (_: AsyncIterable<never>, secret: unknown) => continueAISDKTurn(pipeline, {}, [], { secret: secret as string })],
  ] as const;

  it.each(turns)('%s names itself and secret for a secret under 32 bytes (or not one), before reading anything', async (where, turn) => {
    for (const [secret, shown] of [[SHORT, '"(12 bytes)"'], [new Uint8Array(16), '"(16 bytes)"'], [42, '42']] as const) {
      const { seen, stream } = untouched();
      const error = await caught(() => turn(stream, secret));
      expectConfigError(error, where, 'secret');
      expect((error as Error).message).toMatch(new RegExp(`^${where}: \`secret\` must be .*; received ${shown.replace(/[()]/g, '\\$&')}$`));
      expect(seen.read).toBe(false);
    }
  });
});
