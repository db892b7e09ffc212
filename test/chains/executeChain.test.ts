import { getEventListeners } from 'node:events';
import { from, Observable } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  askTools,
  ConfigError,
  createPipeline,
  defineTool,
  denyTools,
  type ExecuteContext,
  type ExecuteMiddleware,
  type Streamed,
  type ToolCall,
} from '../../src/index.js';
import { deferred } from '../support/deferred.js';

const input = z.object({ key: z.string() });

/** A tool whose body counts its runs and answers `value of <key>`; `fail` makes it throw `error`. */
function counted(name: string, options: { mode?: 'parallel' | 'exclusive'; error?: unknown; retried?: boolean } = {}) {
  const runs: string[] = [];
  const tool = defineTool({
    name,
    description: name,
    input,
    mode: options.mode ?? 'parallel',
    idempotent: true,
    ...(options.retried === true ? { retry: { attempts: 3, backoff: { initialMs: 1, factor: 1, maxMs: 1, jitter: 0 } } } : {}),
    execute: ({ key }) => {
      runs.push(key);
      if (options.error !== undefined) throw options.error;
      return `value of ${key}`;
    },
  });
  return { tool, runs };
}

const call = (id: string, name: string, key = id): ToolCall => ({ id, name, args: { key } });

/** A cache of one map: answers a key it has without the body, else runs the body and keeps its output. */
function cacheOf(seen: string[] = []) {
  const store = new Map<string, unknown>();
  const cache: ExecuteMiddleware = async function cache(ctx, next) {
    const key = `${ctx.tool.name} ${JSON.stringify(ctx.args)}`;
    seen.push(ctx.call.id);
    if (store.has(key)) return store.get(key);
    const output = await next();
    store.set(key, output);
    return output;
  };
  return { cache, store, seen };
}

