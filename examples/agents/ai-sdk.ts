// An agent loop on the Vercel AI SDK (v6): streamText streams one step, each tool call runs as soon as
// its part arrives (the SDK would wait for the step to end), the SDK's assistant message and one
// tool-result per call go back, until the model stops calling tools. The tools have no `execute`:
// toolstream runs them, with its policies, so the loop is ours, not `stopWhen`'s.
//
//   npx tsx examples/agents/ai-sdk.ts --yes "Summarise the TODOs of the workspace in notes/summary.md"
//
// The provider package's variables reach the API or any compatible server: OPENAI_API_KEY,
// OPENAI_BASE_URL (OPENAI_MODEL picks the model; `openai(model)` instead of `openai.chat(model)` uses
// the Responses API). The tools work on the demo's workspace (examples/workspace.ts).
import { openai } from '@ai-sdk/openai';
import { streamText, type ModelMessage } from 'ai';
import { createPipeline } from 'toolstream';
import { runAISDKTurn, toAISDKTools } from 'toolstream/ai-sdk';
import { openWorkspace } from '../workspace.js';
import { instructions, prompt, report, yes } from './console.js';

const workspace = await openWorkspace({ log: console.log, yes: yes() });
const pipeline = createPipeline({ tools: workspace.tools, pre: workspace.pre, approve: workspace.approve });
const tools = toAISDKTools(pipeline); // no `execute`: the SDK never runs them
const messages: ModelMessage[] = [{ role: 'user', content: prompt() }];
try {
  for (let step = 1; step <= 20; step++) {
    const result = streamText({ model: openai.chat(process.env['OPENAI_MODEL'] ?? 'gpt-4.1'), system: instructions, tools, messages });
    const turn = await runAISDKTurn(pipeline, result); // reads fullStream once; the message is the SDK's
    messages.push(...turn.messages); // the assistant message, then one tool-result per call
    report(step, turn);
    if (turn.done) break;
  }
} finally {
  await workspace.close();
}
