import { firstValueFrom, toArray } from 'rxjs';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, denyTools, type ToolResult } from '../../src/index.js';

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

const read = defineTool({
  name: 'read',
  description: 'sleeps for ms, then answers',
  input: z.object({ ms: z.number(), fail: z.boolean().optional() }),
  mode: 'parallel',
  timeoutMs: 150,
  execute: async ({ ms, fail }, { signal }) => {
    await sleep(ms, signal);
    if (fail === true) throw new Error('read failed');
    return 'read';
  },
});
const write = defineTool({
  name: 'write',
  description: 'an exclusive write',
  input: z.object({ ms: z.number() }),
  mode: 'exclusive',
  execute: async ({ ms }, { signal }) => (await sleep(ms, signal), 'written'),
});
const rm = defineTool({ name: 'rm', description: 'never allowed', input: z.object({}), mode: 'parallel', execute: () => 'gone' });

/**
 * A real run with every kind of bar: a pool of 2 with queueing, an error, a timeout, an exclusive write
 * that waits for an approval, a denied call, and results that wait for earlier ones to be given out.
 */
export async function scheduleScenario() {
  const pipeline = scenarioPipeline();
  const results: ToolResult[] = await pipeline.run(SCENARIO_CALLS);
  return { results, tools: pipeline.tools };
}

/** The same run, as its lifecycle events (`pipeline.events()`). */
export async function scheduleScenarioEvents() {
  const pipeline = scenarioPipeline();
  const events = await firstValueFrom(pipeline.events(SCENARIO_CALLS).pipe(toArray()));
  return { events, tools: pipeline.tools };
}

const SCENARIO_CALLS = [
  { id: 'r1', name: 'read', args: { ms: 80 } },
  { id: 'r2', name: 'read', args: { ms: 30, fail: true } },
  { id: 'r3', name: 'read', args: { ms: 40 } },
  { id: 'w1', name: 'write', args: { ms: 50 } },
  { id: 'x1', name: 'rm', args: {} },
  { id: 'r4', name: 'read', args: { ms: 400 } },
  { id: 'r5', name: 'read', args: { ms: 20 } },
];

function scenarioPipeline() {
  return createPipeline({
    tools: [read, write, rm],
    concurrency: 2,
    pre: [denyTools(['rm']), askTools(['write'])],
    approve: async () => (await new Promise((resolve) => setTimeout(resolve, 40)), 'allowed-once' as const),
  });
}

