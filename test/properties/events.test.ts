import fc from 'fast-check';
import { lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall, type ToolResult } from '../../src/index.js';

const NUM_RUNS = Math.min(Number(process.env.PROPERTY_RUNS ?? 100), 200);

const input = z.object({ ms: z.number(), fail: z.boolean(), reports: z.number() });
const body = async ({ ms, fail, reports }: z.infer<typeof input>, ctx: { progress(v: number): void; signal: AbortSignal }) => {
  for (let i = 0; i < reports; i++) ctx.progress(i);
  await new Promise((resolve) => setTimeout(resolve, ms));
  if (fail) throw new Error('failed');
  return ms;
};
const par = defineTool({ name: 'par', description: 'p', input, mode: 'parallel', execute: body });
const ex = defineTool({ name: 'ex', description: 'x', input, mode: 'exclusive', execute: body });

const spec = fc.record({
  name: fc.constantFrom('par', 'ex', 'missing'),
  ms: fc.integer({ min: 0, max: 3 }),
  fail: fc.boolean(),
  reports: fc.integer({ min: 0, max: 3 }),
  ask: fc.constantFrom<'no' | 'yes' | 'reject'>('no', 'yes', 'reject'),
  turn: fc.constantFrom('t1', 't2'),
});

describe('the event stream is consistent with the results (property)', () => {
  it('one received and one result per call; each started has one finished; result events are run’s results in model order', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(spec, { minLength: 1, maxLength: 12 }), fc.integer({ min: 1, max: 4 }), async (specs, concurrency) => {
        const calls: ToolCall[] = specs.map((s, i) => ({ id: `c${i}`, name: s.name, turn: s.turn, args: { ms: s.ms, fail: s.fail, reports: s.reports } }));
        const asked = new Map(specs.map((s, i) => [`c${i}`, s.ask]));
        const pipeline = createPipeline({
          tools: [par, ex],
          concurrency,
          pre: [(ctx, next) => (asked.get(ctx.call.id) === 'no' ? next() : { decision: 'ask' })],
          approve: async (request) => (asked.get(request.call.id) === 'yes' ? 'allowed-once' : 'rejected'),
        });
        const events = await lastValueFrom(pipeline.events(calls).pipe(toArray()));
        const ran = await pipeline.run(calls);

        for (let index = 0; index < calls.length; index++) {
          const mine = events.filter((e) => e.index === index);
          const count = (type: string) => mine.filter((e) => e.type === type).length;
          expect(count('received')).toBe(1);
          expect(count('result')).toBe(1);
          expect(count('finished')).toBe(1);
          const result = mine.find((e) => e.type === 'result')!;
          if (result.type !== 'result') throw new Error('unreachable');
          // started iff the body ran, and then exactly once, before its finished
          expect(count('started')).toBe(result.result.started ? 1 : 0);
          const types = mine.map((e) => e.type);
          expect(types[0]).toBe('received');
          expect(types.at(-1)).toBe('result');
          expect(types.indexOf('finished')).toBe(types.length - 2);
          if (result.result.started) {
            const started = types.indexOf('started');
            expect(types.slice(started + 1, -2).every((t) => t === 'progress')).toBe(true);
          } else {
            expect(count('progress')).toBe(0);
          }
          expect(count('approval-answered')).toBe(count('approval-requested'));
        }
        const results = events.flatMap((e) => (e.type === 'result' ? [e.result] : []));
        expect(results.map((r) => r.index)).toEqual(calls.map((_, i) => i));
        const outcome = (r: ToolResult) => [r.id, r.status, r.status === 'ok' ? r.value : r.error.code, r.started];
        expect(results.map(outcome)).toEqual(ran.map(outcome));
      }),
      { numRuns: NUM_RUNS },
    );
  });
});
