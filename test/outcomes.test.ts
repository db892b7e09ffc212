import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, outcome, type ApprovalPendingError, type ExecuteMiddleware, type ToolCall } from '../src/index.js';

// Typed outcomes (`outcome.unknown/suspended/streamed`): what a body or an execute middleware may end an
// attempt with besides a value or an error — returned or thrown, the same.

const input = z.object({});
const retry = { attempts: 3, backoff: { initialMs: 1, factor: 1, maxMs: 1, jitter: 0 } } as const;
const calls = (...names: string[]): ToolCall[] => names.map((name, i) => ({ id: `c${i}`, name, args: {} }));

/** A tool whose body counts its runs and ends with what `end` gives (`throw` in `how` throws it instead). */
function ending(name: string, end: () => unknown, options: { mode?: 'parallel' | 'exclusive'; how?: 'return' | 'throw' | 'reject' } = {}) {
  const runs = { count: 0 };
  const tool = defineTool({
    name,
    description: name,
    input,
    mode: options.mode ?? 'parallel',
    idempotent: true,
    retry,
    execute: (): unknown => {
      runs.count++;
      const value = end();
      if (options.how === 'throw') throw value;
      if (options.how === 'reject') return Promise.reject(value);
      return value;
    },
  });
  return { tool, runs };
}

const after = defineTool({ name: 'after', description: 'after', input, mode: 'parallel', execute: () => 'ran' });
const pending = (): ApprovalPendingError => ({
  code: 'approval_pending',
  message: 'Suspended: waits for a human.',
  approval: { turn: 't', callId: 'c0', index: 0, tool: 'wait', args: {}, reasons: ['asks'], token: 'token', expiresAt: Date.now() + 60_000 },
});

describe('outcome.unknown', () => {
  for (const how of ['return', 'throw', 'reject'] as const) {
    it(`${how}ed by a body: the call fails outcome_unknown and is not retried, though its tool retries`, async () => {
      const { tool, runs } = ending('lost', () => outcome.unknown('its worker died mid-body'), { how });
      const [result] = await createPipeline({ tools: [tool] }).run(calls('lost'));
      expect(result).toMatchObject({ status: 'error', error: { code: 'outcome_unknown', message: 'Tool "lost": its worker died mid-body' }, attempts: 1, started: true });
      expect(runs.count).toBe(1);
    });
  }

  it('(the same tool failing with an ordinary error is retried: its retry is live)', async () => {
    const { tool, runs } = ending('lost', () => new Error('flaky'), { how: 'throw' });
    const [result] = await createPipeline({ tools: [tool] }).run(calls('lost'));
    expect(result).toMatchObject({ status: 'error', error: { code: 'tool_error' }, attempts: 3 });
    expect(runs.count).toBe(3);
  });

  it('is a failure of the call\'s mode: an exclusive one cancels the rest of its turn, a parallel one nothing', async () => {
    const exclusive = ending('lost', () => outcome.unknown('gone'), { mode: 'exclusive' }).tool;
    const [lost, cancelled] = await createPipeline({ tools: [exclusive, after] }).run(calls('lost', 'after'));
    expect(lost).toMatchObject({ status: 'error', error: { code: 'outcome_unknown' } });
    expect(cancelled).toMatchObject({ status: 'cancelled', error: { code: 'cancelled', reason: 'sibling_failed', byCallId: 'c0' } });

    const parallel = ending('lost', () => outcome.unknown('gone')).tool;
    const [, ran] = await createPipeline({ tools: [parallel, after] }).run(calls('lost', 'after'));
    expect(ran).toMatchObject({ status: 'ok', value: 'ran' });
  });

  it('a stream that fails with it midway: outcome_unknown (its partial items are not the output)', async () => {
    async function* items() {
      yield 1;
      throw outcome.unknown('the stream broke off');
    }
    const tool = defineTool({ name: 'broken', description: 'd', input, idempotent: true, retry, execute: () => items() });
    const [result] = await createPipeline({ tools: [tool] }).run(calls('broken'));
    expect(result).toMatchObject({ status: 'error', error: { code: 'outcome_unknown', message: 'Tool "broken": the stream broke off' }, attempts: 1 });
  });
});

describe('outcome.suspended', () => {
  it('returned by a body: the call ends suspended with the pending approval, cancelling nothing, never retried', async () => {
    const error = pending();
    const { tool, runs } = ending('wait', () => outcome.suspended(error), { mode: 'exclusive' });
    const other = defineTool({ name: 'other', description: 'd', input, execute: () => 'ran' });
    const [waiting, behind] = await createPipeline({ tools: [tool, other] }).run(calls('wait', 'other'));
    expect(waiting).toMatchObject({ status: 'suspended', attempts: 1 });
    expect(waiting!.error).toBe(error);
    expect(runs.count).toBe(1);
    // It holds its place: the call behind an exclusive one may not overtake it, so it waits too — suspended, not cancelled.
    expect(behind).toMatchObject({ status: 'suspended', error: { code: 'behind_suspended' } });
  });

  it('thrown by a parallel body: its parallel sibling runs', async () => {
    const { tool } = ending('wait', () => outcome.suspended(pending()), { how: 'throw' });
    const [waiting, ran] = await createPipeline({ tools: [tool, after] }).run(calls('wait', 'after'));
    expect(waiting).toMatchObject({ status: 'suspended', error: { code: 'approval_pending' } });
    expect(ran).toMatchObject({ status: 'ok', value: 'ran' });
  });
});

