import { setTimeout as sleep } from 'node:timers/promises';
import { asyncScheduler, type SchedulerAction, type SchedulerLike, type Subscription } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  askTools,
  ConfigError,
  createPipeline,
  defineTool,
  denyTools,
  ProgramError,
  RestrictionSet,
  runCodeTool,
  type ApprovalRequest,
  type PostPolicy,
  type ProgramOutput,
  type ToolResult,
} from '../../src/index.js';
import { pathSandbox } from '../../src/node/index.js';
import { createQuickJSRuntime } from '../../src/ptc/quickjs/index.js';
import { resolvePipelineOptions } from '../../src/pipeline/options.js';
import { pipelineHandle } from '../../src/engine/pipelineHandle.js';
import { SubCalls } from '../../src/ptc/subCalls.js';
import { stretched } from '../support/timing.js';
import { UNREACHED_LIMIT_MS } from './quickjs/helpers.js';

const runtime = createQuickJSRuntime({ timeoutMs: UNREACHED_LIMIT_MS, poolSize: 2 });
afterAll(() => runtime.close());

/** Records which bodies ran, with what, and how many ran at once. */
function recorder() {
  const ran: { name: string; args: unknown }[] = [];
  let running = 0;
  let peak = 0;
  const ended: string[] = [];
  /** `wait`: milliseconds the body sleeps, or a promise it waits for. */
  const tool = (name: string, mode: 'parallel' | 'exclusive' = 'parallel', wait: number | Promise<unknown> = 0) =>
    defineTool({
      name,
      description: `The ${name} tool`,
      input: z.object({ n: z.number().optional(), path: z.string().optional() }),
      mode,
      execute: async (args, { signal }) => {
        ran.push({ name, args });
        running++;
        peak = Math.max(peak, running);
        try {
          if (typeof wait !== 'number') await wait;
          else if (wait > 0) await sleep(wait, undefined, { signal });
          return { tool: name, n: args.n ?? null };
        } finally {
          running--;
          ended.push(name);
        }
      },
    });
  /** Resolves once `n` bodies of `name` ended — or after a ceiling only a hang passes. */
  const endedOf = async (name: string, n: number) => {
    const deadline = performance.now() + stretched(10_000);
    while (ended.filter((e) => e === name).length < n && performance.now() < deadline) await sleep(5);
  };
  return { ran, tool, peak: () => peak, endedOf };
}

/** A tool that runs until its signal aborts; `started` resolves when its body began, `aborted()` tells whether it saw the abort. */
function hangingTool() {
  let aborted = false;
  let markStarted!: () => void;
  const started = new Promise<void>((resolve) => (markStarted = resolve));
  const tool = defineTool({
    name: 'hang',
    description: 'never ends by itself',
    input: z.object({}),
    mode: 'parallel',
    execute: (_args, { signal }) =>
      new Promise((_resolve, reject) => {
        markStarted();
        signal.addEventListener('abort', () => {
          aborted = true;
          reject(signal.reason);
        });
      }),
  });
  return { tool, started, aborted: () => aborted };
}

const call = (program: string, id = 'c1') => ({ id, name: 'run_code', args: { program } });

function output(result: ToolResult | undefined): ProgramOutput {
  expect(result?.status, result?.content).toBe('ok');
  return result!.value as ProgramOutput;
}

