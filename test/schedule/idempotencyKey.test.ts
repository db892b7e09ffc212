import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, memoryJournal, type ToolCall } from '../../src/index.js';
import { ProcessView } from '../support/crashes.js';
import { deferred } from '../support/deferred.js';

// Records the key every attempt of every call saw; the first attempt of each call throws.
function keyed() {
  const seen: [string, string][] = [];
  const tried = new Set<string>();
  const tool = defineTool({
    name: 'charge',
    description: 'charge',
    input: z.object({}),
    mode: 'parallel',
    idempotent: true,
    retry: { attempts: 2, backoff: { initialMs: 1 } },
    execute: (_args, ctx) => {
      seen.push([ctx.callId, ctx.idempotencyKey]);
      if (!tried.has(ctx.callId + ctx.idempotencyKey)) {
        tried.add(ctx.callId + ctx.idempotencyKey);
        throw new Error('first attempt fails');
      }
      return ctx.idempotencyKey;
    },
  });
  return { seen, pipeline: createPipeline({ tools: [tool] }) };
}

describe('ctx.idempotencyKey', () => {
  it('is the same for every attempt of a call, and differs between calls', async () => {
    const { seen, pipeline } = keyed();
    const results = await pipeline.run([
      { id: 'a', name: 'charge', args: {}, turn: 'msg_1' },
      { id: 'b', name: 'charge', args: {}, turn: 'msg_1' },
    ]);
    expect(results.map((r) => [r.status, r.attempts])).toEqual([['ok', 2], ['ok', 2]]);
    const keyOf = (id: string) => new Set(seen.filter(([callId]) => callId === id).map(([, key]) => key));
    expect(keyOf('a').size).toBe(1);
    expect(keyOf('b').size).toBe(1);
    expect([...keyOf('a')][0]).not.toBe([...keyOf('b')][0]);
    expect([...keyOf('a')][0]).toMatch(/^tsk-[A-Za-z0-9_-]{43}$/);
  });

  it('with a turn, derives from turn and call id: the same in another subscription or pipeline, different in another turn', async () => {
    const call = (turn: string): ToolCall => ({ id: 'a', name: 'charge', args: {}, turn });
    const first = await keyed().pipeline.run([call('msg_1')]);
    const again = await keyed().pipeline.run([call('msg_1')]);
    const other = await keyed().pipeline.run([call('msg_2')]);
    const key = (r: (typeof first)[number]) => (r.status === 'ok' ? r.value : undefined);
    expect(key(again[0]!)).toBe(key(first[0]!));
    expect(key(other[0]!)).not.toBe(key(first[0]!));
  });

  it('without a turn, derives from the subscription: stable across retries, different in another subscription', async () => {
    const { seen, pipeline } = keyed();
    await pipeline.run([{ id: 'a', name: 'charge', args: {} }]);
    await pipeline.run([{ id: 'a', name: 'charge', args: {} }]);
    const keys = seen.map(([, key]) => key);
    expect(keys).toHaveLength(4);
    expect(keys[0]).toBe(keys[1]);
    expect(keys[2]).toBe(keys[3]);
    expect(keys[2]).not.toBe(keys[0]);
  });
});

describe('ctx.idempotencyKey in a durable turn', () => {
  it('is the same when the turn is resumed by another pipeline after a crash mid-body', async () => {
    const SECRET = 'a test secret that is long enough to sign with';
    const journal = memoryJournal();
    const keys: string[] = [];
    const started = deferred();
    const fetchOf = (body: () => unknown) =>
      defineTool({ name: 'fetch', description: 'f', input: z.object({}), idempotent: true, execute: (_a, ctx) => (keys.push(ctx.idempotencyKey), body()) });
    const dying = new ProcessView(journal);
    void createPipeline({ tools: [fetchOf(() => (started.resolve(), new Promise<never>(() => {})))], journal: dying, approvalSecret: SECRET }).run(
      [{ id: 'f', name: 'fetch', args: {} }],
      { turn: 'conv-1/resp-1' },
    );
    await started.promise;
    dying.crash('conv-1/resp-1');
    const [result] = await createPipeline({ tools: [fetchOf(() => 'page')], journal, approvalSecret: SECRET }).resume('conv-1/resp-1');
    expect(result).toMatchObject({ status: 'ok', value: 'page' });
    expect(keys).toHaveLength(2);
    expect(keys[1]).toBe(keys[0]); // the API the body calls sees the same key, and deduplicates
  });

  it('is derived from the journal key and slot, as every version so far derived it (a fleet worker of another version agrees)', async () => {
    const keys: string[] = [];
    const fetch = defineTool({ name: 'fetch', description: 'f', input: z.object({}), idempotent: true, execute: (_a, ctx) => (keys.push(ctx.idempotencyKey), 'page') });
    const pipeline = createPipeline({ tools: [fetch], journal: memoryJournal(), approvalSecret: 'a test secret that is long enough to sign with' });
    await pipeline.run([{ id: 'f', name: 'fetch', args: {} }, { id: 'g', name: 'fetch', args: {} }], { turn: 'conv-1/resp-1' });
    const named = (index: number) => `tsk-${createHash('sha256').update(JSON.stringify(['durable', 'conv-1/resp-1', index])).digest('base64url')}`;
    expect(keys).toEqual([named(0), named(1)]);
  });
});
