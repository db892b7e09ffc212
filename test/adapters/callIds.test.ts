import { createOpenAI } from '@ai-sdk/openai';
import { jsonSchema, streamText, tool, type ToolSet } from 'ai';
import type { ResponseStreamEvent } from 'openai/resources/responses/responses';
import { concat } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { fromAISDKStream, runAISDKTurn, type AISDKStreamPart, type AISDKTurn } from '../../src/adapters/ai-sdk/index.js';
import { fromAnthropicStream, runAnthropicTurn, type AnthropicStreamEvent, type AnthropicTurn } from '../../src/adapters/anthropic/index.js';
import {
  fromOpenAIChatStream,
  fromOpenAIResponsesStream,
  openAICustomTools,
  runOpenAIChatTurn,
  runOpenAIResponsesTurn,
  type OpenAIChatTurn,
  type OpenAIResponsesTurn,
} from '../../src/adapters/openai/index.js';
import { createPipeline, defineTool, toolSchemas, type Pipeline, type ToolResult } from '../../src/index.js';
import { toSSE } from '../../src/testing/index.js';
import { readManifest, readResponses, replayingFetch, type WireFormat } from './corpus/recordings.js';
import { collect, parsed } from './corpus/replay.js';
import { response, sdkStream, sequence as numbered, toSSE as responsesSSE } from './openai/helpers.js';

// Every adapter answers a call id once per model response (its turn), and answers a call of a later
// response that reuses an id, never dropping it. Replayed from real recordings of the shared corpus
// through the official SDK parsers (and, for the AI SDK, its OpenAI provider): the four "multi"
// recordings call add(2, 3) and multiply(2, 3); Kimi K2 numbers its calls per response
// (`functions.add:0` in every completion, as Groq and Hugging Face recorded it), and Bedrock Mantle
// reuses `call_0` on every turn. A repeat within a response is the same call: it runs once, the
// assistant message holds it once and one result answers it (a provider rejects a history with an id
// twice). A later response's call with a used id, in the same `run()`, is answered `duplicate_id`.

const manifest = readManifest();
type Event = Record<string, unknown>;

/** The events of a recording's first response, as the SDK's parser yields them. */
async function recorded(name: string): Promise<Event[]> {
  if ('missing' in manifest) throw new Error(manifest.missing);
  const recording = manifest.recordings.find((r) => r.name === name)!;
  const { events } = await collect(parsed(recording.format, readResponses(recording)[0]!));
  return events as Event[];
}

/** Events as the provider's SSE body, read by the SDK's own parser again. */
const wire = (format: WireFormat, events: readonly Event[]) => toSSE(format, events);
const read = <T>(format: WireFormat, events: readonly Event[]) => parsed(format, { sse: wire(format, events), objects: undefined }) as AsyncIterable<T>;

/** One source of several streams, one after the other. */
async function* sequence<T>(...sources: AsyncIterable<T>[]): AsyncGenerator<T> {
  for (const source of sources) yield* source;
}

/** The recordings' tools; `ran` holds the call id of every body that ran. */
function arithmetic() {
  const ran: string[] = [];
  const pair = z.object({ a: z.number(), b: z.number() });
  const tools = [
    defineTool({ name: 'add', description: 'Add two numbers', input: pair, mode: 'parallel', execute: ({ a, b }, { callId }) => (ran.push(callId), a + b) }),
    defineTool({ name: 'multiply', description: 'Multiply two numbers', input: pair, mode: 'parallel', execute: ({ a, b }, { callId }) => (ran.push(callId), a * b) }),
    defineTool({ name: 'first_tool', description: 'The first tool', input: z.object({}), mode: 'parallel', execute: (_, { callId }) => (ran.push(callId), 'first') }),
  ];
  return { ran, tools, pipeline: createPipeline({ tools }) };
}

const outline = (results: readonly ToolResult[]) => results.map((r) => [r.id, r.status === 'ok' ? r.value : r.error.code]);
const answered = (ids: readonly string[], values: readonly unknown[]) => ids.map((id, i) => [id, values[i]]);

/** The ids a turn's history holds: the calls of the assistant message, and the results answering them. */
function history(turn: Turn) {
  if ('toolResults' in turn) {
    return {
      calls: turn.message.content.flatMap((block) => (block.type === 'tool_use' ? [block.id] : [])),
      answers: turn.toolResults?.content.map((block) => block.tool_use_id) ?? [],
    };
  }
  if ('toolMessages' in turn) return { calls: (turn.message.tool_calls ?? []).map((c) => c.id), answers: turn.toolMessages.map((m) => m.tool_call_id) };
  const field = (item: unknown, name: string) => (item as Event)[name];
  const callId = (item: unknown) => field(item, 'call_id');
  return {
    calls: turn.output.filter((item) => ['function_call', 'custom_tool_call'].includes(field(item, 'type') as string)).map(callId),
    answers: turn.toolOutputs.map(callId),
  };
}

