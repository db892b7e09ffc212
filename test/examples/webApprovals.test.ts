import type { ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startExample, stopExample } from './exampleServer.js';
import { READY_MS } from '../support/timing.js';

const dir = mkdtempSync(join(tmpdir(), 'web-approvals-'));
const env = { ...process.env, JOURNAL: join(dir, 'turns.db'), WORKSPACE: join(dir, 'workspace'), APPROVAL_SECRET: randomBytes(32).toString('hex'), PORT: '0' };
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const children = new Set<ChildProcess>();
afterAll(() => children.forEach((child) => child.kill('SIGKILL')));
/** Starts examples/web-approvals.ts; resolves once it listens, with its URL and what it printed. */
const start = () => startExample('examples/web-approvals.ts', env, children, READY_MS);
const stop = stopExample;
const post = async (url: string, body?: unknown) => {
  const response = await fetch(url, { method: 'POST', ...(body === undefined ? {} : { body: JSON.stringify(body), headers: { 'content-type': 'application/json' } }) });
  return { status: response.status, json: (await response.json()) as Record<string, unknown> };
};
const ran = (output: readonly string[]) => [...output.join('').matchAll(/▶ #(\d) (\w+) running/g)].map((m) => `${m[2]} #${m[1]}`);

describe('examples/web-approvals.ts: approvals answered in a later request, by a restarted server', () => {
  it('request 1 suspends the write; the server restarts; request 2 approves it and gets the tool_result message', async () => {
    const first = await start();
    const one = await post(`${first.url}/turns/conversation-1.response-1`);
    expect(one.status).toBe(200);
    expect(one.json['results']).toEqual([
      { id: 'toolu_demo_01', name: 'list_dir', status: 'ok' },
      { id: 'toolu_demo_02', name: 'read_file', status: 'ok' },
      { id: 'toolu_demo_03', name: 'read_file', status: 'ok' },
      { id: 'toolu_demo_04', name: 'write_file', status: 'suspended' },
      { id: 'toolu_demo_05', name: 'read_file', status: 'denied' }, // a path outside the workspace
      { id: 'toolu_demo_06', name: 'search', status: 'suspended' }, // behind the write
    ]);
    const pending = one.json['pending'] as { callId: string; token: string }[];
    expect(pending.map((p) => p.callId)).toEqual(['toolu_demo_04']);
    await stop(first.child);

    const second = await start(); // a new process: nothing of the turn is in its memory
    const forged = await post(`${second.url}/turns/conversation-1.response-1/answers`, { answers: [{ token: `${pending[0]!.token}x`, answer: 'allowed-once' }] });
    expect(forged).toMatchObject({ status: 400, json: { error: 'token_forged' } });
    const two = await post(`${second.url}/turns/conversation-1.response-1/answers`, { answers: [{ token: pending[0]!.token, answer: 'allowed-once' }] });
    expect(two.status).toBe(200);
    const message = two.json['message'] as { role: string; content: { tool_use_id: string; is_error: boolean; content: string }[] };
    expect(message.role).toBe('user');
    expect(message.content.map((block) => [block.tool_use_id, block.is_error])).toEqual([
      ['toolu_demo_01', false],
      ['toolu_demo_02', false],
      ['toolu_demo_03', false],
      ['toolu_demo_04', false],
      ['toolu_demo_05', true],
      ['toolu_demo_06', false],
    ]);
    // Only what had not run runs: the write, once, and the search behind it — no read again.
    expect(ran(second.output)).toEqual(['write_file #3', 'search #5']);
    expect(readFileSync(join(env.WORKSPACE, 'notes/summary.md'), 'utf8')).toMatch(/3 open TODOs/);
    const again = await post(`${second.url}/turns/conversation-1.response-1/answers`, { answers: [{ token: pending[0]!.token, answer: 'allowed-once' }] });
    expect(again).toMatchObject({ status: 400, json: { error: 'token_used' } });
    expect(ran(second.output)).toEqual(['write_file #3', 'search #5']);
    await stop(second.child);
  });
});
