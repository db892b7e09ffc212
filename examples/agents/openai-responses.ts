// An agent loop on OpenAI's Responses API: the model streams, each tool call runs as soon as its
// arguments are done, the response's output items and one function_call_output per call go back,
// until the model stops calling tools. The loop keeps the conversation itself (no
// previous_response_id), so it also works with servers that keep no responses, and with store: false
// (for a reasoning model, add include: ['reasoning.encrypted_content'] so its reasoning items can go back).
//
//   npx tsx examples/agents/openai-responses.ts --yes "Summarise the TODOs of the workspace in notes/summary.md"
//
// The SDK's own variables reach the API or any compatible server: OPENAI_API_KEY, OPENAI_BASE_URL
// (OPENAI_MODEL picks the model). The tools work on the demo's workspace (examples/workspace.ts).
import OpenAI from 'openai';
import type { ResponseInputItem } from 'openai/resources/responses/responses';
import { createPipeline } from 'toolstream';
import { runOpenAIResponsesTurn, toOpenAIResponsesTools } from 'toolstream/openai';
import { openWorkspace } from '../workspace.js';
import { instructions, prompt, report, yes } from './console.js';

const workspace = await openWorkspace({ log: console.log, yes: yes() });
const pipeline = createPipeline({ tools: workspace.tools, pre: workspace.pre, approve: workspace.approve });
const client = new OpenAI();
const input: ResponseInputItem[] = [{ role: 'user', content: prompt() }];
try {
  for (let step = 1; step <= 20; step++) {
    const stream = await client.responses.create({
      model: process.env['OPENAI_MODEL'] ?? 'gpt-4.1',
      instructions,
      tools: toOpenAIResponsesTools(pipeline),
      input,
      stream: true,
    });
    const turn = await runOpenAIResponsesTurn(pipeline, stream); // reads the stream once: calls and items
    input.push(...turn.items); // the output items, then one function_call_output per call
    report(step, turn);
    if (turn.done) break;
  }
} finally {
  await workspace.close();
}
