import { Stream as AnthropicStream } from '@anthropic-ai/sdk/core/streaming';
import { BetaMessageStream } from '@anthropic-ai/sdk/lib/BetaMessageStream';
import { ChatCompletionStream } from 'openai/lib/ChatCompletionStream';
import { Stream as OpenAIStream } from 'openai/streaming';
import { describe, expect, it } from 'vitest';
import { runAnthropicTurn, type AnthropicStreamEvent, type AnthropicTurn } from '../../../src/adapters/anthropic/index.js';
import { runOpenAIChatTurn, runOpenAIResponsesTurn, type OpenAIChatTurn, type OpenAIResponsesTurn } from '../../../src/adapters/openai/index.js';
import { createPipeline, SourceError } from '../../../src/index.js';
import { streamedResponse } from '../../../src/testing/index.js';
import { readManifest, readResponses, type RecordedResponse, type Recording } from './recordings.js';
import { parsed } from './replay.js';

// Every response of the shared corpus of real provider streams, as one turn of an agent loop: what the
// turn hands the next request must answer every call exactly once, in order, and hold every call it
// answers — the provider rejects anything else. Where the SDK's own accumulator assembles the same
// calls, the assistant message is the SDK's (less what the API would reject back).

const manifest = readManifest();
// No tool is known: every call is answered `unknown_tool`. What is checked is the shape of the history.
const pipeline = createPipeline({ tools: [] });
/** Responses whose assistant message was compared with the SDK's accumulator's, and those where it could not be. */
const compared = { anthropic: 0, chat: 0, skipped: [] as string[] };

describe('each corpus response as one turn of an agent loop', () => {
  if ('missing' in manifest) {
    it.skip(`skipped: ${manifest.missing}`, () => undefined);
    return;
  }

  for (const recording of manifest.recordings) {
    it(`${recording.name} (${recording.format}): every call answered once, in order, and in the history`, async () => {
      for (const [n, response] of readResponses(recording).entries()) {
        const where = `response ${n + 1} of ${recording.file}`;
        const run = turnOf(recording, response);
        if (recording.expect?.sourceError === true) {
          await expect(run, where).rejects.toBeInstanceOf(SourceError);
          continue;
        }
        const turn = await run;
        if (recording.format === 'anthropic') await checkAnthropic(turn as AnthropicTurn, response, where);
        else if (recording.format === 'chat') await checkChat(turn as OpenAIChatTurn, response, where);
        else checkResponses(turn as OpenAIResponsesTurn, where);
      }
    });
  }

  it('the assistant messages were compared with the SDK accumulators\' where those assemble the same calls', () => {
    console.log(`compared with the SDK: ${compared.anthropic} Anthropic, ${compared.chat} Chat responses; not: ${compared.skipped.join(', ')}`);
    expect(compared.anthropic).toBeGreaterThanOrEqual(10);
    expect(compared.chat).toBeGreaterThanOrEqual(30);
  });
});

function turnOf(recording: Recording, response: RecordedResponse): Promise<AnthropicTurn | OpenAIChatTurn | OpenAIResponsesTurn> {
  const events = parsed(recording.format, response);
  switch (recording.format) {
    case 'anthropic':
      return runAnthropicTurn(pipeline, events as AsyncIterable<AnthropicStreamEvent>);
    case 'chat':
      return runOpenAIChatTurn(pipeline, events as Parameters<typeof runOpenAIChatTurn>[1]);
    case 'responses':
      return runOpenAIResponsesTurn(pipeline, events as Parameters<typeof runOpenAIResponsesTurn>[1]);
  }
}

type Block = Record<string, unknown>;

async function checkAnthropic(turn: AnthropicTurn, response: RecordedResponse, where: string): Promise<void> {
  const ids = turn.results.map((r) => r.id);
  const content = turn.message.content as unknown as Block[];
  expect(content.filter((b) => b['type'] === 'tool_use').map((b) => b['id']), where).toEqual(ids);
  expect(turn.toolResults?.content.map((b) => b.tool_use_id), where).toEqual(ids.length > 0 ? ids : undefined);
  expect(content.filter((b) => b['type'] === 'text' && b['text'] === ''), where).toEqual([]);
  for (const message of turn.messages) expect(message.content.length, where).toBeGreaterThan(0);

  // The SDK's accumulator over the same bytes (one message per response, as the corpus is split); the
  // beta one, which also grows `mcp_tool_use` inputs (the MCP connector is a beta feature).
  const sdk = AnthropicStream.fromSSEResponse(streamedResponse(response.sse), new AbortController());
  const official = await BetaMessageStream.fromReadableStream(sdk.toReadableStream()).finalMessage().catch(() => undefined);
  if (official === undefined) return void compared.skipped.push(where);
  compared.anthropic++;
  // What the API would reject back is left out; a call that did not parse goes back with `input: {}`.
  const unparsed = new Set(turn.results.filter((r) => r.error?.code === 'invalid_json' || r.error?.code === 'incomplete_args').map((r) => r.id));
  const expected = (official.content as unknown as Block[])
    .filter((b) => !(b['type'] === 'text' && b['text'] === ''))
    .map((b) => (b['type'] === 'tool_use' && unparsed.has(b['id'] as string) ? { ...b, input: {} } : b));
  expect(JSON.parse(JSON.stringify(content)), where).toEqual(JSON.parse(JSON.stringify(expected)));
}

async function checkChat(turn: OpenAIChatTurn, response: RecordedResponse, where: string): Promise<void> {
  const ids = turn.results.map((r) => r.id);
  const toolCalls = turn.message.tool_calls ?? [];
  expect(toolCalls.map((c) => c.id), where).toEqual(ids);
  expect(turn.toolMessages.map((m) => m.tool_call_id), where).toEqual(ids);
  expect(turn.messages, where).toEqual(turn.text === '' && ids.length === 0 ? [] : [turn.message, ...turn.toolMessages]);
  if (ids.length === 0) expect('tool_calls' in turn.message, where).toBe(false);

  // Where the SDK's accumulator assembles the same calls, the names, arguments and text are its own.
  const sdk = OpenAIStream.fromSSEResponse(streamedResponse(response.sse), new AbortController());
  const official = await ChatCompletionStream.fromReadableStream(sdk.toReadableStream())
    .finalMessage()
    .catch(() => undefined);
  const officialCalls = (official?.tool_calls ?? []).flatMap((c) => (c.type === 'function' ? [{ id: c.id, name: c.function.name, arguments: c.function.arguments }] : []));
  if (official === undefined || officialCalls.map((c) => c.id).join() !== ids.join()) return void compared.skipped.push(where);
  compared.chat++;
  expect(toolCalls.map((c) => (c.type === 'function' ? { id: c.id, name: c.function.name, arguments: c.function.arguments } : c)), where).toEqual(officialCalls);
  expect(turn.text, where).toBe(official.content ?? '');
}

function checkResponses(turn: OpenAIResponsesTurn, where: string): void {
  const ids = turn.results.map((r) => r.id);
  const items = turn.output as unknown as Block[];
  const calls = items.filter((item) => item['type'] === 'function_call').map((item) => item['call_id']);
  expect(calls, where).toEqual(ids);
  expect(turn.toolOutputs.map((item) => (item as unknown as Block)['call_id']), where).toEqual(ids);
  expect(turn.items, where).toEqual([...turn.output, ...turn.toolOutputs]);
  expect(turn.done, where).toBe(ids.length === 0);
}