describe('runCodeTool: every sub-call passes the same pipeline', () => {
  it('a sub-call denied by a pre-execute policy never runs and rejects inside the program with its code', async () => {
    const { ran, tool } = recorder();
    const pipeline = createPipeline({ tools: [tool('read'), tool('rm'), runCodeTool({ runtime })], pre: [denyTools(['rm'])] });
    const [result] = await pipeline.run([
      call(`
        const a = await tools.read({ n: 1 });
        try { await tools.rm({ path: '/' }); return 'removed'; }
        catch (e) { return { a, name: e.name, code: e.code, isError: e instanceof ToolCallError } }`),
    ]);
    const { value, subCalls } = output(result);
    expect(value).toEqual({ a: { tool: 'read', n: 1 }, name: 'ToolCallError', code: 'denied', isError: true });
    expect(ran.map((r) => r.name)).toEqual(['read']);
    expect(subCalls.map(({ id, name, status, decision }) => ({ id, name, status, decision }))).toEqual([
      { id: 'c1#1', name: 'read', status: 'ok', decision: 'allow' },
      { id: 'c1#2', name: 'rm', status: 'denied', decision: 'deny' },
    ]);
    expect(subCalls[1]!.error?.code).toBe('denied');
  });

  it('an ask reaches the same approver as direct calls, once per call', async () => {
    const { ran, tool } = recorder();
    const asked: ApprovalRequest[] = [];
    const pipeline = createPipeline({
      tools: [tool('write', 'exclusive'), runCodeTool({ runtime })],
      pre: [askTools(['write'])],
      approve: async (request) => {
        asked.push(request);
        return (request.args as { n: number }).n === 1 ? 'allowed-once' : 'rejected';
      },
    });
    const [direct, program] = await pipeline.run([
      { id: 'd1', name: 'write', args: { n: 1 } },
      call(`
        const first = await tools.write({ n: 1 });
        const second = await tools.write({ n: 2 }).catch((e) => e.code);
        return [first.n, second];`, 'p1'),
    ]);
    expect(direct?.status).toBe('ok');
    expect(output(program).value).toEqual([1, 'approval_rejected']);
    expect(asked.map((request) => [request.call.id, request.args])).toEqual([
      ['d1', { n: 1 }],
      ['p1#1', { n: 1 }],
      ['p1#2', { n: 2 }],
    ]);
    expect(ran.map((r) => r.args)).toEqual([{ n: 1 }, { n: 1 }]);
  });

  it('a restricted tool is not in `tools`, nor in the description, and cannot be reached', async () => {
    const { ran, tool } = recorder();
    const restrictions = new RestrictionSet([{ scope: 'host', deny: ['secret'] }]);
    const pipeline = createPipeline({ tools: [tool('read'), tool('secret'), runCodeTool({ runtime })], restrictions });
    const runCode = pipeline.available.find((t) => t.name === 'run_code')!;
    expect(runCode.description).toContain('read(args:');
    expect(runCode.description).not.toContain('secret');
    const [result] = await pipeline.run([
      call(`return [typeof tools.secret, Object.keys(tools), typeof tools.run_code, await tools.secret?.({}).catch(() => 'rejected')]`),
    ]);
    expect(output(result).value).toEqual(['undefined', ['read'], 'undefined', null]);
    expect(ran).toEqual([]);
  });

  it('argument rewrites and post-execute policies apply to sub-calls', async () => {
    const { ran, tool } = recorder();
    const redact: PostPolicy = async (ctx, next) => {
      if (ctx.tool?.name === 'read' && ctx.status === 'ok') return { kind: 'accept', value: { redacted: true }, content: '[redacted]' };
      if (ctx.tool?.name === 'leak') return { kind: 'block', feedback: 'withheld' };
      return next();
    };
    const pipeline = createPipeline({
      tools: [tool('read'), tool('leak'), runCodeTool({ runtime })],
      pre: [pathSandbox({ root: '/srv/work' })],
      post: [redact],
    });
    const [result] = await pipeline.run([
      call(`
        const value = await tools.read({ path: 'notes.txt' });
        const blocked = await tools.leak({}).catch((e) => [e.code, e.message]);
        const escaped = await tools.read({ path: '../../etc/passwd' }).catch((e) => e.code);
        return { value, blocked, escaped };`),
    ]);
    // The policy replaced what the model sees: the program gets that text, not the value behind it, and a
    // block's feedback exactly as the model would read it.
    expect(output(result).value).toEqual({ value: '[redacted]', blocked: ['blocked', 'withheld'], escaped: 'denied' });
    expect(ran).toEqual([
      { name: 'read', args: { path: '/srv/work/notes.txt' } },
      { name: 'leak', args: {} },
    ]);
  });

  it('a program learns no more than the model would: render, content-only policies and budgets apply', async () => {
    const user = defineTool({
      name: 'user',
      description: 'A user',
      input: z.object({}),
      mode: 'parallel',
      execute: () => ({ name: 'Ada', sessionToken: 'tok_live_42' }),
      render: (u) => `User: ${u.name}`,
    });
    const env = defineTool({ name: 'env', description: 'env', input: z.object({}), mode: 'parallel', execute: () => 'OPENAI_KEY=sk-secret' });
    const files = defineTool({
      name: 'files',
      description: 'files',
      input: z.object({}),
      mode: 'parallel',
      execute: async function* () {
        for (let i = 0; i < 5; i++) yield `f${i}`;
      },
    });
    const plain = defineTool({ name: 'plain', description: 'plain', input: z.object({}), mode: 'parallel', execute: () => ({ rows: [1, 2] }) });
    const redactContent: PostPolicy = async (ctx, next) =>
      ctx.tool?.name === 'env' ? { kind: 'accept', content: ctx.content.replace(/=.*/, '=[redacted]') } : next();
    const pipeline = createPipeline({
      tools: [user, env, files, plain, runCodeTool({ runtime })],
      post: [redactContent],
      retention: { tools: { files: { maxItems: 2 } } },
    });
    const [result] = await pipeline.run([
      call('return [await tools.user({}), await tools.env({}), await tools.files({}), await tools.plain({})]'),
    ]);
    expect(output(result).value).toEqual(['User: Ada', 'OPENAI_KEY=[redacted]', 'f0f1\n[... 3 more items omitted]', { rows: [1, 2] }]);
    expect(output(result).subCalls[2]!.omitted).toEqual({ items: 3, characters: 0, lines: 0 });
  });

  it('a failed sub-call tells the program what it tells the model: the redacted, cut text (issue 10, item 2)', async () => {
    // The report: a post-execute policy redacted a key from a tool's error text and a budget cut it to
    // 230 characters; the program caught the raw 5,117-character message with the key, sent it to
    // another tool and returned it spaced out.
    const key = 'sk-live-4f9a8b7c6d5e4f3a2b1c';
    const message = `deploy failed: token ${key} rejected\n${'trace line\n'.repeat(463)}`.slice(0, 5_117);
    const deploy = defineTool({ name: 'deploy', description: 'd', input: z.object({}), mode: 'parallel', execute: () => { throw new Error(message); } });
    const noted: unknown[] = [];
    const note = defineTool({ name: 'note', description: 'n', input: z.object({ text: z.string() }), mode: 'parallel', execute: ({ text }) => void noted.push(text) });
    const redact: PostPolicy = async (ctx) => ({ kind: 'accept', content: ctx.content.replace(/sk-[\w-]+/g, '[redacted]') });
    const pipeline = createPipeline({ tools: [deploy, note, runCodeTool({ runtime })], post: [redact], retention: { tools: { deploy: { maxChars: 230 } } } });
    const [direct] = await pipeline.run([{ id: 'd', name: 'deploy', args: {} }]);
    expect(direct?.content).toContain('[redacted]');
    expect(direct?.content).not.toContain(key);
    const [result] = await pipeline.run([
      call(`
        try { await tools.deploy({}); return 'deployed'; }
        catch (e) { await tools.note({ text: e.message }); return { code: e.code, tool: e.tool, spaced: e.message.split('').join(' ') }; }`),
    ]);
    const seen = output(result).value as { code: string; tool: string; spaced: string };
    expect(seen).toEqual({ code: 'tool_error', tool: 'tools.deploy', spaced: direct!.content.split('').join(' ') });
    expect(noted).toEqual([direct!.content]);
    expect(JSON.stringify(result?.content)).not.toContain(key);
  });

  it('a streamed item without a JSON form: the program gets the text the model sees, not a serialisation error', async () => {
    const odd = defineTool({
      name: 'odd',
      description: 'o',
      input: z.object({}),
      mode: 'parallel',
      execute: async function* () {
        yield { n: 1 };
        yield 2n;
      },
    });
    const pipeline = createPipeline({ tools: [odd, runCodeTool({ runtime })] });
    const [direct] = await pipeline.run([{ id: 'd', name: 'odd', args: {} }]);
    expect(direct?.content).toBe('{"n":1}\n[unrenderable bigint]');
    const [result] = await pipeline.run([call('return await tools.odd({}).catch((e) => [e.code, e.message])')]);
    expect(output(result).value).toBe(direct!.content);
  });

  it('invalid arguments and unknown tools come back as typed errors the program can handle', async () => {
    const { tool } = recorder();
    const pipeline = createPipeline({ tools: [tool('read'), runCodeTool({ runtime })] });
    const [result] = await pipeline.run([
      call(`
        const bad = await tools.read({ n: 'seven' }).catch((e) => e.code);
        const notJson = await tools.read({ f: () => 1, n: 1n }).catch((e) => e.code);
        return { bad, notJson };`),
    ]);
    expect(output(result).value).toEqual({ bad: 'invalid_args', notJson: 'invalid_arguments' });
  });
});

