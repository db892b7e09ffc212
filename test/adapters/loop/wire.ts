// The three wire formats the durable loops speak, for tests against a loopback server: a scripted
// response's SSE text (text, then tool calls), and what a request's history carries (the calls and
// the tool results, in order), read from the JSON body the official SDK client sent.
import Anthropic from '@anthropic-ai/sdk';
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { runAnthropicLoop, toAnthropicTools } from '../../../src/adapters/anthropic/index.js';
import { runOpenAIChatLoop, runOpenAIResponsesLoop, toOpenAIChatTools, toOpenAIResponsesTools } from '../../../src/adapters/openai/index.js';
import type { LoopOptions, LoopOutcome } from '../../../src/adapters/loop/index.js';
import type { Continuation } from '../../../src/adapters/loop/index.js';
import type { PendingApproval, Pipeline, ToolResult } from '../../../src/index.js';

export type Provider = 'anthropic' | 'openai-chat' | 'openai-responses';
export const PROVIDERS: readonly Provider[] = ['anthropic', 'openai-chat', 'openai-responses'];
export const PATHS: Readonly<Record<Provider, string>> = { anthropic: '/v1/messages', 'openai-chat': '/v1/chat/completions', 'openai-responses': '/v1/responses' };

export interface ScriptCall {
  readonly id: string;
  readonly name: string;
  readonly args: Readonly<Record<string, unknown>>;
}

const sse = (events: readonly Record<string, unknown>[], named: boolean) =>
  events.map((event) => `${named ? `event: ${String(event['type'])}\n` : ''}data: ${JSON.stringify(event)}\n\n`).join('');

/** One streamed response of `provider`: `text`, then `calls` (none: the model is done). */
export function sseOf(provider: Provider, script: { readonly text?: string; readonly calls?: readonly ScriptCall[] }, n = 1): string {
  const { text = '', calls = [] } = script;
  if (provider === 'anthropic') {
    const blocks: Record<string, unknown>[] = [];
    let index = 0;
    if (text !== '') {
      blocks.push({ type: 'content_block_start', index, content_block: { type: 'text', text: '' } });
      blocks.push({ type: 'content_block_delta', index, delta: { type: 'text_delta', text } });
      blocks.push({ type: 'content_block_stop', index: index++ });
    }
    for (const call of calls) {
      blocks.push({ type: 'content_block_start', index, content_block: { type: 'tool_use', id: call.id, name: call.name, input: {} } });
      blocks.push({ type: 'content_block_delta', index, delta: { type: 'input_json_delta', partial_json: JSON.stringify(call.args) } });
      blocks.push({ type: 'content_block_stop', index: index++ });
    }
    const usage = { input_tokens: 1, output_tokens: 1 };
    return sse(
      [
        { type: 'message_start', message: { id: `msg_${n}`, type: 'message', role: 'assistant', model: 'claude-test', content: [], stop_reason: null, stop_sequence: null, usage } },
        ...blocks,
        { type: 'message_delta', delta: { stop_reason: calls.length > 0 ? 'tool_use' : 'end_turn', stop_sequence: null }, usage: { output_tokens: 1 } },
        { type: 'message_stop' },
      ],
      true,
    );
  }
  if (provider === 'openai-chat') {
    const chunk = (delta: Record<string, unknown>, finish_reason: string | null = null) => ({
      id: `chatcmpl-${n}`,
      object: 'chat.completion.chunk',
      created: 0,
      model: 'gpt-test',
      choices: [{ index: 0, delta, finish_reason }],
    });
    const chunks = [chunk({ role: 'assistant', content: text === '' ? null : text })];
    calls.forEach((call, index) =>
      chunks.push(chunk({ tool_calls: [{ index, id: call.id, type: 'function', function: { name: call.name, arguments: JSON.stringify(call.args) } }] })),
    );
    chunks.push(chunk({}, calls.length > 0 ? 'tool_calls' : 'stop'));
    return `${sse(chunks, false)}data: [DONE]\n\n`;
  }
  const output: Record<string, unknown>[] = [];
  if (text !== '') output.push({ type: 'message', id: `msg_${n}`, role: 'assistant', status: 'completed', content: [{ type: 'output_text', text, annotations: [] }] });
  for (const call of calls) output.push({ type: 'function_call', id: `fc_${call.id}`, call_id: call.id, name: call.name, arguments: JSON.stringify(call.args), status: 'completed' });
  const response = (status: string, items: unknown[]) => ({ id: `resp_${n}`, object: 'response', created_at: 0, status, model: 'gpt-test', output: items, tools: [], parallel_tool_calls: true });
  const events: Record<string, unknown>[] = [{ type: 'response.created', response: response('in_progress', []) }];
  output.forEach((item, output_index) => {
    events.push({ type: 'response.output_item.added', output_index, item });
    events.push({ type: 'response.output_item.done', output_index, item });
  });
  events.push({ type: 'response.completed', response: response('completed', output) });
  return sse(
    events.map((event, sequence_number) => ({ ...event, sequence_number })),
    true,
  );
}

