/**
 * How long a turn stays cancelled in a long-lived subscription (issue 24, finding 3): while it has an
 * unfinished call, and then among the last 1,000 cancelled turns that are over; a call of a turn that
 * ended cancelled longer ago starts it afresh. The anonymous turn (calls without `turn`) is the
 * subscription: cancelled, it stays so.
 */
import { Subject } from 'rxjs';
import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall, type ToolResult } from '../src/index.js';

const input = z.object({ path: z.string() });
const write = defineTool({
  name: 'write_file',
  description: 'write',
  input,
  execute: ({ path }) => {
    if (path === 'readonly') throw new Error('EACCES');
    return `wrote ${path}`;
  },
});
const read = defineTool({ name: 'read_file', description: 'read', input, mode: 'parallel', execute: ({ path }) => path });

/** One subscription for a whole conversation, with synchronous tools: each call is answered as it is sent. */
function conversation() {
  const calls = new Subject<ToolCall>();
  const results: ToolResult[] = [];
  calls.pipe(createPipeline({ tools: [write, read] }).operator()).subscribe((result) => results.push(result));
  const send = (call: ToolCall): ToolResult => {
    const before = results.length;
    calls.next(call);
    expect(results.length).toBe(before + 1);
    return results.at(-1)!;
  };
  /** A turn whose write fails: its read is cancelled. */
  const failedTurn = (turn: string | undefined) => {
    send({ id: `${turn}-w`, name: 'write_file', args: { path: 'readonly' }, ...(turn === undefined ? {} : { turn }) });
    return send({ id: `${turn}-r`, name: 'read_file', args: { path: 'a' }, ...(turn === undefined ? {} : { turn }) });
  };
  return { send, failedTurn };
}

describe('a cancelled turn in a long-lived subscription', () => {
  it('a straggler of a recently cancelled turn is cancelled, naming the call that failed', () => {
    const { send, failedTurn } = conversation();
    expect(failedTurn('msg_0').status).toBe('cancelled');
    for (let i = 1; i <= 999; i++) failedTurn(`msg_${i}`);
    const straggler = send({ id: 'late', name: 'read_file', args: { path: 'b' }, turn: 'msg_0' });
    expect(straggler.status).toBe('cancelled');
    expect(straggler.error).toMatchObject({ code: 'cancelled', reason: 'sibling_failed', byCallId: 'msg_0-w', started: false });
    expect(straggler.error?.message).toMatch(/call "msg_0-w" \(write_file\) failed/);
  });

  it('a call of a turn that ended cancelled more than 1,000 cancelled turns ago starts it afresh', () => {
    const { send, failedTurn } = conversation();
    failedTurn('msg_0');
    for (let i = 1; i <= 1_000; i++) failedTurn(`msg_${i}`);
    expect(send({ id: 'late', name: 'read_file', args: { path: 'b' }, turn: 'msg_0' }).status).toBe('ok');
    expect(send({ id: 'late-1', name: 'read_file', args: { path: 'b' }, turn: 'msg_1' }).status).toBe('cancelled');
  });

  it('the anonymous turn stays cancelled however many named turns end cancelled after it', () => {
    const { send, failedTurn } = conversation();
    failedTurn(undefined);
    for (let i = 0; i < 1_500; i++) failedTurn(`msg_${i}`);
    expect(send({ id: 'late', name: 'read_file', args: { path: 'b' } }).status).toBe('cancelled');
    expect(send({ id: 'other', name: 'read_file', args: { path: 'b' }, turn: 'msg_new' }).status).toBe('ok');
  });
});