describe('runCodeTool: scheduling', () => {
  it('runs sub-calls by their own modes within maxParallelSubCalls, and answers each as it finishes', async () => {
    const { tool, peak, endedOf } = recorder();
    // The slow call runs until the eight reads ended, however long that takes on a busy machine.
    const pipeline = createPipeline({ tools: [tool('read', 'parallel', 30), tool('slow', 'parallel', endedOf('read', 8)), runCodeTool({ runtime, maxParallelSubCalls: 3 })] });
    const [result] = await pipeline.run([
      call(`
        const order = [];
        const slow = tools.slow({}).then(() => order.push('slow'));
        const reads = Array.from({ length: 8 }, (_, n) => tools.read({ n }).then(() => order.push('read' + n)));
        await Promise.all([slow, ...reads]);
        return order;`),
    ]);
    const order = output(result).value as string[];
    expect(peak()).toBe(3);
    expect(order.at(-1)).toBe('slow'); // later, quicker calls were not held behind it
    expect(order).toHaveLength(9);
  });

  it('an exclusive sub-call is a barrier among the program\'s calls', async () => {
    const events: string[] = [];
    const make = (name: string, mode: 'parallel' | 'exclusive') =>
      defineTool({
        name,
        description: name,
        input: z.object({ n: z.number() }),
        mode,
        execute: async ({ n }) => {
          events.push(`start ${name}${n}`);
          await sleep(20);
          events.push(`end ${name}${n}`);
          return n;
        },
      });
    const pipeline = createPipeline({ tools: [make('read', 'parallel'), make('write', 'exclusive'), runCodeTool({ runtime })] });
    const [result] = await pipeline.run([
      call(`return Promise.all([tools.read({ n: 1 }), tools.read({ n: 2 }), tools.write({ n: 3 }), tools.read({ n: 4 })])`),
    ]);
    expect(output(result).value).toEqual([1, 2, 3, 4]);
    const at = (event: string) => events.indexOf(event);
    expect(at('start write3')).toBeGreaterThan(Math.max(at('end read1'), at('end read2')));
    expect(at('start read4')).toBeGreaterThan(at('end write3'));
  });
});

