import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { toAISDKToolMessage } from '../../src/adapters/ai-sdk/index.js';
import { toAnthropicToolResults } from '../../src/adapters/anthropic/index.js';
import { toOpenAIChatToolMessages, toOpenAIResponsesInput } from '../../src/adapters/openai/index.js';
import { askTools, createPipeline, defineTool, DurableTurnError, memoryJournal, suspendApprovals } from '../../src/index.js';

describe('the formatters refuse a turn with suspended calls', () => {
  it('every provider formatter throws turn_suspended, saying to resume', async () => {
    const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => 'ok' });
    const pipeline = createPipeline({ tools: [write], journal: memoryJournal(), approvalSecret: 'x'.repeat(32), pre: [askTools(['write'])], approve: suspendApprovals() });
    const results = await pipeline.run([{ id: 'w', name: 'write', args: {} }], { turn: 't' });
    for (const format of [toAnthropicToolResults, toOpenAIChatToolMessages, toOpenAIResponsesInput, toAISDKToolMessage] as const) {
      let error: unknown;
      try {
        format(results);
      } catch (caught) {
        error = caught;
      }
      expect(error).toBeInstanceOf(DurableTurnError);
      expect(error).toMatchObject({ code: 'turn_suspended', message: expect.stringMatching(/Resume the turn/) });
    }
    const [approval] = await pipeline.pendingApprovals('t');
    const resumed = await pipeline.resume('t', { answers: [{ token: approval!.token, answer: 'allowed-once' }] });
    expect(toAnthropicToolResults(resumed).content).toEqual([{ type: 'tool_result', tool_use_id: 'w', content: 'ok', is_error: false }]);
  });
});
