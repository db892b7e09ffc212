/**
 * What `coreBundle.test.ts` runs inside a context with web-standard globals only: a durable turn on
 * `memoryJournal` that suspends for an approval (a signed token: HMAC), resumed with it (the token
 * checked, the arguments' hash compared), and an observer that throws on every result.
 */
import { z } from 'zod';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals } from '../../src/index.js';

export async function runScenario(): Promise<{ readonly first: unknown; readonly pending: number; readonly resumed: unknown }> {
  const tools = [defineTool({ name: 'send', description: 'Send a message', input: z.object({ to: z.string() }), execute: ({ to }) => `sent to ${to}` })];
  const pipeline = createPipeline({
    tools,
    journal: memoryJournal(),
    approvalSecret: 'a secret of at least thirty-two bytes',
    pre: [askTools(['send'])],
    approve: suspendApprovals(),
    observers: [() => {
      throw new Error('metrics down');
    }],
  });
  const first = await pipeline.run([{ id: 'c1', name: 'send', args: { to: 'ada' } }], { turn: 't1' });
  const pending = await pipeline.pendingApprovals('t1');
  const resumed = await pipeline.resume('t1', { answers: pending.map(({ token }) => ({ token, answer: 'allowed-once' as const })) });
  const outline = (results: typeof first) => results.map((result) => [result.id, result.status, result.status === 'ok' ? result.content : result.error.code]);
  return { first: outline(first), pending: pending.length, resumed: outline(resumed) };
}
