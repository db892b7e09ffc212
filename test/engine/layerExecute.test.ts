import { describe, expect, it } from 'vitest';
import { lastValueFrom, of, toArray } from 'rxjs';
import { z } from 'zod';
import { runHooks } from '../../src/engine/chains/hooks.js';
import { runStages } from '../../src/engine/runStages.js';
import { reorderByIndex } from '../../src/engine/stages/reorder.js';
import { defineTool, type ExecuteMiddleware } from '../../src/index.js';
import { resolvePipelineOptions, type PipelineOptions } from '../../src/pipeline/options.js';
import type { CallHooks } from '../../src/types/hooks.js';
import type { ToolCall } from '../../src/types/toolCall.js';

// A layer's own execute middleware (`CallHooks.execute`): the seam the durable journal writes its
// `started` through, outermost around each attempt of each call of its run.

const log: string[] = [];
const logging = (name: string): ExecuteMiddleware =>
  Object.defineProperty((ctx: Parameters<ExecuteMiddleware>[0], next: Parameters<ExecuteMiddleware>[1]) => (log.push(`${name} ${ctx.attempt}`), next()), 'name', { value: name });

const write = defineTool({
  name: 'write', description: 'writes', input: z.object({ n: z.number() }), mode: 'parallel',
  chains: { execute: [logging('tool')] },
  execute: async ({ n }) => (log.push(`body ${n}`), n),
});
const flaky = defineTool({
  name: 'flaky', description: 'fails once', input: z.object({}), mode: 'parallel', idempotent: true,
  retry: { attempts: 2, backoff: { initialMs: 0 } },
  execute: (() => {
    let n = 0;
    return async () => {
      log.push(`body attempt ${++n}`);
      if (n === 1) throw new Error('first');
      return 'ok';
    };
  })(),
});

const run = (hooks: readonly (CallHooks | undefined)[], calls: readonly ToolCall[], options: Partial<PipelineOptions> = {}) =>
  lastValueFrom(of(...calls).pipe(runStages(resolvePipelineOptions({ tools: [write, flaky], ...options }), undefined, runHooks(hooks)), reorderByIndex(), toArray()));

describe('runHooks: the layers’ execute middleware', () => {
  it('none when no layer has any, so the pool keeps invoking bodies directly', () => {
    expect(runHooks([{ started: () => undefined }])!.execute).toBeUndefined();
  });

  it('one chain in registration order, each named by its function, a class-based layer’s `this` kept', async () => {
    class Journal implements CallHooks {
      readonly entries: number[] = [];
      execute(ctx: Parameters<ExecuteMiddleware>[0], next: Parameters<ExecuteMiddleware>[1]): unknown {
        this.entries.push(ctx.index);
        return next();
      }
    }
    const journal = new Journal();
    const chain = runHooks([journal, undefined, { started: () => undefined }, { execute: logging('events') }])!.execute!;
    expect(chain.names).toEqual(['execute', 'events']);
    log.length = 0;
    await run([journal, { execute: logging('events') }], [{ id: 'a', name: 'write', args: { n: 1 } }]);
    expect(journal.entries).toEqual([0]);
  });
});

describe('a layer’s execute middleware around each attempt', () => {
  it('is outermost: the layers’ in registration order, then the pipeline’s, then the tool’s, then the body', async () => {
    log.length = 0;
    const results = await run([{ execute: logging('journal') }, { execute: logging('events') }], [{ id: 'a', name: 'write', args: { n: 1 } }], { execute: [logging('pipeline')] });
    expect(results[0]).toMatchObject({ status: 'ok', value: 1, started: true, attempts: 1 });
    expect(log).toEqual(['journal 1', 'events 1', 'pipeline 1', 'tool 1', 'body 1']);
  });

  it('runs once per attempt of a retried call', async () => {
    log.length = 0;
    const [result] = await run([{ execute: logging('journal') }], [{ id: 'f', name: 'flaky', args: {} }]);
    expect(result).toMatchObject({ status: 'ok', attempts: 2 });
    expect(log).toEqual(['journal 1', 'body attempt 1', 'journal 2', 'body attempt 2']);
  });

  it('runs after the start checks, and never for a call one refused', async () => {
    log.length = 0;
    const pre: PipelineOptions['pre'] = [
      function sandbox(ctx) {
        ctx.beforeStart((args) => {
          const { n } = args as { n: number };
          log.push(`check ${n}`);
          return n === 2 ? { decision: 'deny', reason: 'not now' } : undefined;
        });
        return { decision: 'allow' };
      },
    ];
    const calls = [1, 2].map((n): ToolCall => ({ id: `c${n}`, name: 'write', args: { n } }));
    const results = await run([{ execute: logging('journal') }], calls, { pre });
    expect(results.map((r) => r.status)).toEqual(['ok', 'denied']);
    expect(results[1]).toMatchObject({ error: { code: 'denied', stage: 'start', policy: 'sandbox' }, started: false });
    expect(log.filter((line) => line !== 'check 2')).toEqual(['check 1', 'journal 1', 'tool 1', 'body 1']);
  });

  it('a failure of its own before next() fails the call closed: the body never runs, `policy_error` at the execute stage, by its name', async () => {
    log.length = 0;
    const journalFailed = new Error('the store is down');
    const failing: CallHooks = { execute: Object.defineProperty(() => Promise.reject(journalFailed), 'name', { value: 'journal' }) };
    const [result] = await run([failing], [{ id: 'a', name: 'write', args: { n: 1 } }]);
    expect(log).toEqual([]);
    expect(result).toMatchObject({ status: 'denied', error: { code: 'policy_error', stage: 'execute', policy: 'journal', cause: journalFailed } });
    expect(result!.trace).toEqual([expect.objectContaining({ stage: 'execute', event: 'failed', policy: 'journal' })]);
  });
});
