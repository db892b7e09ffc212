import { identity, Subject, type Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, RestrictionSet, type AnyTool, type ToolResult } from '../../src/index.js';
import { PIPELINE_HOOK } from '../../src/engine/layerState/pipelineAware.js';
import { pipelineHandle, type PipelineHandle } from '../../src/engine/pipelineHandle.js';
import type { BatchOptions } from '../../src/engine/pool/batchOptions.js';
import type { PipelineSettings } from '../../src/engine/settings.js';
import { resolvePipelineOptions } from '../../src/pipeline/options.js';

// What a pipeline-aware tool gets of its pipeline: a handle (tools, concurrency, sub-batches), never
// its settings; and what a sub-batch runs by: the pipeline's stages with its own tools, bound and
// batch options, results in completion order.

/** A tool whose bodies wait until the test settles them: `release(id)` resolves call `id`'s body, `fail(id)` rejects it. */
function gated(name: string) {
  const waiting = new Map<string, { resolve: (value: unknown) => void; reject: (error: unknown) => void }>();
  const started: string[] = [];
  const tool = defineTool({
    name,
    description: name,
    input: z.object({}),
    mode: 'parallel',
    execute: (_args, ctx) =>
      new Promise((resolve, reject) => {
        started.push(ctx.callId);
        waiting.set(ctx.callId, { resolve, reject });
      }),
  });
  return { tool, started, release: (id: string) => waiting.get(id)!.resolve(id), fail: (id: string) => waiting.get(id)!.reject(new Error('boom')) };
}

const echo = (name: string) => defineTool({ name, description: name, input: z.object({}), mode: 'parallel', execute: () => name });

/** Resolves once `condition` holds, checked after each turn of the event loop; fails if it still does not after 1000 turns. */
async function until(condition: () => boolean): Promise<void> {
  for (let turn = 0; !condition(); turn++) {
    if (turn === 1000) throw new Error(`never held: ${condition.toString()}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

/** Runs `stages` over calls sent by hand; logs each result (`<id> <status>`) and the completion. */
function drive(stages: (calls: Subject<{ id: string; name: string; args: unknown }>) => Observable<ToolResult>) {
  const calls = new Subject<{ id: string; name: string; args: unknown }>();
  const log: string[] = [];
  const results = new Map<string, ToolResult>();
  stages(calls).subscribe({
    next: (result) => {
      results.set(result.id, result);
      log.push(`${result.id} ${result.status}`);
    },
    complete: () => log.push('complete'),
  });
  const send = (id: string, name: string) => calls.next({ id, name, args: {} });
  return { log, results, send, end: () => calls.complete() };
}

describe('PipelineHandle', () => {
  it('a pipeline-aware tool is bound with a handle that offers the available tools — the bound ones, read after binding — and the concurrency', () => {
    let handle: PipelineHandle | undefined;
    const bound = echo('aware');
    const aware = Object.freeze({
      ...echo('aware'),
      [PIPELINE_HOOK]: (pipeline: PipelineHandle): AnyTool => {
        handle = pipeline;
        return bound;
      },
    });
    const restrictions = new RestrictionSet([{ scope: 'host', deny: ['secret'] }]);
    const pipeline = createPipeline({ tools: [echo('a'), echo('secret'), aware], restrictions, concurrency: 3 });
    expect(handle).toBeDefined();
    expect(handle!.tools.map((tool) => tool.name)).toEqual(['a', 'aware']);
    expect(handle!.tools[1]).toBe(bound); // the tool the pipeline registered, not the one it bound
    expect(pipeline.tools.find((tool) => tool.name === 'aware')).toBe(bound);
    expect(handle!.concurrency).toBe(3);
    expect(Object.keys(handle!)).not.toContain('settings');
  });
});

describe('SubBatch', () => {
  it('runs the calls of its own tools only, results in completion order, with no maxPending bound', async () => {
    const slow = gated('slow');
    const quick = gated('quick');
    const settings = resolvePipelineOptions({ tools: [slow.tool, quick.tool, echo('other')], concurrency: 3, maxPending: 1 });
    const batch = pipelineHandle(settings).subBatch({ tools: ['slow', 'quick'] });
    const { log, results, send, end } = drive((calls) => calls.pipe(batch.stages(new AbortController().signal)));
    send('s', 'slow');
    send('q1', 'quick');
    send('o', 'other');
    await until(() => quick.started.includes('q1'));
    quick.release('q1');
    await until(() => log.includes('q1 ok'));
    // A pipeline with maxPending 1 would hold q2 back (q1's result waits behind s); a sub-batch has nothing to reorder.
    send('q2', 'quick');
    await until(() => quick.started.includes('q2'));
    quick.release('q2');
    await until(() => log.includes('q2 ok'));
    slow.release('s');
    end();
    await until(() => log.includes('complete'));
    expect(log).toEqual(['o error', 'q1 ok', 'q2 ok', 's ok', 'complete']);
    expect(results.get('o')!.error!.code).toBe('unknown_tool');
  });

  it.each([
    [undefined, ['b cancelled', 'a error', 'complete']],
    ['turn', ['b cancelled', 'a error', 'complete']],
    ['none', ['a error', 'b ok', 'complete']],
  ] as const)('cancelRest %s reaches the pool: a failure under the pipeline’s cancel-rest', async (cancelRest, expected) => {
    const gate = gated('g');
    const settings = resolvePipelineOptions({ tools: [gate.tool], onError: 'cancel-rest' });
    const batch = pipelineHandle(settings).subBatch(cancelRest === undefined ? {} : { cancelRest });
    const { log, send, end } = drive((calls) => calls.pipe(batch.stages(new AbortController().signal)));
    send('a', 'g');
    send('b', 'g');
    end();
    await until(() => gate.started.length === 2);
    gate.fail('a');
    await until(() => log.includes('a error'));
    if (cancelRest === 'none') gate.release('b');
    await until(() => log.includes('complete'));
    expect(log).toEqual(expected);
  });

  it('a runner (a layer that runs the stages itself) gets the batch’s settings and pool options, and its stages are the ones run', async () => {
    const settings = resolvePipelineOptions({ tools: [echo('a'), echo('b')], concurrency: 2, maxPending: 4 });
    const batch = pipelineHandle(settings).subBatch({ tools: ['a'], concurrency: 7, cancelRest: 'none', complete: 'when-settled' });
    const seen: { settings: PipelineSettings; options: BatchOptions }[] = [];
    const { log, end } = drive((calls) =>
      calls.pipe(
        batch.stages(new AbortController().signal, (given, options) => {
          seen.push({ settings: given, options });
          return identity as never; // stages of its own: here, none
        }),
      ),
    );
    end();
    await until(() => log.includes('complete'));
    expect(seen).toHaveLength(1);
    const [{ settings: given, options }] = seen as [(typeof seen)[0]];
    expect([...given.tools.keys()]).toEqual(['a']);
    expect([given.concurrency, given.maxPending]).toEqual([7, Infinity]);
    expect(given.pre).toBe(settings.pre); // the pipeline's own policies, approver and chains
    expect(given.approve).toBe(settings.approve);
    expect(options).toEqual({ cancelRest: 'none', complete: 'when-settled' });
  });
});
