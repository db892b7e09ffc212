import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import type { RemoteTools } from '../../src/bullmq/index.js';
import { createPipeline, defineTool } from '../../src/index.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { barrier, echo, keyed, sleep } from './support/contracts.js';
import { intervals, maxOverlap, useFleet, WITH_REDIS } from './support/fleet.js';

requireRedis();

describe.skipIf(!redisAvailable())(`remote tools: a round trip through BullMQ to worker processes (${WITH_REDIS})`, () => {
  const queue = `q-${randomUUID()}`;
  const suite = useFleet({ workers: 2, queues: [{ queue, concurrency: 8 }] });
  let remote: RemoteTools;
  beforeAll(() => {
    remote = suite.remote([echo, sleep, barrier, keyed], { queue });
  });

  it('a remote tool returns the worker\'s value, raw; local and remote tools mix in one pipeline, results in model order', async () => {
    const local = defineTool({ name: 'local', description: 'l', input: z.object({}), mode: 'parallel', execute: () => ({ pid: process.pid }) });
    const pipeline = createPipeline({ tools: [...remote.tools, local] });
    const results = await pipeline.run([
      { id: 'a', name: 'sleep', args: { ms: 150 } },
      { id: 'b', name: 'echo', args: { text: 'hi' } },
      { id: 'c', name: 'local', args: {} },
    ]);
    expect(results.map((r) => [r.id, r.status])).toEqual([['a', 'ok'], ['b', 'ok'], ['c', 'ok']]);
    const workerPids = suite.fleet.workers.map((child) => child.pid);
    expect(workerPids).toContain((results[0]!.value as { pid: number }).pid);
    expect(results[1]!.value).toMatchObject({ echo: 'hi' });
    expect(workerPids).toContain((results[1]!.value as { pid: number }).pid);
    expect(results[2]!.value).toEqual({ pid: process.pid });
    expect(results[1]!.content).toContain('"echo":"hi"'); // rendered in the agent
  });

  it('the per-turn pool limit and an exclusive barrier hold on the workers\' side', async () => {
    const pipeline = createPipeline({ tools: remote.tools, concurrency: 3 });
    const calls = [
      ...Array.from({ length: 6 }, (_, i) => ({ id: `p${i}`, name: 'sleep', args: { ms: 60 } })),
      { id: 'x', name: 'barrier', args: { ms: 60 } },
      ...Array.from({ length: 6 }, (_, i) => ({ id: `q${i}`, name: 'sleep', args: { ms: 60 } })),
    ];
    const results = await pipeline.run(calls);
    expect(results.every((r) => r.status === 'ok')).toBe(true);
    const events = suite.fleet.events().filter((event) => calls.some((call) => call.id === event.callId));
    expect(maxOverlap(events)).toBeLessThanOrEqual(3);
    expect(maxOverlap(events)).toBeGreaterThan(1); // the workers did run them side by side
    const runs = intervals(events);
    const x = runs.get('x')!;
    for (const [id, run] of runs) if (id !== 'x') expect(run.end <= x.start || run.start >= x.end, `${id} overlaps the barrier`).toBe(true);
  });

  it('the worker sees the agent\'s idempotency key, and a retry of a remote tool is the agent dispatching it again', async () => {
    const turn = `msg_${randomUUID()}`;
    const local = defineTool({ name: 'keyed', description: 'k', input: z.object({}), mode: 'parallel', execute: (_args, ctx) => ctx.idempotencyKey });
    const [agentSide] = await createPipeline({ tools: [local] }).run([{ id: 'k1', name: 'keyed', args: {}, turn }]);
    const [result] = await createPipeline({ tools: remote.tools }).run([{ id: 'k1', name: 'keyed', args: {}, turn }]);
    expect(result!.status).toBe('ok');
    expect(result!.attempts).toBe(2);
    expect((result!.value as { key: string }).key).toBe(agentSide!.status === 'ok' ? agentSide!.value : 'none');
    expect(result!.trace.filter((e) => e.event === 'attempt_failed')).toHaveLength(1);
  });
});
