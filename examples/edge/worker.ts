/**
 * A tool pipeline in a Cloudflare Worker (workerd): the model's tool calls come in as JSON, run through
 * the same policies, pool and result ordering as on a server, and go back as results in model order.
 * The core uses web-standard APIs only, so the Worker needs no `nodejs_compat` flag; `toolstream/node`
 * (the file-system sandbox), SQLite, the fleet and QuickJS are not for here.
 *
 * Bundle and run it with wrangler (`wrangler dev examples/edge/worker.ts`), or as the test does, with
 * esbuild and miniflare (`test/runtimes/edgeExample.test.ts`):
 *
 *   curl -X POST localhost:8787 -d '{"calls":[{"id":"c1","name":"convert_currency","args":{"amount":10,"from":"EUR","to":"USD"}}]}'
 */
import { z } from 'zod';
import { createPipeline, defineTool, denyTools, type ToolCall, type ToolResult } from 'toolstream';

/** Rates a real Worker would fetch (or read from KV); fixed here, so the example's answers are. */
const USD_PER: Record<string, number> = { USD: 1, EUR: 1.08, GBP: 1.27, JPY: 0.0067 };

const tools = [
  defineTool({
    name: 'convert_currency',
    description: 'Convert an amount between currencies (USD, EUR, GBP, JPY)',
    mode: 'parallel',
    input: z.object({ amount: z.number().nonnegative(), from: z.enum(['USD', 'EUR', 'GBP', 'JPY']), to: z.enum(['USD', 'EUR', 'GBP', 'JPY']) }),
    execute: ({ amount, from, to }) => ({ amount: Math.round(((amount * USD_PER[from]!) / USD_PER[to]!) * 100) / 100, currency: to }),
  }),
  defineTool({
    name: 'delete_account',
    description: 'Delete a customer account',
    input: z.object({ account: z.string() }),
    execute: () => 'deleted',
  }),
];

// One pipeline per isolate: it holds no request's state, and its policies apply to every request.
const pipeline = createPipeline({ tools, pre: [denyTools(['delete_*'], 'accounts are not deleted from the edge')], concurrency: 4 });

/** The body a request carries: the calls of one model turn. */
const TurnCalls = z.object({ calls: z.array(z.object({ id: z.string(), name: z.string(), args: z.unknown() })).max(64) });

/** What the Worker answers per call: what a provider's tool-result message needs. */
const outline = (result: ToolResult) =>
  result.status === 'ok' ? { id: result.id, status: 'ok', content: result.content } : { id: result.id, status: result.status, error: result.error.code, content: result.content };

export default {
  async fetch(request: Request): Promise<Response> {
    if (request.method !== 'POST') return new Response('POST the calls of a model turn: {"calls":[{"id","name","args"}]}\n', { status: 405 });
    const parsed = TurnCalls.safeParse(await request.json().catch(() => undefined));
    if (!parsed.success) return Response.json({ error: 'bad_request', issues: parsed.error.issues.map((issue) => issue.message) }, { status: 400 });
    // The client's disconnect aborts the calls still running (request.signal).
    const results = await pipeline.run(parsed.data.calls as ToolCall[], { signal: request.signal });
    return Response.json({ results: results.map(outline) });
  },
};