describe('runCodeTool: results, failures and cancellation', () => {
  it('the model sees the value and the logs; the result keeps the sub-call log; observers see every sub-call', async () => {
    const { tool } = recorder();
    const observed: string[] = [];
    const pipeline = createPipeline({ tools: [tool('read'), runCodeTool({ runtime })], observers: [(r) => observed.push(`${r.id}:${r.status}`)] });
    const [result] = await pipeline.run([call(`const r = await tools.read({ n: 2 }); console.log('got', r.n); return { doubled: r.n * 2 };`)]);
    expect(result?.content).toBe('{"doubled":4}\n\n[console output]\ngot 2');
    expect(output(result)).toMatchObject({ value: { doubled: 4 }, logs: ['got 2'] });
    expect(output(result).subCalls[0]).toMatchObject({ id: 'c1#1', name: 'read', args: { n: 2 }, status: 'ok', decision: 'allow' });
    expect(output(result).subCalls[0]!.durationMs).toBeGreaterThanOrEqual(0);
    expect(observed).toEqual(['c1#1:ok', 'c1:ok']);
  });

  it('a failed program is a tool_error whose ProgramError keeps the failure, logs and sub-calls', async () => {
    const { tool } = recorder();
    const pipeline = createPipeline({ tools: [tool('read'), runCodeTool({ runtime })] });
    const [result] = await pipeline.run([call(`await tools.read({ n: 1 });\nconsole.log('about to fail');\nconst x: any = undefined;\nreturn x.y;`)]);
    expect(result?.status).toBe('error');
    expect(result?.error?.code).toBe('tool_error');
    const cause = (result?.error as { cause?: unknown }).cause;
    expect(cause).toBeInstanceOf(ProgramError);
    const error = cause as ProgramError;
    expect(error.failure.kind).toBe('exception');
    expect(error.failure.message).toMatch(/line 4, column \d+/);
    expect(error.logs).toEqual(['about to fail']);
    expect(error.subCalls.map((sub) => sub.status)).toEqual(['ok']);
    expect(result?.content).toContain('made 1 tool call(s): read (ok)');
    expect(result?.content).toContain('about to fail');
  });

  it('cancelling the outer call aborts the program and its running sub-calls', async () => {
    const hang = hangingTool();
    const pipeline = createPipeline({ tools: [hang.tool, runCodeTool({ runtime })] });
    const controller = new AbortController();
    const results = pipeline.run([call(`await tools.hang({}); return 'finished'`)], { signal: controller.signal });
    await hang.started;
    const t0 = performance.now();
    controller.abort();
    const [result] = await results;
    expect(result?.status).toBe('cancelled');
    expect(hang.aborted()).toBe(true);
    expect(performance.now() - t0).toBeLessThan(stretched(2_000));
    // The runtime is healthy afterwards.
    const [next] = await createPipeline({ tools: [runCodeTool({ runtime })] }).run([call('return 1 + 1')]);
    expect(output(next).value).toBe(2);
  });

  it('a CPU-bound program is stopped by the outer call\'s timeout', async () => {
    const pipeline = createPipeline({ tools: [runCodeTool({ runtime })], defaultTimeoutMs: 300 });
    const t0 = performance.now();
    const [result] = await pipeline.run([call('while (true) {}')]);
    expect(result?.error?.code).toBe('timeout');
    expect(performance.now() - t0).toBeLessThan(stretched(3_000));
  });

  it('a program\'s unfinished sub-calls are cancelled when it returns', async () => {
    const { tool } = recorder();
    const pipeline = createPipeline({ tools: [tool('slow', 'parallel', 60_000), runCodeTool({ runtime })] });
    const t0 = performance.now();
    const [result] = await pipeline.run([call(`tools.slow({}); return 'early'`)]);
    expect(output(result).value).toBe('early');
    expect(output(result).subCalls.map((sub) => [sub.status, sub.error?.code])).toEqual([['cancelled', 'cancelled']]);
    expect(performance.now() - t0).toBeLessThan(stretched(2_000)); // not the minute its body would take
  });
});