describe('the execute chain', () => {
  it('a cache answers a repeated call without the body; the result is as the body would give it', async () => {
    const { tool, runs } = counted('get');
    const { cache } = cacheOf();
    const pipeline = createPipeline({ tools: [tool], execute: [cache] });
    const [first] = await pipeline.run([call('a', 'get')]);
    const [second] = await pipeline.run([call('b', 'get', 'a')]);
    expect(runs).toEqual(['a']);
    expect([first?.status, first?.content, first?.value]).toEqual(['ok', 'value of a', 'value of a']);
    expect([second?.status, second?.content, second?.value]).toEqual(['ok', 'value of a', 'value of a']);
  });

  it('the guard decides first: a call denied by a policy, or an ask the approver rejects, never reaches the chain', async () => {
    const { tool, runs } = counted('get');
    const { tool: write } = counted('write');
    const { tool: shell } = counted('shell');
    const { cache, seen } = cacheOf();
    const pipeline = createPipeline({
      tools: [tool, write, shell],
      execute: [cache],
      pre: [denyTools(['shell']), askTools(['write'])],
      approve: async () => 'rejected',
    });
    const results = await pipeline.run([call('a', 'get'), call('w', 'write'), call('s', 'shell')]);
    expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
      ['a', 'ok', undefined],
      ['w', 'denied', 'approval_rejected'],
      ['s', 'denied', 'denied'],
    ]);
    expect(seen).toEqual(['a']);
    expect(runs).toEqual(['a']);
  });

  it('runs after the start checks: a call a start check denied never reaches it', async () => {
    const { tool } = counted('get');
    const { cache, seen } = cacheOf();
    const pipeline = createPipeline({
      tools: [tool],
      execute: [cache],
      pre: [
        function gone(ctx) {
          ctx.beforeStart(() => ({ decision: 'deny', reason: 'gone' }));
          return undefined;
        },
      ],
    });
    const [result] = await pipeline.run([call('a', 'get')]);
    expect([result?.status, result?.error?.code, result?.error?.code === 'denied' && result.error.stage]).toEqual(['denied', 'denied', 'start']);
    expect(seen).toEqual([]);
  });

  it('the tool\'s own chain runs inside the pipeline\'s, around the body', async () => {
    const log: string[] = [];
    const around = (name: string): ExecuteMiddleware => async (_ctx, next) => {
      log.push(`${name} before`);
      const output = await next();
      log.push(`${name} after`);
      return output;
    };
    const tool = defineTool({
      name: 'get',
      description: 'get',
      input,
      chains: { execute: [around('tool 1'), around('tool 2')] },
      execute: ({ key }) => (log.push('body'), key),
    });
    const pipeline = createPipeline({ tools: [tool], execute: [around('pipeline 1'), around('pipeline 2')] });
    const [result] = await pipeline.run([call('a', 'get')]);
    expect(result?.status).toBe('ok');
    expect(log).toEqual(['pipeline 1 before', 'pipeline 2 before', 'tool 1 before', 'tool 2 before', 'body', 'tool 2 after', 'tool 1 after', 'pipeline 2 after', 'pipeline 1 after']);
  });

  it('sees the admitted, frozen arguments, the call, the attempt and the idempotency key the body sees', async () => {
    const seen: ExecuteContext[] = [];
    let bodyKey = '';
    const tool = defineTool({
      name: 'get',
      description: 'get',
      input: z.object({ key: z.string(), n: z.number().default(7) }),
      mode: 'parallel',
      timeoutMs: 60_000,
      execute: (_args, ctx) => ((bodyKey = ctx.idempotencyKey), 'ok'),
    });
    const pipeline = createPipeline({ tools: [tool], execute: [(ctx, next) => (seen.push(ctx), next())] });
    await pipeline.run([{ id: 'a', name: 'get', args: '{"key":"k"}', turn: 't1' }]);
    const [ctx] = seen;
    expect(ctx!.args).toEqual({ key: 'k', n: 7 });
    expect(Object.isFrozen(ctx!.args)).toBe(true);
    expect(ctx!.call).toEqual({ id: 'a', name: 'get', args: '{"key":"k"}' });
    expect(Object.isFrozen(ctx!.call)).toBe(true);
    expect([ctx!.index, ctx!.turn, ctx!.attempt, ctx!.tool]).toEqual([0, 't1', 1, tool]);
    expect(ctx!.idempotencyKey).toBe(bodyKey);
    expect(ctx!.deadline).toBeGreaterThan(Date.now() + 50_000); // the pipeline's clock: asyncScheduler's Date.now
  });

  describe('a failure of its own fails the call closed', () => {
    it('before next(): denied, policy_error at stage execute; the body never ran, nothing is cancelled (an exclusive tool), no retry', async () => {
      const { tool: retrying, runs } = counted('write', { mode: 'exclusive', retried: true });
      const { tool: read, runs: reads } = counted('read');
      let calls = 0;
      const quota: ExecuteMiddleware = function quota(ctx, next) {
        calls++;
        if (ctx.tool.name === 'write') throw new Error('quota exceeded');
        return next();
      };
      const pipeline = createPipeline({ tools: [retrying, read], execute: [quota] });
      const results = await pipeline.run([call('w', 'write'), call('r', 'read')]);
      expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
        ['w', 'denied', 'policy_error'],
        ['r', 'ok', undefined],
      ]);
      const [denied] = results;
      expect(denied?.error).toMatchObject({ stage: 'execute', policy: 'quota', message: expect.stringMatching(/^Denied before the body ran: execute middleware "quota" threw: quota exceeded/) });
      expect(denied?.error?.code === 'policy_error' && denied.error.cause).toBeInstanceOf(Error);
      expect(denied?.trace).toContainEqual({ stage: 'execute', event: 'failed', policy: 'quota', message: 'threw: quota exceeded' });
      expect(runs).toEqual([]);
      expect(reads).toEqual(['r']);
      expect(calls).toBe(2); // once for each call: the denied one was not retried
    });

    it('after the body: error, policy_error, the output withheld; nothing is cancelled, no retry', async () => {
      const { tool: retrying, runs } = counted('write', { mode: 'exclusive', retried: true });
      const { tool: read, runs: reads } = counted('read');
      const audit: ExecuteMiddleware = async function audit(ctx, next) {
        const output = await next();
        if (ctx.tool.name === 'write') throw new Error('audit log unavailable');
        return output;
      };
      const results = await createPipeline({ tools: [retrying, read], execute: [audit] }).run([call('w', 'write'), call('r', 'read')]);
      expect(results.map((r) => [r.id, r.status, r.error?.code, r.value])).toEqual([
        ['w', 'error', 'policy_error', undefined],
        ['r', 'ok', undefined, 'value of r'],
      ]);
      expect(results[0]?.content).toMatch(/^The output of "write" was withheld: execute middleware "audit" threw: audit log unavailable after the body ran/);
      expect(results[0]?.content).not.toContain('value of w');
      expect(results[0]?.error).toMatchObject({ stage: 'execute', policy: 'audit' });
      expect(runs).toEqual(['w']); // once: not retried
      expect(reads).toEqual(['r']);
    });

    it('a middleware further out cannot undo an inner one\'s failure', async () => {
      const { tool, runs } = counted('get');
      const fallback: ExecuteMiddleware = async function fallback(_ctx, next) {
        try {
          return await next();
        } catch {
          return 'fallback';
        }
      };
      const check: ExecuteMiddleware = function check() {
        throw new Error('not allowed today');
      };
      const [result] = await createPipeline({ tools: [tool], execute: [fallback, check] }).run([call('a', 'get')]);
      expect([result?.status, result?.error?.code, result?.error?.code === 'policy_error' && result.error.policy]).toEqual(['denied', 'policy_error', 'check']);
      expect(runs).toEqual([]);
    });

    it('the body\'s own error re-thrown unchanged stays the body\'s failure: tool_error, and an exclusive one cancels the rest', async () => {
      const boom = new Error('disk full');
      const { tool } = counted('write', { mode: 'exclusive', error: boom });
      const { tool: read, runs: reads } = counted('read');
      const passOn: ExecuteMiddleware = async (_ctx, next) => {
        try {
          return await next();
        } catch (error) {
          expect(error).toBe(boom);
          throw error;
        }
      };
      const results = await createPipeline({ tools: [tool, read], execute: [passOn] }).run([call('w', 'write'), call('r', 'read')]);
      expect(results.map((r) => [r.id, r.status, r.error?.code])).toEqual([
        ['w', 'error', 'tool_error'],
        ['r', 'cancelled', 'cancelled'],
      ]);
      expect(results[0]?.error?.code === 'tool_error' && results[0].error.cause).toBe(boom);
      expect(reads).toEqual([]);
    });

    it('a middleware may recover from the body\'s error (a fallback): the call is ok', async () => {
      const { tool, runs } = counted('get', { error: new Error('upstream down') });
      const stale: ExecuteMiddleware = async (_ctx, next) => next().catch(() => 'stale value');
      const [result] = await createPipeline({ tools: [tool], execute: [stale] }).run([call('a', 'get')]);
      expect([result?.status, result?.value]).toEqual(['ok', 'stale value']);
      expect(runs).toEqual(['a']);
    });
  });

  describe('next()', () => {
    it('twice in one attempt is refused: the body runs once and the call fails closed', async () => {
      const { tool, runs } = counted('get');
      let second: unknown;
      const twice: ExecuteMiddleware = async function twice(_ctx, next) {
        const output = await next();
        second = await next().catch((error: unknown) => error);
        return output;
      };
      const [result] = await createPipeline({ tools: [tool], execute: [twice] }).run([call('a', 'get')]);
      expect(runs).toEqual(['a']);
      expect(second).toBeInstanceOf(Error);
      expect((second as Error).message).toMatch(/execute middleware "twice" called next\(\) twice/);
      expect([result?.status, result?.error?.code, result?.value]).toEqual(['error', 'policy_error', undefined]);
    });

    it('twice before the first settled starts the body once, and the call is denied if no body ran', async () => {
      const { tool, runs } = counted('get');
      const gate = deferred<void>();
      const slow: ExecuteMiddleware = async (_ctx, next) => (await gate.promise, next());
      const eager: ExecuteMiddleware = async function eager(_ctx, next) {
        const first = next();
        const second = next();
        gate.resolve();
        return Promise.all([first, second]);
      };
      const [result] = await createPipeline({ tools: [tool], execute: [eager, slow] }).run([call('a', 'get')]);
      expect(runs).toEqual([]); // the chain had failed before the inner middleware reached the body
      expect([result?.status, result?.error?.code]).toEqual(['denied', 'policy_error']);
    });

    it('after its own output settled is refused: a late next() never runs the body', async () => {
      const { tool, runs } = counted('get');
      const late = deferred<unknown>();
      const cached: ExecuteMiddleware = (_ctx, next) => {
        setTimeout(() => late.resolve(next().catch((error: unknown) => error)), 0);
        return 'from the cache';
      };
      const [result] = await createPipeline({ tools: [tool], execute: [cached] }).run([call('a', 'get')]);
      expect([result?.status, result?.value]).toEqual(['ok', 'from the cache']);
      expect(await late.promise).toBeInstanceOf(Error);
      expect(runs).toEqual([]);
    });

    it('with a signal tightens the body\'s: it aborts when the middleware\'s does', async () => {
      const started = deferred<void>();
      let reason: unknown;
      const tool = defineTool({
        name: 'slow',
        description: 'slow',
        input,
        mode: 'parallel',
        execute: (_args, ctx) =>
          new Promise((_resolve, reject) => {
            started.resolve();
            ctx.signal.addEventListener('abort', () => reject((reason = ctx.signal.reason)));
          }),
      });
      const controller = new AbortController();
      const cancellable: ExecuteMiddleware = (_ctx, next) => next({ signal: controller.signal });
      const running = createPipeline({ tools: [tool], execute: [cancellable] }).run([call('a', 'slow')]);
      await started.promise;
      const why = new Error('the user pressed stop');
      controller.abort(why);
      const [result] = await running;
      expect(reason).toBe(why);
      expect([result?.status, result?.error?.code, result?.error?.code === 'tool_error' && result.error.cause]).toEqual(['error', 'tool_error', why]);
    });

    it('leaves no listener on a long-lived signal it was given, whether the attempt ended or was stopped', async () => {
      const { tool } = counted('get');
      const hang = defineTool({ name: 'hang', description: 'hangs', input, mode: 'parallel', timeoutMs: 20, execute: () => 'never asked' });
      const session = new AbortController();
      // For `hang`, a middleware that never settles, its signal aborted or not: its attempt is abandoned after the grace.
      const tightening: ExecuteMiddleware = (ctx, next) => (ctx.tool.name === 'hang' ? new Promise(() => void next({ signal: session.signal })) : next({ signal: session.signal }));
      const pipeline = createPipeline({ tools: [tool, hang], execute: [tightening], abortGraceMs: 10 });
      const results = await pipeline.run([...Array.from({ length: 20 }, (_, i) => call(`c${i}`, 'get')), call('h', 'hang')]);
      expect(results.map((r) => r.status)).toEqual([...Array.from({ length: 20 }, () => 'ok'), 'error']);
      expect(getEventListeners(session.signal, 'abort')).toHaveLength(0);
    });

    it('rejects a tightening it cannot use; the middleware that lets it through has failed', async () => {
      const { tool, runs } = counted('get');
      const bad: ExecuteMiddleware = function bad(_ctx, next) {
        return next({ timeoutMs: -5 });
      };
      const [result] = await createPipeline({ tools: [tool], execute: [bad] }).run([call('a', 'get')]);
      expect([result?.status, result?.error?.code]).toEqual(['denied', 'policy_error']);
      expect(result?.content).toMatch(/next\(\{ timeoutMs \}\) takes 1 to/);
      expect(runs).toEqual([]);
    });
  });

  describe('outputs', () => {
    it('a streamed body stays streamed through a pass-through middleware; next() gives its items collected', async () => {
      let given: unknown;
      const tool = defineTool({ name: 'lines', description: 'lines', input, mode: 'parallel', execute: () => from(['a', 'b']) });
      const look: ExecuteMiddleware = async (_ctx, next) => (given = await next());
      const [result] = await createPipeline({ tools: [tool], execute: [look] }).run([call('x', 'lines')]);
      expect((given as Streamed).kind).toBe('streamed');
      expect((given as Streamed).items).toEqual(['a', 'b']);
      expect([result?.status, result?.value, result?.status === 'ok' && result.streamed]).toEqual(['ok', ['a', 'b'], true]);
    });

    it('a middleware may return a stream of its own; a stream failing midway keeps its items as partial output', async () => {
      const tool = defineTool({ name: 'lines', description: 'lines', input, mode: 'parallel', execute: () => from(['a', 'b', 'c']) });
      const firstTwo: ExecuteMiddleware = async (_ctx, next) => from(((await next()) as Streamed).items.slice(0, 2));
      const [kept] = await createPipeline({ tools: [tool], execute: [firstTwo] }).run([call('x', 'lines')]);
      expect([kept?.value, kept?.status === 'ok' && kept.streamed]).toEqual([['a', 'b'], true]);

      const breaking = defineTool({
        name: 'breaking',
        description: 'breaks',
        input,
        mode: 'parallel',
        execute: () => new Observable<string>((s) => (s.next('one'), s.error(new Error('connection reset')))),
      });
      const [broken] = await createPipeline({ tools: [breaking], execute: [(_ctx, next) => next()] }).run([call('y', 'breaking')]);
      expect([broken?.status, broken?.error?.code, broken?.status !== 'ok' && broken?.partial]).toEqual(['error', 'tool_error', ['one']]);
    });

    it('answers at once when every middleware does: a synchronous cache hit needs no tick', async () => {
      const { tool, runs } = counted('get');
      const pipeline = createPipeline({ tools: [tool], execute: [() => 'cached'] });
      const results: unknown[] = [];
      pipeline.operator()(from([call('a', 'get')])).subscribe((r) => results.push(r.value));
      expect(results).toEqual(['cached']);
      expect(runs).toEqual([]);
    });
  });

  describe('options', () => {
    it('the pipeline\'s execute and result must be arrays of functions', () => {
      const { tool } = counted('get');
      const made = (options: object) => () => createPipeline({ tools: [tool], ...options });
      expect(made({ execute: 'cache' })).toThrow(ConfigError);
      expect(made({ execute: [() => undefined, 42] })).toThrow(/`execute\[1\]` must be an execute middleware/);
      expect(made({ result: {} })).toThrow(/`result` must be an array of result middleware/);
      expect(made({ result: [null] })).toThrow(/`result\[0\]` must be a result middleware/);
    });

    it('a tool\'s chains must be an object of arrays of functions; its lists are frozen copies', () => {
      const definition = { name: 'get', description: 'get', input, execute: () => 'x' };
      expect(() => defineTool({ ...definition, chains: 'x' as never })).toThrow(/defineTool: `chains` must be an object/);
      expect(() => defineTool({ ...definition, chains: { execute: (() => undefined) as never } })).toThrow(/`chains.execute` must be an array/);
      expect(() => defineTool({ ...definition, chains: { result: [1 as never] } })).toThrow(/`chains.result\[0\]` must be a result middleware/);
      const list: ExecuteMiddleware[] = [(_ctx, next) => next()];
      const tool = defineTool({ ...definition, chains: { execute: list } });
      list.push(() => 'added later');
      expect(tool.chains?.execute).toHaveLength(1);
      expect(Object.isFrozen(tool.chains?.execute)).toBe(true);
      expect(defineTool({ ...definition, chains: { execute: [] } }).chains).toBeUndefined();
    });
  });
});