/** `events` with `repeat` put in again right after the last of `originals` (a replay within the response). */
function replayedAfter(events: readonly Event[], originals: readonly Event[], repeat: readonly Event[]): Event[] {
  const last = events.lastIndexOf(originals.at(-1)!);
  return [...events.slice(0, last + 1), ...repeat, ...events.slice(last + 1)];
}

const KIMI = ['functions.add:0', 'functions.multiply:1'];
const GPT4O = ['call_NnEvpiwdL8XrZ6F3T9VJyVw7', 'call_TQ8336oa6YnuT2leYzRDBBLz'];
const TOOLU = ['toolu_01UYxUYC2zRPY8wiutnF48eP', 'toolu_01VaRx1jpWCvPhi7L4kywAcd'];

/** Groq's Kimi completion with its tool-call chunks sent once more before the finish. */
async function replayedCompletion(): Promise<Event[]> {
  const events = await recorded('fantasy-groq-kimi-multi');
  const calls = events.filter((chunk) => ((chunk['choices'] as Event[] | undefined)?.[0]?.['delta'] as Event | undefined)?.['tool_calls'] !== undefined);
  return replayedAfter(events, calls, calls);
}

/** The gpt-4o Responses response with the events of its function calls sent once more before it completes. */
async function replayedResponse(): Promise<Event[]> {
  const events = await recorded('fantasy-responses-gpt4o-multi');
  const calls = events.filter((e) => (e['item'] as Event | undefined)?.['type'] === 'function_call' || String(e['item_id']).startsWith('fc_'));
  return replayedAfter(events, calls, calls);
}

type Turn = AnthropicTurn | OpenAIChatTurn | OpenAIResponsesTurn;

/**
 * A response whose calls `ids` (of add, then multiply) repeat in it, run once plainly and once as a turn:
 * each run runs each call once and answers it once, and the turn's history holds it once.
 */
async function expectOncePerTurn(ids: readonly string[], plain: (pipeline: Pipeline) => Promise<readonly ToolResult[]>, turnOf: (pipeline: Pipeline) => Promise<Turn>) {
  const { ran, pipeline } = arithmetic();
  expect(outline(await plain(pipeline))).toEqual(answered(ids, [5, 6]));
  const turn = await turnOf(pipeline);
  expect(outline(turn.results)).toEqual(answered(ids, [5, 6]));
  expect(history(turn)).toEqual({ calls: ids, answers: ids });
  expect(ran).toEqual([...ids, ...ids]);
}