describe('outcome.streamed', () => {
  it('an array or an async iterable, returned, resolved or thrown: streamed, its items kept to the retention', async () => {
    async function* three() {
      yield 1;
      yield 2;
      yield 3;
    }
    const tools = [
      defineTool({ name: 'array', description: 'd', input, execute: () => outcome.streamed([1, 2, 3]) }),
      defineTool({ name: 'later', description: 'd', input, execute: async () => outcome.streamed(three()) }),
      defineTool({ name: 'thrown', description: 'd', input, execute: () => Promise.reject(outcome.streamed([1, 2, 3])) }),
    ];
    const retention = { tools: { array: { maxItems: 2 }, later: { maxItems: 2 }, thrown: { maxItems: 2 } } };
    const results = await createPipeline({ tools, retention }).run(calls('array', 'later', 'thrown'));
    for (const result of results) {
      expect(result).toMatchObject({ status: 'ok', streamed: true, value: [1, 2], omitted: { items: 1 } });
    }
  });

  it('an empty one is a streamed result with no items', async () => {
    const tool = defineTool({ name: 'none', description: 'd', input, execute: () => outcome.streamed([]) });
    const [result] = await createPipeline({ tools: [tool] }).run(calls('none'));
    expect(result).toMatchObject({ status: 'ok', streamed: true, value: [] });
  });
});

describe('an execute middleware ending the attempt with an outcome', () => {
  it('answering outcome.unknown without the body: outcome_unknown, the body never ran, not retried', async () => {
    const { tool, runs } = ending('write', () => 'written');
    for (const answer of [() => outcome.unknown('the ledger is unreachable'), () => Promise.reject(outcome.unknown('the ledger is unreachable'))] as const) {
      const unreachable: ExecuteMiddleware = () => answer();
      const [result] = await createPipeline({ tools: [tool], execute: [unreachable] }).run(calls('write'));
      expect(result).toMatchObject({ status: 'error', error: { code: 'outcome_unknown', message: 'Tool "write": the ledger is unreachable' }, attempts: 1 });
    }
    expect(runs.count).toBe(0);
  });

  it('next() rejects with the outcome the body returned, and a pass-through lets it end the call', async () => {
    const { tool } = ending('lost', () => outcome.unknown('gone'));
    let seen: unknown;
    const watch: ExecuteMiddleware = async (_ctx, next) => {
      try {
        return await next();
      } catch (error) {
        seen = outcome.of(error);
        throw error;
      }
    };
    const [result] = await createPipeline({ tools: [tool], execute: [watch] }).run(calls('lost'));
    expect(seen).toMatchObject({ kind: 'outcome-unknown', message: 'gone' });
    expect(result).toMatchObject({ status: 'error', error: { code: 'outcome_unknown' }, attempts: 1 });
  });

  it('returning outcome.streamed of new items keeps the result streamed', async () => {
    const tool = defineTool({ name: 'lines', description: 'd', input, execute: () => ['a', 'b', 'c'] });
    const asLines: ExecuteMiddleware = async (_ctx, next) => outcome.streamed((await next()) as string[]);
    const [result] = await createPipeline({ tools: [tool], execute: [asLines] }).run(calls('lines'));
    expect(result).toMatchObject({ status: 'ok', streamed: true, value: ['a', 'b', 'c'] });
  });
});

describe('only outcomes made by outcome() are outcomes', () => {
  it('a look-alike plain object is just a value, returned or thrown', async () => {
    const lookAlike = { kind: 'outcome-unknown', message: 'not really' };
    const tools = [
      defineTool({ name: 'unknownish', description: 'd', input, execute: () => lookAlike }),
      defineTool({ name: 'streamedish', description: 'd', input, execute: async () => ({ kind: 'streamed', items: [1] }) }),
      defineTool({ name: 'thrownish', description: 'd', input, execute: () => Promise.reject(lookAlike) }),
    ];
    const [unknownish, streamedish, thrownish] = await createPipeline({ tools }).run(calls('unknownish', 'streamedish', 'thrownish'));
    expect(unknownish).toMatchObject({ status: 'ok', streamed: false, value: lookAlike });
    expect(streamedish).toMatchObject({ status: 'ok', streamed: false, value: { kind: 'streamed', items: [1] } });
    expect(thrownish).toMatchObject({ status: 'error', error: { code: 'tool_error' } });
    expect(outcome.of(lookAlike)).toBeUndefined();
  });

  it('an outcome made by another copy of toolstream in the process (its CJS build) is recognised: the mark is a registered symbol', async () => {
    const foreign = Object.freeze(Object.defineProperty({ kind: 'outcome-unknown', message: 'from the other build' }, Symbol.for('toolstream.outcome'), { value: 'outcome-unknown' }));
    const tool = defineTool({ name: 'other', description: 'd', input, execute: () => foreign });
    const [result] = await createPipeline({ tools: [tool] }).run(calls('other'));
    expect(result).toMatchObject({ status: 'error', error: { code: 'outcome_unknown', message: 'Tool "other": from the other build' } });
  });

  it('outcomes are frozen, compare as plain data, and their constructors refuse bad input', () => {
    const lost = outcome.unknown('gone');
    expect(Object.isFrozen(lost)).toBe(true);
    expect(lost).toEqual({ kind: 'outcome-unknown', message: 'gone' });
    expect(JSON.stringify(lost)).toBe('{"kind":"outcome-unknown","message":"gone"}');
    expect(() => outcome.unknown(42 as never)).toThrow(TypeError);
    expect(() => outcome.suspended({ code: 'tool_error', message: 'x' } as never)).toThrow(TypeError);
    expect(() => outcome.streamed('abc' as never)).toThrow(TypeError);
    const hostile = new Proxy({}, { get: () => { throw new Error('trap'); } });
    expect(outcome.of(hostile)).toBeUndefined();
  });
});
