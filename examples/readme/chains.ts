// examples/readme/chains.ts
// The README's four-chains example, run: a cache answers the second fetch of a page without the body,
// a timer wraps every attempt (and tightens its time limit), a tool's own middleware runs inside the
// pipeline's, and the result chain redacts what the model sees.
import assert from 'node:assert/strict';
import { z } from 'zod';
import { createPipeline, defineTool, type ExecuteMiddleware, type ResultMiddleware } from 'toolstream';

const pages = new Map([['/docs', '<h1>Docs</h1> key=sk-live-4242']]);
let fetches = 0;
const fetchPage = async (url: string, signal: AbortSignal) => {
  signal.throwIfAborted();
  fetches++;
  return pages.get(url) ?? '';
};
const log: string[] = [];

// #region readme
// A cache of idempotent calls: it answers without the body when it can.
const cache = new Map<string, unknown>();
const cached: ExecuteMiddleware = async function cached(ctx, next) {
  if (!ctx.tool.idempotent) return next();
  const key = `${ctx.tool.name} ${JSON.stringify(ctx.args)}`;
  if (cache.has(key)) return cache.get(key);
  const output = await next(); // the rest of the chain and the body, once
  cache.set(key, output);
  return output;
};

// Times every attempt, and gives it 5 seconds at most (a longer limit than the tool's is ignored).
const timings: number[] = [];
const timed: ExecuteMiddleware = async function timed(ctx, next) {
  const started = performance.now();
  try {
    return await next({ timeoutMs: 5_000 });
  } finally {
    timings.push(performance.now() - started);
  }
};

// What the model sees, whatever a tool returned: no API keys.
const redact: ResultMiddleware = function redact(draft) {
  draft.content = draft.content.replaceAll(/sk-[\w-]+/g, '[redacted]');
};

const getPage = defineTool({
  name: 'get_page',
  description: 'Fetch a page of the docs site',
  input: z.object({ url: z.string() }),
  mode: 'parallel',
  idempotent: true,
  // This tool's own middleware, inside the pipeline's: ctx.args is typed from its schema.
  chains: { execute: [(ctx, next) => (log.push(`get_page ${ctx.args.url}, attempt ${ctx.attempt}`), next())] },
  execute: ({ url }, ctx) => fetchPage(url, ctx.signal),
});

const pipeline = createPipeline({ tools: [getPage], execute: [timed, cached], result: [redact] });
const [first] = await pipeline.run([{ id: 'a', name: 'get_page', args: { url: '/docs' } }]);
const [again] = await pipeline.run([{ id: 'b', name: 'get_page', args: { url: '/docs' } }]);
// first.content and again.content: '<h1>Docs</h1> key=[redacted]'; fetched once, timed twice
// #endregion readme

assert.equal(first!.content, '<h1>Docs</h1> key=[redacted]');
assert.equal(again!.content, '<h1>Docs</h1> key=[redacted]');
assert.equal(first!.value, '<h1>Docs</h1> key=sk-live-4242'); // the host's value: only the model's text was redacted
assert.equal(fetches, 1);
assert.equal(timings.length, 2);
assert.deepEqual(log, ['get_page /docs, attempt 1']); // the cache answered the second call before the tool's chain
console.log('chains: one fetch for two calls, each timed, the key redacted from the content');
