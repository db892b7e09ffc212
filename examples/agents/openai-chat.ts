// An agent loop on OpenAI's Chat Completions API: the model streams, each tool call runs as soon as its
// arguments are complete, the assistant message and one tool message per call go back, until the model
// stops calling tools.
//
//   npx tsx examples/agents/openai-chat.ts --yes "Summarise the TODOs of the workspace in notes/summary.md"
//
// The SDK's own variables reach the API or any compatible server (Ollama, vLLM, a router):
// OPENAI_API_KEY, OPENAI_BASE_URL (OPENAI_MODEL picks the model). The tools work on the demo's
// workspace (examples/workspace.ts).
import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { createPipeline } from 'toolstream';
import { runOpenAIChatTurn, toOpenAIChatTools } from 'toolstream/openai';
import { openWorkspace } from '../workspace.js';
import { instructions, prompt, report, yes } from './console.js';

const workspace = await openWorkspace({ log: console.log, yes: yes() });
const pipeline = createPipeline({ tools: workspace.tools, pre: workspace.pre, approve: workspace.approve });
const client = new OpenAI();
const messages: ChatCompletionMessageParam[] = [
  { role: 'system', content: instructions },
  { role: 'user', content: prompt() },
];
try {
  for (let step = 1; step <= 20; step++) {
    const stream = await client.chat.completions.create({
      model: process.env['OPENAI_MODEL'] ?? 'gpt-4.1',
      tools: toOpenAIChatTools(pipeline),
      messages,
      stream: true,
    });
    const turn = await runOpenAIChatTurn(pipeline, stream); // reads the stream once: calls and message
    messages.push(...turn.messages); // the assistant message, then one tool message per call
    report(step, turn);
    if (turn.done) break;
  }
} finally {
  await workspace.close();
}
