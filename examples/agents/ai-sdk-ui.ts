// The AI SDK loop behind `useChat`: a route handler answers the chat's POST with a UI message stream in
// which each step's text and tool inputs stream as the SDK writes them, and toolstream's results
// complete the tool parts (`output-available` / `output-error`), so the page shows every call as it
// would with `execute` on the server. The loop, not `stopWhen`, runs the steps.
//
//   // app/api/chat/route.ts (Next.js), or any handler that returns a web Response:
//   export async function POST(request: Request) {
//     const { messages } = await request.json();
//     return respond(messages);
//   }
//
// The provider package's variables reach the API or any compatible server (OPENAI_API_KEY,
// OPENAI_BASE_URL, OPENAI_MODEL). This example approves every write (`yes: true`, said out loud): a real
// server brings its own approver (an async function: it can send the question to the page and wait for
// the answer, within approvalTimeoutMs), or suspends: a durable loop whose approvals are useChat's own (examples/agents/ai-sdk-approvals.ts).
import { openai } from '@ai-sdk/openai';
import { convertToModelMessages, createUIMessageStream, createUIMessageStreamResponse, streamText, type LanguageModel, type UIMessage } from 'ai';
import { createPipeline } from 'toolstream';
import { runAISDKTurn, toAISDKToolOutputChunks, toAISDKTools } from 'toolstream/ai-sdk';
import { openWorkspace } from '../workspace.js';
import { instructions } from './console.js';

export const workspace = await openWorkspace({ yes: true });
const pipeline = createPipeline({ tools: workspace.tools, pre: workspace.pre, approve: workspace.approve });
const tools = toAISDKTools(pipeline);

/** The response to `useChat`'s POST: the whole agent loop, as one UI message stream. */
export function respond(messages: UIMessage[], model: LanguageModel = openai.chat(process.env['OPENAI_MODEL'] ?? 'gpt-4.1')): Response {
  const stream = createUIMessageStream({
    originalMessages: messages,
    execute: async ({ writer }) => {
      const history = await convertToModelMessages(messages);
      for (let step = 1; step <= 20; step++) {
        const result = streamText({ model, system: instructions, tools, messages: history });
        const forward = async () => {
          for await (const chunk of result.toUIMessageStream({ sendStart: step === 1, sendFinish: false })) writer.write(chunk);
        };
        const [turn] = await Promise.all([runAISDKTurn(pipeline, result), forward()]);
        for (const chunk of toAISDKToolOutputChunks(turn.results)) writer.write(chunk); // after the step's inputs
        history.push(...turn.messages);
        if (turn.done) break;
      }
      writer.write({ type: 'finish' });
    },
  });
  return createUIMessageStreamResponse({ stream });
}
