import { of } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type PostPolicy, type PrePolicy, type ToolResult } from '../../src/index.js';
import { runWaterfall, type WaterfallFold } from '../../src/engine/chains/waterfall.js';
import { Later } from '../../src/util/later.js';

/** A fold of string decisions: the innermost-first list of who decided what. */
function listFold(): WaterfallFold<string> & { folded: string[] } {
  const folded: string[] = [];
  return {
    folded,
    read: (value) => (typeof value === 'string' ? value : undefined),
    end: () => 'default',
    fold: (policy, decision) => (folded.push(`${policy}:${decision}`), decision),
    current: () => folded.at(-1) ?? 'none',
  };
}

const run = (policies: ((ctx: null, next: () => Promise<string>) => unknown)[], fold = listFold()) =>
  runWaterfall(policies as never, policies.map((_, i) => `p${i}`), policies.map(() => null), fold, 'pre', new Map());

describe('runWaterfall', () => {
  it('answers at once, as a value, while every policy answers at once', () => {
    const outcome = run([() => undefined, () => undefined, () => 'deny']);
    expect(outcome).not.toBeInstanceOf(Promise);
    expect(outcome).toEqual({ decision: 'deny', failure: undefined });
  });

  it('a sync throw or a non-decision fails the chain at once, as a value', () => {
    const thrown = run([() => undefined, () => { throw new Error('boom'); }]);
    expect(thrown).not.toBeInstanceOf(Promise);
    expect((thrown as { failure: { policy: string } }).failure.policy).toBe('p1');
    const odd = run([() => 42]);
    expect((odd as { failure: { message: string } }).failure.message).toMatch(/not a decision/);
  });

  it('becomes a Later from the first policy that returns a promise, with the same folding', async () => {
    const fold = listFold();
    const outcome = run([async (_ctx, next) => { await next(); return undefined; }, () => undefined, async () => 'ask'], fold);
    expect(outcome).toBeInstanceOf(Later);
    expect(await outcome).toEqual({ decision: 'ask', failure: undefined });
    expect(fold.folded).toEqual(['p2:ask']);
    const rejected = await run([() => undefined, () => Promise.reject(new Error('late'))]);
    expect(rejected.failure?.message).toMatch(/threw: .*late/);
  });

  it('a then getter that throws fails the chain (read once, inside the guard)', () => {
    const hostile = { get then() { throw new Error('trap'); } };
    const outcome = run([() => hostile]);
    expect((outcome as { failure: { message: string } }).failure.message).toMatch(/threw: .*trap/);
  });
});

describe('sync policies and a sync body', () => {
  it('answer a call within the source emission: no microtask per policy', () => {
    const look: PrePolicy = Object.defineProperty((() => undefined) as PrePolicy, 'name', { value: 'look' });
    const tag: PostPolicy = Object.defineProperty((() => ({ kind: 'accept', meta: { seen: true } })) as PostPolicy, 'name', { value: 'tag' });
    const add = defineTool({ name: 'add', description: 'add', input: z.object({ a: z.number() }), mode: 'parallel', execute: ({ a }) => a + 1 });
    const results: ToolResult[] = [];
    of({ id: '1', name: 'add', args: { a: 1 } })
      .pipe(createPipeline({ tools: [add], pre: [look, look], post: [tag] }).operator())
      .subscribe((result) => results.push(result));
    // Synchronously, before subscribe returned: every stage answered at once.
    expect(results.map((r) => [r.status, r.content, r.meta])).toEqual([['ok', '2', { seen: true }]]);
  });
});
