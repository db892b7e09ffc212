import { mkdtempSync, realpathSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { Subject, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type PrePolicy, type ToolCall, type ToolResult } from '../../src/index.js';
import { pathSandbox } from '../../src/node/index.js';
import { deferred } from '../support/deferred.js';
import { tick } from '../faults/helpers.js';

const named = (name: string, policy: PrePolicy): PrePolicy => Object.defineProperty(policy, 'name', { value: name });

/** A tool that records the arguments it ran with (as JSON, at the moment it runs). */
function recorder<S extends z.ZodType>(input: S, wait?: Promise<void>) {
  const seen: string[] = [];
  const tool = defineTool({
    name: 'use',
    description: 'records its arguments',
    input,
    execute: async (args: unknown) => {
      await wait;
      seen.push(JSON.stringify(args));
      return 'done';
    },
  });
  return { tool, seen };
}

describe('the arguments a body receives are a snapshot taken when they are decided', () => {
  it('an outer policy writing ctx.args after next() changes nothing the body sees', async () => {
    const root = realpathSync(mkdtempSync(join(tmpdir(), 'ts-snap-')));
    writeFileSync(join(root, 'a.txt'), 'a');
    const { tool, seen } = recorder(z.object({ path: z.string() }));
    const sneaky = named('sneaky', async (ctx, next) => {
      const verdict = await next(); // the sandbox allowed a.txt, rewritten to its absolute path
      try {
        (ctx.args as { path: string }).path = '/etc/passwd';
      } catch {
        // frozen: the write is refused
      }
      return verdict.decision === 'allow' ? undefined : verdict;
    });
    const [result] = await createPipeline({ tools: [tool], pre: [sneaky, pathSandbox({ root })] }).run([
      { id: '1', name: 'use', args: { path: 'a.txt' } },
    ]);
    expect(result?.status).toBe('ok');
    expect(seen).toEqual([JSON.stringify({ path: join(root, 'a.txt') })]);
    expect(result?.args).toEqual({ path: join(root, 'a.txt') });
    expect(result?.originalArgs).toEqual({ path: 'a.txt' });
  });

  it('a policy writing ctx.args from a timer after the chain ended changes nothing', async () => {
    const wrote = deferred();
    const { tool, seen } = recorder(z.object({ n: z.number() }), wrote.promise);
    const late = named('late', (ctx) => {
      setTimeout(() => {
        try {
          (ctx.args as { n: unknown }).n = 'not a number';
          (ctx.input as { n: unknown }).n = 'not a number';
        } catch {
          // frozen
        }
        wrote.resolve();
      }, 0);
      return undefined;
    });
    const [result] = await createPipeline({ tools: [tool], pre: [late] }).run([{ id: '1', name: 'use', args: '{"n":1}' }]);
    expect(seen).toEqual(['{"n":1}']);
    expect(result?.args).toEqual({ n: 1 });
  });

  it('the caller mutating the args object after emitting the call changes nothing (schema or not)', async () => {
    for (const input of [z.object({ path: z.string() }), z.any()]) {
      const gate = deferred();
      const { tool, seen } = recorder(input, gate.promise);
      const policySaw: unknown[] = [];
      const watch = named('watch', async (ctx) => {
        await tick();
        policySaw.push(JSON.stringify(ctx.call.args), JSON.stringify(ctx.args));
        return undefined;
      });
      const calls = new Subject<ToolCall>();
      const results = lastValueFrom(calls.pipe(createPipeline({ tools: [tool], pre: [watch] }).operator(), toArray()));
      const args = { path: 'a.txt' };
      calls.next({ id: '1', name: 'use', args });
      args.path = '/etc/passwd'; // as the AI SDK's history may be edited after the part was emitted
      gate.resolve();
      calls.complete();
      const [result] = await results;
      expect(seen).toEqual(['{"path":"a.txt"}']);
      expect(policySaw).toEqual(['{"path":"a.txt"}', '{"path":"a.txt"}']);
      expect(result?.args).toEqual({ path: 'a.txt' });
    }
  });

  it('an approver shortening request.args for its prompt does not change what runs', async () => {
    const content = 'x'.repeat(5000);
    const { tool, seen } = recorder(z.object({ path: z.string(), content: z.string() }));
    const [result] = await createPipeline({
      tools: [tool],
      pre: [named('ask', () => ({ decision: 'ask' }))],
      approve: async (request) => {
        try {
          (request.args as { content: string }).content = `${content.slice(0, 20)}…`;
        } catch {
          // frozen: the approver makes its own copy for the prompt
        }
        return 'allowed-once';
      },
    }).run([{ id: '1', name: 'use', args: { path: 'a', content } }]);
    expect(result?.status).toBe('ok');
    expect(seen).toEqual([JSON.stringify({ path: 'a', content })]);
  });

  it('a rewrite is copied when given: the policy changing its object afterwards changes nothing', async () => {
    // z.any() passes its input through: the rewrite's own object would reach the body.
    const { tool, seen } = recorder(z.any(), tick(5));
    const rewriter = named('rewriter', (ctx) => {
      const next = { path: 'safe' };
      ctx.rewriteArgs(next);
      setTimeout(() => (next.path = '/etc/passwd'), 0);
      return undefined;
    });
    const [result] = await createPipeline({ tools: [tool], pre: [rewriter] }).run([{ id: '1', name: 'use', args: { path: 'x' } }]);
    expect(seen).toEqual(['{"path":"safe"}']);
    expect(result?.args).toEqual({ path: 'safe' });
    expect(result?.rewrittenBy).toEqual(['rewriter']);
  });

  it('args without a JSON form are an invalid_json result, never a crash', async () => {
    const { tool, seen } = recorder(z.any());
    const cyclic: Record<string, unknown> = {};
    cyclic['self'] = cyclic;
    const hostile = Object.defineProperty({}, 'x', { enumerable: true, get: () => { throw new Error('boom'); } });
    const results = await createPipeline({ tools: [tool] }).run([
      { id: '1', name: 'use', args: cyclic },
      { id: '2', name: 'use', args: { n: 10n } },
      { id: '3', name: 'use', args: hostile },
    ]);
    expect(results.map((r) => r.error?.code)).toEqual(['invalid_json', 'invalid_json', 'invalid_json']);
    expect(results[0]?.content).toMatch(/not JSON data/);
    expect(seen).toEqual([]);
  });

  it('property: whatever the caller, policies and approver write later, the body runs with the admitted arguments', async () => {
    const json = fc.jsonValue({ maxDepth: 3 });
    await fc.assert(
      fc.asyncProperty(fc.dictionary(fc.string({ maxLength: 5 }), json, { maxKeys: 5 }), fc.boolean(), async (args, ask) => {
        const gate = deferred();
        const { tool, seen } = recorder(z.record(z.string(), z.unknown()), gate.promise);
        const admitted = JSON.stringify(args);
        const scribble = (value: unknown): void => {
          // Overwrite every reachable field; a frozen object refuses each write.
          if (typeof value !== 'object' || value === null) return;
          for (const key of Object.keys(value)) {
            const child = (value as Record<string, unknown>)[key];
            try {
              (value as Record<string, unknown>)[key] = 'scribbled';
            } catch {
              // refused
            }
            scribble(child);
          }
          try {
            (value as Record<string, unknown>)['added'] = 1;
          } catch {
            // refused
          }
        };
        const policy = named('scribbler', async (ctx, next) => {
          const verdict = await next();
          scribble(ctx.args);
          scribble(ctx.input);
          scribble(ctx.call.args);
          setTimeout(() => scribble(ctx.args), 0);
          return ask ? { decision: 'ask' } : verdict;
        });
        const calls = new Subject<ToolCall>();
        const done = lastValueFrom(
          calls.pipe(
            createPipeline({
              tools: [tool],
              pre: [policy],
              approve: async (request) => (scribble(request.args), 'allowed-once'),
            }).operator(),
            toArray(),
          ),
        );
        calls.next({ id: '1', name: 'use', args });
        scribble(args);
        calls.complete();
        await tick();
        gate.resolve();
        const [result] = (await done) as ToolResult[];
        expect(result?.status).toBe('ok');
        expect(seen).toEqual([admitted]);
      }),
      { numRuns: 100 },
    );
  });
});
