import type Anthropic from '@anthropic-ai/sdk';
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { toAnthropicToolResults, toAnthropicTools, type AnthropicToolResultMessage } from '../../../src/adapters/anthropic/index.js';
import { ConfigError, createPipeline, defineTool, RestrictionSet, type ToolCall, type ToolResult } from '../../../src/index.js';
import { now, weather } from './helpers.js';

const failing = defineTool({
  name: 'fails',
  description: 'Always fails',
  input: z.object({}),
  execute: () => {
    throw new Error('disk on fire');
  },
});

describe('toAnthropicToolResults', () => {
  it('one user message, one tool_result per result in order, is_error for every non-ok status', async () => {
    const pipeline = createPipeline({ tools: [weather, now, failing], pre: [(ctx) => (ctx.call.id === 'toolu_denied' ? { decision: 'deny', reason: 'not today' } : undefined)] });
    const calls: ToolCall[] = [
      { id: 'toolu_ok', name: 'weather', args: '{"location":"London, UK","units":"celsius"}' },
      { id: 'toolu_bad', name: 'weather', args: '{"location":' },
      { id: 'toolu_denied', name: 'now', args: '{}' },
      { id: 'toolu_fails', name: 'fails', args: '{}' },
      { id: 'toolu_cancelled', name: 'now', args: '{}' },
    ];
    const results = await pipeline.run(calls);
    expect(results.map((r) => r.status)).toEqual(['ok', 'error', 'denied', 'error', 'cancelled']);

    const message = toAnthropicToolResults(results);
    expect(message).toEqual({
      role: 'user',
      content: results.map((r) => ({ type: 'tool_result', tool_use_id: r.id, content: r.content, is_error: r.status !== 'ok' })),
    });
    expect(message.content.map((block) => [block.tool_use_id, block.is_error])).toEqual([
      ['toolu_ok', false],
      ['toolu_bad', true],
      ['toolu_denied', true],
      ['toolu_fails', true],
      ['toolu_cancelled', true],
    ]);
    expect(message.content[0]?.content).toBe('London, UK: 15 °C');
    expect(message.content[3]?.content).toContain('disk on fire');
  });

  it('is an Anthropic MessageParam (checked at compile time), built fresh each time', async () => {
    const results: ToolResult[] = await createPipeline({ tools: [now] }).run([{ id: 'toolu_1', name: 'now', args: {} }]);
    const message: Anthropic.MessageParam = toAnthropicToolResults(results);
    const user: Anthropic.UserMessageParam = toAnthropicToolResults(results);
    const blocks: Anthropic.ToolResultBlockParam[] = toAnthropicToolResults(results).content;
    expectTypeOf(toAnthropicToolResults).returns.toEqualTypeOf<AnthropicToolResultMessage>();
    expect(message).toEqual(user);
    expect(message).not.toBe(user);
    expect(blocks).toEqual([{ type: 'tool_result', tool_use_id: 'toolu_1', content: '12:00', is_error: false }]);
    expect(toAnthropicToolResults([])).toEqual({ role: 'user', content: [] });
  });
});

describe('toAnthropicTools', () => {
  it('gives { name, description, input_schema } per tool, the JSON Schema of the zod input', () => {
    const tools: Anthropic.Tool[] = toAnthropicTools([weather, now]);
    expect(tools).toEqual([
      {
        name: 'weather',
        description: 'The current weather in a city',
        input_schema: {
          type: 'object',
          properties: {
            location: { type: 'string', description: 'City and country, e.g. "London, UK"' },
            units: { type: 'string', enum: ['celsius', 'fahrenheit'] },
          },
          required: ['location', 'units'],
        },
      },
      { name: 'now', description: 'The current time', input_schema: { type: 'object', properties: {} } },
    ]);
    // usable as the request's `tools` parameter
    const params: Pick<Anthropic.MessageCreateParamsStreaming, 'tools'> = { tools: toAnthropicTools([weather]) };
    expect(params.tools).toHaveLength(1);
  });

  it("offers a pipeline's available tools only: its restrictions applied", () => {
    const pipeline = createPipeline({ tools: [weather, now], restrictions: new RestrictionSet([{ scope: 'host', deny: ['now'] }]) });
    expect(toAnthropicTools(pipeline).map((tool) => tool.name)).toEqual(['weather']);
  });

  it('returns fresh Tool objects (safe to add cache_control to)', () => {
    const [first] = toAnthropicTools([weather]);
    first!.cache_control = { type: 'ephemeral' };
    expect(toAnthropicTools([weather])[0]).not.toHaveProperty('cache_control');
  });

  it('refuses a tool whose input is not an object schema, naming it', () => {
    const scalar = defineTool({ name: 'echo', description: 'Echo', input: z.string(), execute: (text) => text });
    const offer = () => toAnthropicTools([weather, scalar]);
    expect(offer).toThrow(TypeError); // a ConfigError is a TypeError still
    expect(offer).toThrow(ConfigError);
    expect(offer).toThrow(expect.objectContaining({ code: 'invalid_config', where: 'toAnthropicTools', option: 'tool "echo" input' }));
    expect(offer).toThrow(/^toAnthropicTools: `tool "echo" input` must be a schema of type "object" .*define it with z\.object\(\.\.\.\)\); received "\(a schema of type string\)"$/);
  });
});
