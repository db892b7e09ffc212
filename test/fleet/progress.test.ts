import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { firstValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { createPipeline, type PipelineEvent } from '../../src/index.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { progressing } from './support/contracts.js';
import { useFleet, WITH_REDIS } from './support/fleet.js';

requireRedis();

describe.skipIf(!redisAvailable())(`progress of a remote body (${WITH_REDIS})`, () => {
  const queue = `q-${randomUUID()}`;
  const suite = useFleet({ workers: 1, queues: [{ queue, concurrency: 4 }] });
  const eventsOf = async (args: { steps: number; gapMs: number; fail?: boolean }) => {
    const remote = suite.remote([progressing], { queue });
    try {
      const pipeline = createPipeline({ tools: remote.tools });
      const stamped: { event: PipelineEvent; t: number }[] = [];
      const events = await firstValueFrom(pipeline.events([{ id: `p-${randomUUID()}`, name: 'progressing', args }]).pipe(toArray()));
      for (const event of events) stamped.push({ event, t: event.at });
      return stamped;
    } finally {
      await remote.close();
    }
  };

  it("the worker's ctx.progress reaches the agent's events, in order, while the body runs, before its result", async () => {
    const events = await eventsOf({ steps: 3, gapMs: 150 });
    const types = events.map(({ event }) => event.type);
    const progress = events.filter(({ event }) => event.type === 'progress');
    expect(progress.map(({ event }) => (event as Extract<PipelineEvent, { type: 'progress' }>).value)).toEqual([
      { done: 1, total: 3 },
      { done: 2, total: 3 },
      { done: 3, total: 3 },
    ]);
    expect(types.indexOf('progress')).toBeGreaterThan(types.indexOf('started'));
    expect(types.lastIndexOf('progress')).toBeLessThan(types.indexOf('finished'));
    const finished = events.find(({ event }) => event.type === 'finished')!;
    // The first report came while the body still had two 150 ms steps to go: live, not at the end.
    expect(finished.t - progress[0]!.t).toBeGreaterThan(200);
    expect((finished.event as Extract<PipelineEvent, { type: 'finished' }>).result).toMatchObject({ status: 'ok', value: 'all done' });
  });

  it('a body that fails after reporting: every report still arrives, then the error', async () => {
    const events = await eventsOf({ steps: 2, gapMs: 0, fail: true });
    expect(events.filter(({ event }) => event.type === 'progress')).toHaveLength(2);
    const result = events.find(({ event }) => event.type === 'result')!.event as Extract<PipelineEvent, { type: 'result' }>;
    expect(result.result).toMatchObject({ status: 'error', error: { code: 'tool_error' } });
    expect(result.result.content).toContain('failed after 2 steps');
  });
});

describe.skipIf(!redisAvailable())(`progress costs nothing when a body reports none (${WITH_REDIS})`, () => {
  const queue = `q-${randomUUID()}`;
  const suite = useFleet({ workers: 1, queues: [{ queue, concurrency: 4 }], own: true }); // its own Redis: commands counted
  const xranges = async () => {
    const redis = new Redis(suite.redis.url);
    try {
      const stats = await redis.info('commandstats');
      return Number(/cmdstat_xrange:calls=(\d+)/.exec(stats)?.[1] ?? 0);
    } finally {
      redis.disconnect();
    }
  };

  it('a completed job that sent no progress is answered without reading its progress stream', async () => {
    const remote = suite.remote([progressing], { queue });
    try {
      const pipeline = createPipeline({ tools: remote.tools });
      const before = await xranges();
      const results = await pipeline.run(Array.from({ length: 5 }, (_, i) => ({ id: `n${i}`, name: 'progressing', args: { steps: 0, gapMs: 0 } })));
      expect(results.map((r) => r.status)).toEqual(['ok', 'ok', 'ok', 'ok', 'ok']);
      expect(await xranges()).toBe(before);
      await pipeline.run([{ id: 'with', name: 'progressing', args: { steps: 2, gapMs: 0 } }]);
      expect(await xranges()).toBeGreaterThan(before); // and one that did is read
    } finally {
      await remote.close();
    }
  });
});
