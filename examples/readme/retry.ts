// examples/readme/retry.ts
// The README's retry example, run: a flaky idempotent fetch fails twice with a 503 and succeeds on its
// third attempt; a 404 is not retried. The result counts the attempts and its trace holds each error.
import assert from 'node:assert/strict';
import { z } from 'zod';
import { createPipeline, defineTool } from 'toolstream';

class HttpError extends Error {
  constructor(readonly status: number) {
    super(`HTTP ${status}`);
  }
}
const replies = new Map<string, number[]>([['/flaky', [503, 503, 200]], ['/missing', [404, 404]]]);
const keysSeen = new Map<string, Set<string>>(); // what a deduplicating server would see, per path
const get = async (path: string, request: { signal: AbortSignal; headers: { 'Idempotency-Key': string } }) => {
  keysSeen.set(path, (keysSeen.get(path) ?? new Set()).add(request.headers['Idempotency-Key']));
  const status = replies.get(path)!.shift()!;
  if (status !== 200) throw new HttpError(status);
  return `contents of ${path}`;
};

// #region readme
const fetchPage = defineTool({
  name: 'fetch_page',
  description: 'Fetch a page of the docs site',
  input: z.object({ path: z.string() }),
  mode: 'parallel',
  idempotent: true, // a GET: safe to repeat, so it may be retried
  timeoutMs: 10_000, // per attempt
  retry: {
    attempts: 3, // bodies in all, the first included
    backoff: { initialMs: 20, factor: 2, maxMs: 1_000, jitter: 0.2 },
    retryOn: (error) => error.code === 'timeout' || (error.cause instanceof HttpError && error.cause.status >= 500),
  },
  execute: ({ path }, ctx) => get(path, { signal: ctx.signal, headers: { 'Idempotency-Key': ctx.idempotencyKey } }), // one key, every attempt
});

const pipeline = createPipeline({ tools: [fetchPage] });
const [flaky, missing] = await pipeline.run([
  { id: 'a', name: 'fetch_page', args: { path: '/flaky' } },
  { id: 'b', name: 'fetch_page', args: { path: '/missing' } },
]);
// flaky.status 'ok', flaky.attempts 3; missing.status 'error' (HTTP 404), missing.attempts 1
const failedAttempts = flaky!.trace.filter((entry) => entry.event === 'attempt_failed');
// [{ stage: 'execute', event: 'attempt_failed', attempt: 1, error: { code: 'tool_error', … }, delayMs: 16–20 }, …]
// #endregion readme

assert.equal(flaky!.status, 'ok');
assert.equal(flaky!.attempts, 3);
assert.equal(missing!.status, 'error');
assert.equal(missing!.attempts, 1);
assert.deepEqual(failedAttempts.map((e) => e.event === 'attempt_failed' && e.attempt), [1, 2]);
for (const entry of failedAttempts) assert.ok(entry.event === 'attempt_failed' && entry.delayMs <= 40);
assert.equal(keysSeen.get('/flaky')!.size, 1); // three attempts, one idempotency key
assert.notDeepEqual([...keysSeen.get('/flaky')!], [...keysSeen.get('/missing')!]);
console.log('retry: retried the 503s, not the 404, with one idempotency key per call');
