// An agent loop with approvals, durable: when the model wants to write, the loop stops and hands back
// what a human must approve and a continuation; the answers — in another request, another process —
// re-enter it, and the model gets every result of that turn, in order.
//
//   npx tsx examples/agents/approvals.ts [--yes] "Summarise the TODOs of the workspace in notes/summary.md"
//
// As examples/agents/anthropic.ts: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL, ANTHROPIC_MODEL.
import { randomBytes } from 'node:crypto';
import { rmSync } from 'node:fs';
import { createInterface } from 'node:readline/promises';
import Anthropic from '@anthropic-ai/sdk';
import { createPipeline, memoryJournal, suspendApprovals, type ApprovalResponse, type PendingApproval } from 'toolstream';
import { runAnthropicLoop, toAnthropicTools, type AnthropicLoopOptions } from 'toolstream/anthropic';
import { openWorkspace } from '../workspace.js';
import { instructions, prompt, report, yes } from './console.js';

const workspace = await openWorkspace();
process.once('exit', () => rmSync(workspace.root, { recursive: true, force: true })); // however the loop ends

// #region pipeline
const pipeline = createPipeline({
  tools: workspace.tools,
  pre: workspace.pre, // asks before write_file
  approve: suspendApprovals(), // a write waits for a human's answer, however long it takes
  journal: memoryJournal(), // sqliteJournal({ path }) or redisJournal(…) to go on in another process
  approvalSecret: process.env['APPROVAL_SECRET'] ?? randomBytes(32).toString('hex'),
});
const client = new Anthropic();
const request: AnthropicLoopOptions['request'] = (messages) =>
  client.messages.create({
    model: process.env['ANTHROPIC_MODEL'] ?? 'claude-sonnet-4-6',
    max_tokens: 4096,
    system: instructions,
    tools: toAnthropicTools(pipeline),
    messages,
    stream: true,
  });
// #endregion pipeline

// #region loop
// POST /chat: run until the model is done, or a write waits for approval.
let loop = await runAnthropicLoop(pipeline, { messages: [{ role: 'user', content: prompt() }], request, turn: 'conversation-1', maxSteps: 20 });
for (const turn of loop.steps) report(turn.step, turn);
while (loop.outcome === 'suspended') {
  // Keep loop.messages; send loop.pending and loop.continuation (signed JSON) to the browser.
  const answers = await askHuman(loop.pending);
  // POST /approve { continuation, answers }: the loop goes on where it stopped (a continuation is accepted once).
  loop = await runAnthropicLoop(pipeline, { messages: loop.messages, request, turn: 'conversation-1', continuation: loop.continuation, answers });
  for (const turn of loop.steps) report(turn.step, turn);
}
console.log(`${loop.outcome} after ${loop.step} step(s)`);
// #endregion loop

/** What a browser would show: each approval, answered at the terminal (or all allowed with --yes). */
async function askHuman(pending: readonly PendingApproval[]): Promise<ApprovalResponse[]> {
  const answers: ApprovalResponse[] = [];
  for (const approval of pending) {
    const question = `approve ${approval.tool} ${JSON.stringify(approval.args)} (${approval.reasons.join('; ')})?`;
    let allowed = yes();
    if (!allowed && process.stdin.isTTY) {
      const terminal = createInterface({ input: process.stdin, output: process.stdout });
      allowed = /^y(es)?$/i.test((await terminal.question(`  ? ${question} [y/N] `)).trim());
      terminal.close();
    }
    console.log(`  ? ${question} → ${allowed ? 'allowed once' : 'rejected'}`);
    answers.push({ token: approval.token, answer: allowed ? 'allowed-once' : 'rejected' });
  }
  return answers;
}