describe('runCodeTool: the program\'s calls never outlive it', () => {
  it('a sub-call still winding down holds the program\'s barrier: the next exclusive call waits for it', async () => {
    const events: string[] = [];
    const slowUndo = defineTool({
      name: 'write_a',
      description: 'needs 100 ms to roll back',
      input: z.object({}),
      execute: (_args, { signal }) =>
        new Promise((_resolve, reject) => {
          events.push('write_a start');
          signal.addEventListener('abort', () => setTimeout(() => (events.push('write_a end'), reject(signal.reason)), 100));
        }),
    });
    const writeB = defineTool({ name: 'write_b', description: 'b', input: z.object({}), execute: () => void events.push('write_b start') });
    const pipeline = createPipeline({ tools: [slowUndo, writeB, runCodeTool({ runtime })] });
    const results = await pipeline.run([call(`tools.write_a({}); await null; await null; return 'early'`), { id: 'b', name: 'write_b', args: {} }]);
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok']);
    expect(events).toEqual(['write_a start', 'write_a end', 'write_b start']);
  });

  it('a failing sub-call, even of a cancel-rest tool, and ctx.cancelRest() cancel none of the program\'s other calls', async () => {
    const { tool, ran } = recorder();
    const flaky = defineTool({ name: 'flaky', description: 'f', input: z.object({}), mode: 'parallel', onError: 'cancel-rest', execute: () => { throw new Error('flaked'); } });
    const stopper = defineTool({ name: 'stopper', description: 's', input: z.object({}), mode: 'parallel', execute: (_args, ctx) => (ctx.cancelRest(), 'found') });
    const pipeline = createPipeline({ tools: [tool('read', 'parallel', 20), flaky, stopper, runCodeTool({ runtime })] });
    const [result] = await pipeline.run([
      call(`
        const slow = tools.read({ n: 0 });
        const failed = await tools.flaky({}).catch((e) => e.code);
        const found = await tools.stopper({});
        return [failed, found, await slow, await tools.read({ n: 1 }), await tools.read({ n: 2 })];`),
    ]);
    expect(output(result).value).toEqual(['tool_error', 'found', { tool: 'read', n: 0 }, { tool: 'read', n: 1 }, { tool: 'read', n: 2 }]);
    expect(ran.map((r) => r.args)).toEqual([{ n: 0 }, { n: 1 }, { n: 2 }]);
  });

  it('leaves no timer behind: a sub-call cancelled when the program returns drops its timeout', async () => {
    // The pipeline's timers (timeouts, grace periods) all go through its scheduler: count the live ones.
    let live = 0;
    const counting: SchedulerLike = {
      now: () => asyncScheduler.now(),
      schedule<T>(work: (this: SchedulerAction<T>, state?: T) => void, delay = 0, state?: T): Subscription {
        live++;
        let ended = false;
        const end = () => void (ended || ((ended = true), live--));
        const subscription = asyncScheduler.schedule<T>(function (value) {
          end();
          work.call(this, value);
        }, delay, state);
        subscription.add(end);
        return subscription;
      },
    };
    const slow = defineTool({
      name: 'slow',
      description: 's',
      input: z.object({}),
      mode: 'parallel',
      timeoutMs: 60_000,
      execute: (_args, { signal }) => new Promise((_resolve, reject) => signal.addEventListener('abort', () => reject(signal.reason))),
    });
    const pipeline = createPipeline({ tools: [slow, runCodeTool({ runtime })], scheduler: counting });
    const [result] = await pipeline.run([call(`tools.slow({}); tools.slow({}); tools.slow({}); await null; return 'early'`)]);
    expect(output(result).value).toBe('early');
    expect(output(result).subCalls.map((sub) => sub.status)).toEqual(['cancelled', 'cancelled', 'cancelled']);
    expect(live).toBe(0);
  });

  it('calls that arrive after the program was cancelled are answered and logged, never left pending', async () => {
    const { tool } = recorder();
    const pipeline = createPipeline({ tools: [tool('read', 'parallel', 1), runCodeTool({ runtime })], defaultTimeoutMs: 150 });
    const [result] = await pipeline.run([call('for (;;) await Promise.all(Array.from({ length: 50 }, (_, n) => tools.read({ n })))')]);
    expect(result?.error?.code).toBe('timeout');
    // The next program runs normally: nothing of the cancelled one is left pending in the runtime.
    const [next] = await pipeline.run([call('return (await tools.read({ n: 7 })).n')]);
    expect(output(next).value).toBe(7);
    // At the seam: a call made after the batch stopped taking calls in is answered at once, and logged.
    const limits = { maxEntries: Infinity, maxChars: Infinity };
    const batch = pipelineHandle(resolvePipelineOptions({ tools: [tool('read')] })).subBatch({ cancelRest: 'none', complete: 'when-settled' });
    const subCalls = new SubCalls(batch, new Set(), 'late', new AbortController().signal, limits);
    const log = subCalls.close();
    await expect(subCalls.functionFor('read')({ n: 1 }, new AbortController().signal)).rejects.toMatchObject({ code: 'cancelled' });
    expect((await log).entries.map((sub) => [sub.id, sub.status])).toEqual([['late#1', 'cancelled']]);
  });

  it('a runtime that rejects still gets its program\'s sub-calls cancelled', async () => {
    const hang = hangingTool();
    const broken = {
      language: 'javascript',
      isolation: 'none',
      close: async () => undefined,
      run: async (request: { bindings: readonly { functions: Readonly<Record<string, (args: unknown, signal: AbortSignal) => unknown>> }[] }) => {
        void (request.bindings[0]!.functions['hang']!({}, new AbortController().signal) as Promise<unknown>).catch(() => undefined);
        await hang.started;
        throw new Error('sandbox crashed');
      },
    };
    const pipeline = createPipeline({ tools: [hang.tool, runCodeTool({ runtime: broken as never })] });
    const [result] = await pipeline.run([call('ignored')]);
    expect(result?.content).toContain('The code runtime failed: sandbox crashed');
    expect(hang.aborted()).toBe(true);
    expect((result?.error as { cause?: ProgramError }).cause?.subCalls.map((sub) => sub.status)).toEqual(['cancelled']);
  });
});

