import { Subject, lastValueFrom, toArray } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, type ToolCall, type ToolResult } from '../src/index.js';
import { deferred } from './support/deferred.js';
import { outline, sleep, tick } from './faults/helpers.js';

const read = defineTool({
  name: 'read_file',
  description: 'read',
  input: z.object({ path: z.string(), ms: z.number().default(5) }),
  mode: 'parallel',
  execute: async ({ path, ms }, { signal }) => {
    await sleep(ms, signal);
    if (path === 'missing') throw new Error(`ENOENT: ${path}`);
    return path;
  },
});
const write = defineTool({
  name: 'write_file',
  description: 'write',
  input: z.object({ path: z.string() }),
  execute: ({ path }) => {
    if (path === 'readonly') throw new Error('EACCES');
    return `wrote ${path}`;
  },
});
const failLater = defineTool({
  name: 'fail_later',
  description: 'fails after 5 ms',
  input: z.object({}),
  execute: async () => {
    await sleep(5);
    throw new Error('disk full');
  },
});
const readCall = (id: string, path: string, turn?: string, ms?: number): ToolCall => ({
  id,
  name: 'read_file',
  args: { path, ...(ms === undefined ? {} : { ms }) },
  ...(turn === undefined ? {} : { turn }),
});
const writeCall = (id: string, path: string, turn?: string): ToolCall => ({ id, name: 'write_file', args: { path }, ...(turn === undefined ? {} : { turn }) });

/** Runs calls through one long-lived subscription, as an agent does for a whole conversation. */
async function conversation(options: Parameters<typeof createPipeline>[0], feed: (calls: Subject<ToolCall>) => Promise<void>): Promise<ToolResult[]> {
  const calls = new Subject<ToolCall>();
  const results = lastValueFrom(calls.pipe(createPipeline(options).operator(), toArray()));
  await feed(calls);
  calls.complete();
  return results;
}

describe('failures are scoped to a turn, with defaults by mode', () => {
  it('a failing parallel call cancels nothing by default: the valid sibling reads still answer', async () => {
    const results = await createPipeline({ tools: [read, write] }).run([
      readCall('call_1', 'missing'),
      readCall('call_2', 'a.txt', undefined, 15),
      readCall('call_3', 'b.txt', undefined, 15),
    ]);
    expect(outline(results)).toEqual([['call_1', 'error', 'tool_error'], ['call_2', 'ok', undefined], ['call_3', 'ok', undefined]]);
  });

  it('a failing exclusive call cancels the rest of its turn by default', async () => {
    const results = await createPipeline({ tools: [read, write] }).run([writeCall('w', 'readonly'), readCall('r', 'a.txt'), writeCall('w2', 'x')]);
    expect(outline(results)).toEqual([['w', 'error', 'tool_error'], ['r', 'cancelled', 'cancelled'], ['w2', 'cancelled', 'cancelled']]);
  });

  it("one subscription, several turns: a failure in turn 1 does not cancel turn 2's calls", async () => {
    const results = await conversation({ tools: [read, write] }, async (calls) => {
      calls.next(writeCall('w1', 'readonly', 'msg_1'));
      calls.next(readCall('r1', 'a.txt', 'msg_1'));
      await tick(5);
      calls.next(readCall('r2', 'b.txt', 'msg_2'));
      calls.next(writeCall('w2', 'c.txt', 'msg_2'));
      calls.next(readCall('r1-late', 'c.txt', 'msg_1')); // a straggler of the failed turn
    });
    expect(outline(results)).toEqual([
      ['w1', 'error', 'tool_error'],
      ['r1', 'cancelled', 'cancelled'],
      ['r2', 'ok', undefined],
      ['w2', 'ok', undefined],
      ['r1-late', 'cancelled', 'cancelled'],
    ]);
    expect(results.map((r) => r.turn)).toEqual(['msg_1', 'msg_1', 'msg_2', 'msg_2', 'msg_1']);
  });

  it('ctx.cancelRest() reaches only its own turn', async () => {
    const stopper = defineTool({
      name: 'stop',
      description: 's',
      input: z.object({}),
      mode: 'parallel',
      execute: async (_args, ctx) => {
        await sleep(2);
        ctx.cancelRest();
        return 'stopped';
      },
    });
    const results = await createPipeline({ tools: [read, stopper] }).run([
      { id: 's', name: 'stop', args: {}, turn: 't1' },
      readCall('same', 'a', 't1', 30),
      readCall('other', 'b', 't2', 30),
    ]);
    expect(outline(results)).toEqual([['s', 'ok', undefined], ['same', 'cancelled', 'cancelled'], ['other', 'ok', undefined]]);
    expect(results[1]!.error).toMatchObject({ reason: 'cancel_requested', byCallId: 's', started: true });
  });

  it('a pending approval of the failed turn is withdrawn; one of another turn is still asked', async () => {
    const asked: string[] = [];
    const answer = deferred<'allowed-once'>();
    const results = await conversation(
      {
        tools: [read, write, failLater],
        pre: [askTools(['read_file'])],
        approve: async ({ call }, signal) => {
          asked.push(call.id);
          return Promise.race([answer.promise, new Promise<never>((_, reject) => signal.addEventListener('abort', () => reject(signal.reason)))]);
        },
      },
      async (calls) => {
        calls.next({ id: 'w1', name: 'fail_later', args: {}, turn: 'msg_1' }); // exclusive: runs first, fails at 5 ms
        calls.next(readCall('r1', 'a', 'msg_1')); // asked meanwhile
        calls.next(readCall('r2', 'b', 'msg_2')); // asked meanwhile
        await tick(20);
        answer.resolve('allowed-once');
      },
    );
    expect(asked).toEqual(['r1', 'r2']);
    expect(outline(results)).toEqual([['w1', 'error', 'tool_error'], ['r1', 'cancelled', 'cancelled'], ['r2', 'ok', undefined]]);
  });

  it('aborting the run cancels every turn', async () => {
    const controller = new AbortController();
    const run = createPipeline({ tools: [read] }).run([readCall('a', 'x', 't1', 50), readCall('b', 'y', 't2', 50)], { signal: controller.signal });
    await tick(5);
    controller.abort();
    expect(outline(await run)).toEqual([['a', 'cancelled', 'cancelled'], ['b', 'cancelled', 'cancelled']]);
  });

  it('a turn that is not a string is a malformed call', async () => {
    const [result] = await createPipeline({ tools: [read] }).run([{ id: '1', name: 'read_file', args: { path: 'a' }, turn: 7 } as unknown as ToolCall]);
    expect(result?.error?.code).toBe('invalid_call');
    expect(result?.content).toMatch(/a string "turn"/);
  });
});
