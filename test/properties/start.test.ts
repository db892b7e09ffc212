import fc from 'fast-check';
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall, type ToolResult } from '../../src/index.js';
import { BodyMonitor, callSpecs, monitoredTools, schedulerTimers } from '../support/monitor.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 300);

type Spec = (typeof callSpecs extends fc.Arbitrary<infer T> ? T : never)[number];

describe("start: 'after-response' under random latencies, failures, modes, arrivals and source errors", () => {
  it('never starts before the source completed, never runs when it errored; barriers kept; one result per call in order; no timer left', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        callSpecs,
        fc.array(fc.boolean(), { minLength: 14, maxLength: 14 }),
        fc.boolean(),
        fc.integer({ min: 1, max: 4 }),
        async (s, specs, afterResponse, sourceErrors, concurrency) => {
          const monitor = new BodyMonitor();
          const timers = schedulerTimers(s);
          const [par, ex] = monitoredTools(s, monitor);
          // `par` and `ex` again, as after-response tools (same bodies, same monitor).
          const late = (tool: typeof par) => defineTool({ ...(tool as unknown as Parameters<typeof defineTool>[0]), name: `${tool!.name}_late`, start: 'after-response' });
          const lateStarts: { key: string; sourceEnded: boolean }[] = [];
          let sourceEnded = false;
          const watch = (tool: ReturnType<typeof late>) =>
            defineTool({
              ...(tool as unknown as Parameters<typeof defineTool>[0]),
              input: z.any(),
              execute: (args: { key: string }, ctx) => {
                lateStarts.push({ key: args.key, sourceEnded });
                return (tool.execute as (a: unknown, c: unknown) => unknown)(args, ctx) as never;
              },
            });
          const pipeline = createPipeline({
            tools: [...monitoredTools(s, monitor), watch(late(par)), watch(late(ex))],
            abortGraceMs: Infinity,
            defaultTimeoutMs: Infinity,
            scheduler: timers,
            concurrency,
          });
          const calls = new Subject<ToolCall>();
          const results: ToolResult[] = [];
          const done = new Promise<void>((resolve) =>
            calls.pipe(pipeline.operator()).subscribe({ next: (r) => results.push(r), error: () => resolve(), complete: resolve }),
          );
          const feed = async () => {
            for (const [i, spec] of specs.entries()) {
              if (!spec.burst) await s.schedule(Promise.resolve(), `arrival ${i}`);
              const name = afterResponse[i] && spec.name !== 'slow' ? `${spec.name}_late` : spec.name;
              calls.next({ id: `c${i}`, name, args: { key: `k${i}`, steps: spec.steps, outcome: spec.outcome }, turn: `t${i % 2}` });
            }
            await s.schedule(Promise.resolve(), 'source ends');
            sourceEnded = true;
            if (sourceErrors) calls.error(new Error('response broke off'));
            else calls.complete();
          };
          void feed();
          await s.waitFor(done);
          await s.waitAll();
          expect(results.map((r) => r.index)).toEqual(specs.map((_, i) => i));
          expect(monitor.violations).toEqual([]);
          expect(monitor.maxRunning).toBeLessThanOrEqual(concurrency);
          for (const start of lateStarts) expect(start.sourceEnded).toBe(true);
          if (sourceErrors) expect(lateStarts).toEqual([]);
          for (const r of results) if (r.name.endsWith('_late') && sourceErrors) expect(r.started).toBe(false);
          expect(timers.active()).toBe(0);
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