type Json = Record<string, any>;

/** A call (`call`) or a tool result (`result`) in a request's history. */
export interface Step {
  readonly kind: 'call' | 'result';
  readonly id: string;
  readonly content?: string;
}

/** The history of a request: each call and each tool result, in order. */
export function historyOf(provider: Provider, body: unknown): Step[] {
  const b = body as Json;
  if (provider === 'anthropic') {
    return (b['messages'] as Json[]).flatMap((m): Step[] =>
      Array.isArray(m['content'])
        ? (m['content'] as Json[]).flatMap((block): Step[] =>
            block['type'] === 'tool_use'
              ? [{ kind: 'call' as const, id: block['id'] as string }]
              : block['type'] === 'tool_result'
                ? [{ kind: 'result' as const, id: block['tool_use_id'] as string, content: block['content'] as string }]
                : [],
          )
        : [],
    );
  }
  if (provider === 'openai-chat') {
    return (b['messages'] as Json[]).flatMap((m): Step[] =>
      m['role'] === 'assistant'
        ? ((m['tool_calls'] ?? []) as Json[]).map((c): Step => ({ kind: 'call' as const, id: c['id'] as string }))
        : m['role'] === 'tool'
          ? [{ kind: 'result' as const, id: m['tool_call_id'] as string, content: m['content'] as string }]
          : [],
    );
  }
  return (b['input'] as Json[]).flatMap((item): Step[] =>
    item['type'] === 'function_call'
      ? [{ kind: 'call' as const, id: item['call_id'] as string }]
      : item['type'] === 'function_call_output'
        ? [{ kind: 'result' as const, id: item['call_id'] as string, content: item['output'] as string }]
        : [],
  );
}

/** What every provider's loop resolves to, as these tests read it. */
export interface AnyLoop {
  readonly outcome: LoopOutcome;
  readonly messages: unknown[];
  readonly step: number;
  readonly steps: readonly { readonly outcome: string; readonly results: readonly ToolResult[] }[];
  readonly pending: readonly PendingApproval[];
  readonly continuation: Continuation | undefined;
}

/** Runs `provider`'s loop with its official SDK client against `url` (a loopback server). */
export function runLoop(provider: Provider, url: string, pipeline: Pipeline, options: LoopOptions & { readonly history: readonly unknown[] }): Promise<AnyLoop> {
  const { history, ...loop } = options;
  if (provider === 'anthropic') {
    const client = new Anthropic({ baseURL: url, apiKey: 'test-key', maxRetries: 0 });
    return runAnthropicLoop(pipeline, {
      ...loop,
      messages: history as Anthropic.MessageParam[],
      request: (messages) => client.messages.create({ model: 'claude-test', max_tokens: 1024, tools: toAnthropicTools(pipeline), messages, stream: true }),
    });
  }
  const client = new OpenAI({ baseURL: `${url}/v1`, apiKey: 'test-key', maxRetries: 0 });
  if (provider === 'openai-chat') {
    return runOpenAIChatLoop(pipeline, {
      ...loop,
      messages: history as ChatCompletionMessageParam[],
      request: (messages) => client.chat.completions.create({ model: 'gpt-test', messages, tools: toOpenAIChatTools(pipeline), stream: true }),
    });
  }
  return runOpenAIResponsesLoop(pipeline, {
    ...loop,
    input: history as ResponseInputItem[],
    request: (input) => client.responses.create({ model: 'gpt-test', input, tools: toOpenAIResponsesTools(pipeline), stream: true }),
  });
}

/** The first user message, in `provider`'s history format. */
export const prompt = (provider: Provider, text: string): unknown[] => (provider === 'openai-responses' ? [{ role: 'user', content: text }] : [{ role: 'user', content: text }]);
