// An agent loop on Anthropic's Messages API: the model streams, each tool call runs as soon as its block
// is complete, the assistant message and one tool_result per call go back, until the model stops
// calling tools.
//
//   npx tsx examples/agents/anthropic.ts --yes "Summarise the TODOs of the workspace in notes/summary.md"
//
// The SDK's own variables reach the API or any compatible server: ANTHROPIC_API_KEY, ANTHROPIC_BASE_URL
// (ANTHROPIC_MODEL picks the model). The tools work on the demo's workspace (examples/workspace.ts).
import Anthropic from '@anthropic-ai/sdk';
import { createPipeline } from 'toolstream';
import { runAnthropicTurn, toAnthropicTools } from 'toolstream/anthropic';
import { openWorkspace } from '../workspace.js';
import { instructions, prompt, report, yes } from './console.js';

const workspace = await openWorkspace({ log: console.log, yes: yes() });
const pipeline = createPipeline({ tools: workspace.tools, pre: workspace.pre, approve: workspace.approve });
const client = new Anthropic();
const messages: Anthropic.MessageParam[] = [{ role: 'user', content: prompt() }];
try {
  for (let step = 1; step <= 20; step++) {
    const stream = await client.messages.create({
      model: process.env['ANTHROPIC_MODEL'] ?? 'claude-sonnet-4-6',
      max_tokens: 4096,
      system: instructions,
      tools: toAnthropicTools(pipeline),
      messages,
      stream: true,
    });
    const turn = await runAnthropicTurn(pipeline, stream); // reads the stream once: calls and message
    messages.push(...turn.messages); // the assistant message, then the tool_results (none on the last turn)
    report(step, turn);
    if (turn.done) break;
  }
} finally {
  await workspace.close();
}