describe('every adapter answers a call id once per turn, and a reused one in a later turn', () => {
  if ('missing' in manifest) {
    it.skip(`skipped: ${manifest.missing}`, () => undefined);
    return;
  }

  describe('OpenAI Chat Completions', () => {
    it('calls repeated in their completion: each runs once, is in the message once and answered once', async () => {
      const events = await replayedCompletion();
      await expectOncePerTurn(
        KIMI,
        (pipeline) => pipeline.run(fromOpenAIChatStream(read('chat', events))),
        (pipeline) => runOpenAIChatTurn(pipeline, read('chat', events)),
      );
    });

    it('a later completion that reuses the ids: answered duplicate_id in one run, run in a turn of its own', async () => {
      const [groq, hf] = await Promise.all([recorded('fantasy-groq-kimi-multi'), recorded('fantasy-hf-kimi-multi')]);
      const { ran, pipeline } = arithmetic();
      const results = await pipeline.run(fromOpenAIChatStream(sequence(read('chat', groq), read('chat', hf))));
      expect(outline(results)).toEqual([...answered(KIMI, [5, 6]), ...answered(KIMI, ['duplicate_id', 'duplicate_id'])]);
      expect(new Set(results.map((r) => r.turn)).size).toBe(2);
      for (const events of [groq, hf]) {
        const turn = await runOpenAIChatTurn(pipeline, read('chat', events));
        expect(outline(turn.results)).toEqual(answered(KIMI, [5, 6]));
        expect(history(turn)).toEqual({ calls: KIMI, answers: KIMI });
      }
      expect(ran).toEqual([...KIMI, ...KIMI, ...KIMI]);
    });
  });

  describe('OpenAI Responses', () => {
    it('calls whose items are replayed in their response: each runs once, is in the output once and answered once', async () => {
      const events = await replayedResponse();
      await expectOncePerTurn(
        GPT4O,
        (pipeline) => pipeline.run(fromOpenAIResponsesStream(read('responses', events))),
        (pipeline) => runOpenAIResponsesTurn(pipeline, read('responses', events)),
      );
    });

    it("a later response that reuses call_0 (as Bedrock Mantle does): answered duplicate_id in one run, run in a turn of its own", async () => {
      const first = await recorded('pai-bedrock-mantle-responses');
      const second = JSON.parse(JSON.stringify(first).replaceAll('resp_yqqp', 'resp_next')) as Event[];
      const { ran, pipeline } = arithmetic();
      const results = await pipeline.run(concat(...[first, second].map((events) => fromOpenAIResponsesStream(read('responses', events)))));
      expect(outline(results)).toEqual([['call_0', 'first'], ['call_0', 'duplicate_id']]);
      for (const events of [first, second]) {
        const turn = await runOpenAIResponsesTurn(pipeline, read('responses', events));
        expect(outline(turn.results)).toEqual([['call_0', 'first']]);
        expect(history(turn)).toEqual({ calls: ['call_0'], answers: ['call_0'] });
      }
      expect(ran).toEqual(['call_0', 'call_0', 'call_0']);
    });
    it('a free-form (custom) tool call: a replayed item is one call; a later response that reuses its call_id is answered', async () => {
      const patches: string[] = [];
      const applyPatch = defineTool({ name: 'apply_patch', description: 'Apply a diff', input: z.string(), execute: (patch) => (patches.push(patch), 'applied') });
      const custom = openAICustomTools([applyPatch]);
      const pipeline = createPipeline({ tools: [applyPatch] });
      const item = { type: 'custom_tool_call', id: 'ctc_1', call_id: 'call_patch', name: 'apply_patch', input: '+x' } as const;
      const responseOf = (id: string) =>
        sdkStream<ResponseStreamEvent>(
          responsesSSE(
            numbered([
              { type: 'response.created', response: response('in_progress', [], { id }) },
              { type: 'response.output_item.added', output_index: 0, item: { ...item, input: '' } },
              { type: 'response.custom_tool_call_input.done', item_id: 'ctc_1', output_index: 0, input: '+x' },
              { type: 'response.output_item.done', output_index: 0, item },
              { type: 'response.output_item.done', output_index: 0, item }, // replayed
              { type: 'response.completed', response: response('completed', [item], { id }) },
            ]),
          ),
        );
      const turn = await runOpenAIResponsesTurn(pipeline, responseOf('resp_1'), { custom });
      expect(outline(turn.results)).toEqual([['call_patch', 'applied']]);
      expect(history(turn)).toEqual({ calls: ['call_patch'], answers: ['call_patch'] });
      const results = await pipeline.run(concat(...['resp_1', 'resp_2'].map((id) => fromOpenAIResponsesStream(responseOf(id), { custom }))));
      expect(outline(results)).toEqual([['call_patch', 'applied'], ['call_patch', 'duplicate_id']]);
      expect(patches).toEqual(['+x', '+x']);
    });
  });

  describe('Anthropic Messages', () => {
    const blockEvents = (events: readonly Event[]) => {
      const indexes = new Set(events.filter((e) => (e['content_block'] as Event | undefined)?.['type'] === 'tool_use').map((e) => e['index']));
      return events.filter((e) => indexes.has(e['index']));
    };

    const expectOnceInTurn = (events: readonly Event[]) =>
      expectOncePerTurn(
        TOOLU,
        (pipeline) => pipeline.run(fromAnthropicStream(read('anthropic', events))),
        (pipeline) => runAnthropicTurn(pipeline, read<AnthropicStreamEvent>('anthropic', events)),
      );

    it('the same tool_use blocks in message_start and streamed: each runs once, is in the message once and answered once', async () => {
      const events = await recorded('fantasy-claude-sonnet4-multi');
      const [start, ...rest] = events;
      const message = start!['message'] as Event;
      const whole = TOOLU.map((id, i) => ({ type: 'tool_use', id, name: ['add', 'multiply'][i], input: { a: 2, b: 3 } }));
      await expectOnceInTurn([{ ...start, message: { ...message, content: whole } }, ...rest]);
    });

    it('tool_use blocks replayed at later indexes of their message: the same', async () => {
      const events = await recorded('fantasy-claude-sonnet4-multi');
      const blocks = blockEvents(events);
      await expectOnceInTurn(replayedAfter(events, blocks, blocks.map((e) => ({ ...e, index: (e['index'] as number) + 10 }))));
    });

    it('a later message that reuses the ids: answered duplicate_id in one run, run in a turn of its own', async () => {
      const first = await recorded('fantasy-claude-sonnet4-multi');
      const second = JSON.parse(JSON.stringify(first).replaceAll('msg_01PSvJdjd5keNSD63VHjYzex', 'msg_next')) as Event[];
      const { ran, pipeline } = arithmetic();
      const results = await pipeline.run(fromAnthropicStream(read('anthropic', [...first, ...second])));
      expect(outline(results)).toEqual([...answered(TOOLU, [5, 6]), ...answered(TOOLU, ['duplicate_id', 'duplicate_id'])]);
      for (const events of [first, second]) {
        const turn = await runAnthropicTurn(pipeline, read<AnthropicStreamEvent>('anthropic', events));
        expect(history(turn)).toEqual({ calls: TOOLU, answers: TOOLU });
      }
      expect(ran).toEqual([...TOOLU, ...TOOLU, ...TOOLU]);
    });
  });

  describe("AI SDK (streamText with the SDK's OpenAI provider)", () => {
    /** One `streamText` step over a recorded Chat Completions body, with the pipeline's tools (no `execute`). */
    function step(events: readonly Event[], sdkTools: ToolSet) {
      const model = createOpenAI({ apiKey: 'test-key', fetch: replayingFetch(wire('chat', events)) }).chat('moonshotai/kimi-k2');
      return streamText({ model, tools: sdkTools, prompt: 'Add and multiply 2 and 3.', onError: () => undefined });
    }
    /** The ids of the tool calls in the assistant message of a turn: the SDK's own assembly of the step. */
    const reportedCalls = (turn: AISDKTurn) =>
      turn.messages.flatMap((m) => (m.role === 'assistant' && Array.isArray(m.content) ? m.content.flatMap((p) => (p.type === 'tool-call' ? [p.toolCallId] : [])) : []));
    const sdkToolsOf = (tools: Parameters<typeof toolSchemas>[0]): ToolSet =>
      Object.fromEntries(toolSchemas(tools).map((t) => [t.name, tool({ description: t.description, inputSchema: jsonSchema(t.inputSchema) })]));

    it("calls the provider sends twice in a step: each call the SDK reports (a re-sent one gets a fresh id from it) is answered once", async () => {
      const { ran, tools, pipeline } = arithmetic();
      const turn = await runAISDKTurn(pipeline, step(await replayedCompletion(), sdkToolsOf(tools)));
      const reported = reportedCalls(turn);
      // The SDK's own reading: the whole calls sent again are calls of their own, under ids it made up.
      expect(reported).toEqual(expect.arrayContaining(KIMI));
      expect(new Set(reported).size).toBe(4);
      const ids = turn.results.map((r) => r.id);
      expect([...ids].sort()).toEqual([...reported].sort());
      expect(turn.results.map((r) => [r.name, r.value])).toEqual(expect.arrayContaining([['add', 5], ['multiply', 6]]));
      expect(turn.results.every((r) => r.status === 'ok')).toBe(true);
      expect(turn.toolMessage?.content.map((part) => part.type === 'tool-result' && part.toolCallId)).toEqual(ids);
      expect([...ran].sort()).toEqual([...reported].sort());
    });

    it("a Responses step whose call items are replayed (the SDK reports each call twice): each runs once, is answered once", async () => {
      const replayed = await replayedResponse();
      const { ran, tools, pipeline } = arithmetic();
      const responsesStep = () => {
        const model = createOpenAI({ apiKey: 'test-key', fetch: replayingFetch(wire('responses', replayed)) }).responses('gpt-4o');
        return streamText({ model, tools: sdkToolsOf(tools), prompt: 'Add and multiply 2 and 3.', onError: () => undefined });
      };
      const results = await pipeline.run(fromAISDKStream(responsesStep().fullStream));
      const ids = results.map((r) => r.id);
      expect(outline(results)).toEqual(answered(ids, [5, 6]));
      const turn = await runAISDKTurn(pipeline, responsesStep());
      const reported = reportedCalls(turn);
      expect(outline(turn.results)).toEqual(answered(ids, [5, 6]));
      expect(reported).toEqual(ids);
      expect(turn.toolMessage?.content.map((part) => part.type === 'tool-result' && part.toolCallId)).toEqual(ids);
      expect(ran).toEqual([...ids, ...ids]);
    });

    it("a later step that reuses the ids: answered duplicate_id in one run, run in a turn of its own", async () => {
      const [groq, hf] = await Promise.all([recorded('fantasy-groq-kimi-multi'), recorded('fantasy-hf-kimi-multi')]);
      const { ran, tools, pipeline } = arithmetic();
      const steps = [groq, hf].map((events) => step(events, sdkToolsOf(tools)).fullStream as AsyncIterable<AISDKStreamPart>);
      const results = await pipeline.run(fromAISDKStream(sequence(...steps)));
      expect(outline(results)).toEqual([...answered(KIMI, [5, 6]), ...answered(KIMI, ['duplicate_id', 'duplicate_id'])]);
      expect(new Set(results.map((r) => r.turn)).size).toBe(2);
      for (const events of [groq, hf]) {
        const turn = await runAISDKTurn(pipeline, step(events, sdkToolsOf(tools)));
        expect(outline(turn.results)).toEqual(answered(KIMI, [5, 6]));
      }
      expect(ran).toEqual([...KIMI, ...KIMI, ...KIMI]);
    });
  });
});