describe('runCodeTool: the sub-call log is bounded', () => {
  it('holds the first maxLoggedSubCalls entries and maxLoggedChars characters of arguments, and counts the rest', async () => {
    const { tool, ran } = recorder();
    const pipeline = createPipeline({ tools: [tool('read'), runCodeTool({ runtime, maxLoggedSubCalls: 3, maxLoggedChars: 40 })] });
    // {"path":"aaaaaaaaaa"} is 21 characters: the first call's arguments fit, the second's do not.
    const [result] = await pipeline.run([call(`for (let n = 0; n < 5; n++) await tools.read({ path: 'a'.repeat(10) }); return 'done'`)]);
    const { subCalls, subCallsOmitted } = output(result);
    expect(ran).toHaveLength(5); // the log's bounds change what is kept, not what runs
    expect(subCalls.map((sub) => [sub.id, sub.args, sub.argsChars])).toEqual([
      ['c1#1', { path: 'aaaaaaaaaa' }, 21],
      ['c1#2', undefined, 21],
      ['c1#3', undefined, 21],
    ]);
    expect(subCallsOmitted).toEqual({ entries: 2, characters: 4 * 21 });
  });

  it('a failed program\'s error carries the same bounded log, and its message counts every call', async () => {
    const { tool } = recorder();
    const pipeline = createPipeline({ tools: [tool('read'), runCodeTool({ runtime, maxLoggedSubCalls: 2 })] });
    const [result] = await pipeline.run([call(`for (let n = 0; n < 5; n++) await tools.read({ n }); throw new Error('stop')`)]);
    const error = (result?.error as { cause?: ProgramError }).cause!;
    expect(error.subCalls).toHaveLength(2);
    expect(error.subCallsOmitted).toEqual({ entries: 3, characters: 3 * '{"n":0}'.length });
    expect(result?.content).toContain('Before it failed it made 5 tool call(s): read (ok) ×2, and 3 more.');
  });

  it('keeps nothing with zero bounds, and still counts', async () => {
    const { tool } = recorder();
    const pipeline = createPipeline({ tools: [tool('read'), runCodeTool({ runtime, maxLoggedSubCalls: 0, maxLoggedChars: 0 })] });
    const [result] = await pipeline.run([call(`await tools.read({ n: 1 }); await tools.read({ n: 2 }); throw new Error('stop')`)]);
    const error = (result?.error as { cause?: ProgramError }).cause!;
    expect([error.subCalls, error.subCallsOmitted]).toEqual([[], { entries: 2, characters: 14 }]);
    expect(result?.content).toContain('Before it failed it made 2 tool call(s).');
  });
});

