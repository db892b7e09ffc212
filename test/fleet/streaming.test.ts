import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { beforeAll, describe, expect, it } from 'vitest';
import type { RemoteTools } from '../../src/bullmq/index.js';
import { createPipeline, outcome, type Streamed, type ToolContext } from '../../src/index.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { echo, items } from './support/contracts.js';
import { now } from './support/fleetTools.js';
import { useFleet, WITH_REDIS } from './support/fleet.js';

requireRedis();

describe.skipIf(!redisAvailable())(`streamed output of a remote body (${WITH_REDIS})`, () => {
  const queue = `q-${randomUUID()}`;
  const suite = useFleet({ workers: 1, queues: [{ queue, concurrency: 4 }], own: true }); // one test drops its pub/sub clients
  let remote: RemoteTools;
  beforeAll(() => {
    remote = suite.remote([items, echo], { queue });
  });

  it('is a streamed result with every item in order; a plain value stays a value', async () => {
    const results = await createPipeline({ tools: remote.tools }).run([
      { id: 's', name: 'items', args: { count: 1200, gapMs: 0 } }, // more than one page of reads
      { id: 'e', name: 'items', args: { count: 0, gapMs: 0 } },
      { id: 'v', name: 'echo', args: { text: 'plain' } },
    ]);
    expect(results[0]).toMatchObject({ status: 'ok', streamed: true });
    expect(results[0]!.value).toEqual(Array.from({ length: 1200 }, (_, i) => i));
    expect(results[1]).toMatchObject({ status: 'ok', streamed: true, value: [] });
    expect(results[2]).toMatchObject({ status: 'ok', streamed: false, value: { echo: 'plain' } });
  });

  it('items reach the agent while the body still runs, each once, in order', async () => {
    const tool = remote.tools.find((t) => t.name === 'items')!;
    const callId = `live-${randomUUID()}`;
    const ctx: ToolContext = { signal: new AbortController().signal, callId, index: 0, turn: undefined, idempotencyKey: 'tsk-test', cancelRest: () => undefined, progress: () => undefined };
    const output = outcome.of(await tool.execute({ count: 5, gapMs: 250 }, ctx));
    expect(output?.kind).toBe('streamed'); // the body learns only after an await that its output is a stream
    const stream = (output as Streamed<AsyncIterable<unknown>>).items;
    const arrived: { item: unknown; t: number }[] = [];
    for await (const item of stream) arrived.push({ item, t: now() });
    expect(arrived.map((a) => a.item)).toEqual([0, 1, 2, 3, 4]);
    const end = suite.fleet.events().find((event) => event.callId === callId && event.e === 'end')!.t;
    for (const { t } of arrived.slice(0, 4)) expect(t).toBeLessThan(end); // the body was still running
    // Each item arrived before the worker yielded the next one, 250 ms later: not held back to be sent
    // in a bunch (a fixed latency bound here failed on a loaded machine; the order of events does not).
    const yielded = (item: number) => suite.fleet.events().find((event) => event.callId === callId && event.e === 'item' && event.item === item)!.t;
    for (const item of [0, 1, 2, 3]) expect(arrived[item]!.t, `item ${item}`).toBeLessThan(yielded(item + 1));
  });

  it('notices lost on the way (a dropped subscriber connection) lose no item: the job\'s end reads the rest', async () => {
    const killer = new Redis(suite.redis.url);
    try {
      const run = createPipeline({ tools: remote.tools }).run([{ id: 'lossy', name: 'items', args: { count: 20, gapMs: 10 } }]);
      await new Promise((resolve) => setTimeout(resolve, 60));
      await killer.client('KILL', 'TYPE', 'pubsub'); // every subscriber, the agent's among them, drops (and reconnects)
      const [result] = await run;
      expect(result).toMatchObject({ status: 'ok', streamed: true, value: Array.from({ length: 20 }, (_, i) => i) });
    } finally {
      await killer.quit();
    }
  });

  it('a stream that fails midway is an error result with its partial items', async () => {
    const [result] = await createPipeline({ tools: remote.tools }).run([{ id: 'f', name: 'items', args: { count: 5, gapMs: 0, failAt: 3 } }]);
    expect(result).toMatchObject({ status: 'error', error: { code: 'tool_error', message: 'Tool "items" failed: failed after 3 items' }, partial: [0, 1, 2] });
  });
});
