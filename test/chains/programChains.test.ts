import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, runCodeTool, type ExecuteMiddleware, type ProgramOutput, type ResultMiddleware } from '../../src/index.js';
import { createQuickJSRuntime } from '../../src/ptc/quickjs/index.js';

const runtime = createQuickJSRuntime({ timeoutMs: 10_000, poolSize: 1 });
afterAll(() => runtime.close());

describe("a program's sub-calls pass the execute and result chains", () => {
  it('as the model\'s own calls do: the pipeline\'s and each tool\'s own', async () => {
    const ran: number[] = [];
    const executed: string[] = [];
    const wrapped: string[] = [];
    const cache = new Map<number, unknown>([[2, 'two, from the cache']]);
    const read = defineTool({
      name: 'read',
      description: 'reads a page',
      input: z.object({ n: z.number() }),
      mode: 'parallel',
      idempotent: true,
      chains: { execute: [(ctx, next) => cache.get(ctx.args.n) ?? next()] },
      execute: ({ n }) => (ran.push(n), `page ${n}`),
    });
    const trace: ExecuteMiddleware = (ctx, next) => (executed.push(ctx.call.id), next());
    const tag: ResultMiddleware = (draft) => {
      wrapped.push(draft.result.id);
      if (draft.result.name === 'read') draft.content = `[${draft.content}]`; // a program gets the text the model would
    };
    const pipeline = createPipeline({ tools: [read, runCodeTool({ runtime })], execute: [trace], result: [tag] });
    const [result] = await pipeline.run([{ id: 'p', name: 'run_code', args: { program: 'return [await tools.read({ n: 1 }), await tools.read({ n: 2 })]' } }]);
    expect(result?.status, result?.content).toBe('ok');
    expect((result?.value as ProgramOutput).value).toEqual(['[page 1]', '[two, from the cache]']);
    expect(ran).toEqual([1]); // the tool's own cache answered n: 2
    expect(executed).toEqual(['p', 'p#1', 'p#2']);
    expect(wrapped).toEqual(['p#1', 'p#2', 'p']);
  });

  it('a sub-call whose middleware fails is denied inside the program, which goes on', async () => {
    const read = defineTool({ name: 'read', description: 'reads', input: z.object({ n: z.number() }), mode: 'parallel', execute: ({ n }) => n });
    const odd: ExecuteMiddleware = function odd(ctx, next) {
      if ((ctx.args as { n: number }).n % 2 === 1) throw new Error('odd pages are off limits');
      return next();
    };
    const pipeline = createPipeline({ tools: [read, runCodeTool({ runtime })], execute: [odd] });
    const [result] = await pipeline.run([{ id: 'p', name: 'run_code', args: { program: 'return [await tools.read({ n: 2 }), await tools.read({ n: 3 }).catch((e) => e.code)]' } }]);
    expect(result?.status, result?.content).toBe('ok');
    expect((result?.value as ProgramOutput).value).toEqual([2, 'policy_error']);
  });
});