describe('runCodeTool: configuration', () => {
  it('outside a pipeline it explains itself', () => {
    const tool = runCodeTool({ runtime });
    const ctx = { signal: new AbortController().signal, callId: 'x', index: 0, turn: undefined, idempotencyKey: 'tsk-test', cancelRest: () => undefined, progress: () => undefined };
    expect(() => tool.execute({ program: 'return 1' }, ctx)).toThrow(/runs only inside a pipeline/);
  });

  it('rejects invalid options with a ConfigError', () => {
    expect(() => runCodeTool({ runtime: {} as never })).toThrow(ConfigError);
    expect(() => runCodeTool({ runtime, maxParallelSubCalls: 0 })).toThrow(/maxParallelSubCalls/);
    expect(() => runCodeTool({ runtime, name: 'bad name' })).toThrow(ConfigError);
    expect(() => runCodeTool({ runtime, maxLoggedSubCalls: -1 })).toThrow(/maxLoggedSubCalls/);
    expect(() => runCodeTool({ runtime, maxLoggedChars: 0.5 })).toThrow(/maxLoggedChars/);
  });

  it('takes a name, and two of them in one pipeline see neither themselves nor each other', async () => {
    const { tool } = recorder();
    const pipeline = createPipeline({ tools: [tool('read'), runCodeTool({ runtime }), runCodeTool({ runtime, name: 'js' })] });
    const results = await pipeline.run([call('return Object.keys(tools)'), { id: 'c2', name: 'js', args: { program: 'return Object.keys(tools)' } }]);
    expect(results.map((r) => output(r).value)).toEqual([['read'], ['read']]);
  });
});
