import { setTimeout as sleep } from 'node:timers/promises';
import { describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, type Approver, type PipelineOptions, type ToolCall } from '../../src/index.js';

const log: string[] = [];
const tool = (name: string, mode: 'parallel' | 'exclusive', ms = 0) =>
  defineTool({
    name,
    description: name,
    input: z.object({ tag: z.string() }),
    mode,
    execute: async ({ tag }) => {
      log.push(`start ${tag}`);
      await sleep(ms);
      log.push(`end ${tag}`);
      return tag;
    },
  });
const tools = [tool('read', 'parallel', 20), tool('write', 'exclusive', 5), tool('slow_read', 'parallel', 40)];
const call = (name: string, tag: string): ToolCall => ({ id: tag, name, args: { tag } });
const pipeline = (options: Omit<PipelineOptions, 'tools'>) => createPipeline({ tools, ...options });

describe('approval (ask)', () => {
  it('allowed-once admits this call only: the next call to the same tool asks again', async () => {
    const approve = vi.fn<Approver>(async () => 'allowed-once' as const);
    const results = await pipeline({ pre: [askTools(['write'])], approve }).run([call('write', 'w1'), call('write', 'w2')]);
    expect(results.map((r) => r.status)).toEqual(['ok', 'ok']);
    expect(approve).toHaveBeenCalledTimes(2);
    expect(approve.mock.calls.map(([request]) => request.call.id)).toEqual(['w1', 'w2']);
    expect(results[0]!.trace).toContainEqual({ stage: 'approval', event: 'answer', answer: 'allowed-once' });
  });

  it('the request carries the call, the tool, the effective args and the reasons; the signal is live', async () => {
    const approve = vi.fn<Approver>(async (_request, signal) => (signal.aborted ? 'rejected' : 'allowed-once'));
    await pipeline({ pre: [askTools(['write'], 'writes need a human')], approve }).run([call('write', 'w')]);
    const [request] = approve.mock.calls[0]!;
    expect(request).toMatchObject({ call: { id: 'w', name: 'write' }, args: { tag: 'w' }, index: 0, reasons: ['writes need a human'] });
    expect(request.tool.name).toBe('write');
  });

  it.each([
    ['rejected', async () => 'rejected' as const, 'approval_rejected'],
    ['a throw', async () => Promise.reject(new Error('ui crashed')), 'approval_error'],
    ['a synchronous throw', () => {
      throw new Error('boom');
    }, 'approval_error'],
    ['another answer', async () => 'yes' as never, 'approval_invalid'],
  ])('%s → denied, with a code that says which; the tool never runs', async (_label, approve, code) => {
    log.length = 0;
    const [result] = await pipeline({ pre: [askTools(['write'])], approve: approve as Approver }).run([call('write', 'w')]);
    expect(result!.status).toBe('denied');
    expect(result!.error?.code).toBe(code);
    expect(log).toEqual([]);
  });

  it('no approver → approval_unavailable', async () => {
    const [result] = await pipeline({ defaultDecision: 'ask' }).run([call('read', 'r')]);
    expect(result!.error?.code).toBe('approval_unavailable');
    expect(result!.content).toBe('Denied: calling "read" needs approval, and no approver is configured.');
  });

  it('approvalTimeoutMs passing → approval_timeout, and the approver’s signal aborts', async () => {
    let approverSignal: AbortSignal | undefined;
    const approve: Approver = (_request, signal) => ((approverSignal = signal), new Promise(() => {}));
    const [result] = await pipeline({ defaultDecision: 'ask', approve, approvalTimeoutMs: 10 }).run([call('read', 'r')]);
    expect(result!.error?.code).toBe('approval_timeout');
    expect(approverSignal?.aborted).toBe(true);
  });

  it('the run signal aborting while an approval is pending: the approver’s signal aborts and the call is cancelled', async () => {
    const controller = new AbortController();
    let approverSignal: AbortSignal | undefined;
    const approve: Approver = (_request, signal) => ((approverSignal = signal), new Promise(() => {}));
    const pending = pipeline({ defaultDecision: 'ask', approve }).run([call('read', 'r')], { signal: controller.signal });
    setTimeout(() => controller.abort(), 5);
    const [result] = await pending;
    expect(result!.status).toBe('cancelled');
    expect(result!.error).toMatchObject({ code: 'cancelled', reason: 'aborted', started: false });
    expect(approverSignal?.aborted).toBe(true);
  });

  it('cancel-rest reaches a pending approval: nobody waits for an answer that no longer matters', async () => {
    let approverSignal: AbortSignal | undefined;
    const approve: Approver = (_request, signal) => ((approverSignal = signal), new Promise(() => {})); // a human who never answers
    const failing = defineTool({ name: 'fail', description: 'f', input: z.object({ tag: z.string() }), mode: 'parallel', execute: () => sleep(5).then(() => Promise.reject(new Error('boom'))) });
    const results = await createPipeline({ tools: [...tools, failing], pre: [askTools(['write'])], approve, onError: 'cancel-rest' }).run([
      call('fail', 'f'),
      call('write', 'w'),
      call('read', 'later'),
    ]);
    expect(results.map((r) => r.status)).toEqual(['error', 'cancelled', 'cancelled']);
    expect(results[1]!.error).toMatchObject({ code: 'cancelled', reason: 'sibling_failed', byCallId: 'f', started: false });
    expect(approverSignal?.aborted).toBe(true);
  });

  it('approvals of concurrent calls are pending at the same time, and a slow one does not hold up parallel calls after it', async () => {
    log.length = 0;
    let pending = 0;
    let maxPending = 0;
    const approve: Approver = async (request) => {
      maxPending = Math.max(maxPending, ++pending);
      await sleep(request.call.id === 'a' ? 60 : 5);
      pending--;
      return 'allowed-once' as const;
    };
    const results = await pipeline({ pre: [askTools(['read', 'slow_read'])], approve }).run([call('slow_read', 'a'), call('read', 'b')]);
    expect(maxPending).toBe(2);
    expect(results.map((r) => r.id)).toEqual(['a', 'b']); // still in model order
    expect(log.indexOf('end b')).toBeLessThan(log.indexOf('start a')); // b ran while a waited for its approval
  });

  it("an exclusive call's approval never lets it run out of order", async () => {
    log.length = 0;
    // a (parallel) runs 20 ms; x (exclusive) is approved at once; b (parallel, allowed) comes after x.
    const approve: Approver = async () => 'allowed-once';
    await pipeline({ pre: [askTools(['write'])], approve }).run([call('read', 'a'), call('write', 'x'), call('read', 'b')]);
    expect(log).toEqual(['start a', 'end a', 'start x', 'end x', 'start b', 'end b']);

    log.length = 0;
    // x waits 30 ms for its approval; b, allowed at once, must not start before x has finished.
    const slowApprove: Approver = async () => (await sleep(30), 'allowed-once');
    await pipeline({ pre: [askTools(['write'])], approve: slowApprove }).run([call('write', 'x'), call('read', 'b')]);
    expect(log).toEqual(['start x', 'end x', 'start b', 'end b']);
  });

  it('a denied exclusive call holds nothing up', async () => {
    log.length = 0;
    const results = await pipeline({ pre: [askTools(['write'])], approve: async () => 'rejected' }).run([call('write', 'x'), call('read', 'b')]);
    expect(results.map((r) => r.status)).toEqual(['denied', 'ok']);
    expect(log).toEqual(['start b', 'end b']);
  });
});
