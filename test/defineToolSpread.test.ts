// A tool spread into a new definition (`defineTool({ ...tool, timeoutMs })`): it type-checks under
// `exactOptionalPropertyTypes` (tsconfig.json has it; a regression fails `npm run typecheck`), keeps every
// fact of the tool, and shares its limiters.
import { describe, expect, expectTypeOf, it } from 'vitest';
import { z } from 'zod';
import { ConfigError, createLimiter, createPipeline, createRateLimiter, defineTool, type Tool } from '../src/index.js';

const input = z.object({ user: z.string() });

describe('defineTool({ ...tool, … })', () => {
  it('keeps the facts of the tool spread in, and shares its limit and rate limit', async () => {
    const base = defineTool({
      name: 'lookup',
      description: 'Look a user up',
      input,
      mode: 'parallel',
      idempotent: true,
      onError: 'continue',
      retry: { attempts: 2 },
      limit: { max: 2, key: ({ user }) => user },
      rateLimit: createRateLimiter({ max: 5, perMs: 1000 }),
      start: 'after-response',
      chains: { execute: [(_ctx, next) => next()] },
      execute: ({ user }) => ({ user, found: true }),
      render: ({ user }) => `found ${user}`,
    });
    const quicker = defineTool({ ...base, name: 'lookup_quick', timeoutMs: 5_000 });
    expectTypeOf(quicker).toEqualTypeOf<Tool<typeof input, { user: string; found: boolean }>>();
    expect(quicker).toMatchObject({ name: 'lookup_quick', timeoutMs: 5_000, mode: 'parallel', idempotent: true, onError: 'continue', start: 'after-response', retry: base.retry, chains: base.chains, render: base.render });
    expect(quicker.limit?.limiter).toBe(base.limit?.limiter); // one budget for both
    expect(quicker.limit?.key).toBe(base.limit?.key);
    expect(quicker.rateLimit?.limiter).toBe(base.rateLimit?.limiter);
    const [result] = await createPipeline({ tools: [quicker] }).run([{ id: 'c1', name: 'lookup_quick', args: { user: 'ann' } }]);
    expect(result).toMatchObject({ status: 'ok', content: 'found ann' });
  });

  it('a plain tool spread in keeps its undefined facts undefined', () => {
    const bare = defineTool({ name: 'bare', description: 'Bare', input, execute: () => 1 });
    const copy = defineTool({ ...bare, timeoutMs: 10 });
    expect(copy).toMatchObject({ mode: 'exclusive', idempotent: false, timeoutMs: 10, onError: undefined, retry: undefined, limit: undefined, rateLimit: undefined, chains: undefined, render: undefined });
  });

  it('a resolved limit that is not one is refused, naming it', () => {
    const definition = { name: 'x', description: 'x', input, execute: () => 1 };
    expect(() => defineTool({ ...definition, limit: { limiter: createRateLimiter({ max: 1, perMs: 10 }) as never, key: undefined } })).toThrow(ConfigError);
    expect(() => defineTool({ ...definition, limit: { limiter: createLimiter({ max: 1 }), key: 'user' as never } })).toThrow(/`limit.key` must be a function/);
    expect(() => defineTool({ ...definition, rateLimit: { limiter: createLimiter({ max: 1 }) as never, key: undefined } })).toThrow(/`rateLimit.limiter` must be a RateLimiter/);
  });
});
