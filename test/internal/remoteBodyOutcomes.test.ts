import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, outcome } from '../../src/index.js';

// What a remote tool's body (toolstream/bullmq) tells the pool that an ordinary body cannot.
describe('a body that learns its outcome late', () => {
  it('rejecting with outcome.unknown ends its call as outcome_unknown, a failure of its mode (exclusive: the rest of the turn is cancelled)', async () => {
    const lost = defineTool({ name: 'lost', description: 'd', input: z.object({}), execute: () => Promise.reject(outcome.unknown('its worker died mid-body')) });
    const after = defineTool({ name: 'after', description: 'd', input: z.object({}), execute: () => 'ran' });
    const [first, second] = await createPipeline({ tools: [lost, after] }).run([
      { id: 'a', name: 'lost', args: {} },
      { id: 'b', name: 'after', args: {} },
    ]);
    expect(first).toMatchObject({ status: 'error', error: { code: 'outcome_unknown', message: 'Tool "lost": its worker died mid-body' } });
    expect(second).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', reason: 'sibling_failed', byCallId: 'a' } });
  });

  it('resolving with outcome.streamed is collected as a streamed output, items in order and retention applied', async () => {
    async function* items() {
      yield 1;
      yield 2;
      yield 3;
    }
    const late = defineTool({ name: 'late', description: 'd', input: z.object({}), execute: async () => outcome.streamed(items()) });
    const [result] = await createPipeline({ tools: [late], retention: { tools: { late: { maxItems: 2 } } } }).run([{ id: 'a', name: 'late', args: {} }]);
    expect(result).toMatchObject({ status: 'ok', streamed: true, value: [1, 2] });
  });

  it('an ordinary value that only looks like one stays a value', async () => {
    const plain = defineTool({ name: 'plain', description: 'd', input: z.object({}), execute: async () => ({ items: [1] }) });
    const [result] = await createPipeline({ tools: [plain] }).run([{ id: 'a', name: 'plain', args: {} }]);
    expect(result).toMatchObject({ status: 'ok', streamed: false, value: { items: [1] } });
  });
});
