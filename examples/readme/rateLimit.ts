// examples/readme/rateLimit.ts
// The README's rate limit example, run: a search API's quota of 2 calls per 100 ms holds, shared by two
// tools, and calls waiting for the quota do not hold up the other tools' calls.
import assert from 'node:assert/strict';
import { z } from 'zod';
import { createPipeline, createRateLimiter, defineTool } from 'toolstream';

const searchApi = async (query: string) => `results for ${query}`;
const readCache = async (key: string) => `cached ${key}`;

// #region readme
// The search API allows 2 calls per 100 ms (per account, in every pipeline of the process).
const searchQuota = createRateLimiter({ max: 2, perMs: 100 });
const query = z.object({ query: z.string() });

const webSearch = defineTool({ name: 'web_search', description: 'Search the web', input: query, mode: 'parallel', rateLimit: searchQuota, execute: ({ query }) => searchApi(query) });
const newsSearch = defineTool({ name: 'news_search', description: 'Search the news', input: query, mode: 'parallel', rateLimit: searchQuota, execute: ({ query }) => searchApi(query) });
// A tool of its own quota, per key: 1 call per second for each user.
const cache = defineTool({
  name: 'cache_read',
  description: 'Read the cache',
  input: z.object({ user: z.string(), key: z.string() }),
  mode: 'parallel',
  rateLimit: { max: 1, perMs: 1000, key: ({ user }) => user },
  execute: ({ key }) => readCache(key),
});

const pipeline = createPipeline({ tools: [webSearch, newsSearch, cache] });
// #endregion readme

const calls = [
  ...['a', 'b', 'c', 'd', 'e'].map((q, i) => ({ id: `s${i}`, name: i % 2 ? 'news_search' : 'web_search', args: { query: q } })),
  { id: 'k1', name: 'cache_read', args: { user: 'ann', key: 'x' } },
  { id: 'k2', name: 'cache_read', args: { user: 'bob', key: 'x' } },
];
const results = await pipeline.run(calls);
assert.deepEqual(results.map((r) => r.status), calls.map(() => 'ok'));
const started = results.map((r) => r.timing.startedAt!);
// Never 3 searches within 100 ms (1 ms of slack for the two clocks); both users' reads at once.
const searches = started.slice(0, 5).sort((a, b) => a - b);
for (let i = 0; i + 2 < searches.length; i++) assert.ok(searches[i + 2]! - searches[i]! >= 99, `searches ${i} and ${i + 2}`);
// (No wall-clock bound: the reads start before the third search, which waits for a token 100 ms on.)
assert.ok(Math.max(started[5]!, started[6]!) < searches[2]!, 'both reads start without waiting for a token');
// The waits show as queue time, never as the body's run time: the last search to start waited about
// 200 ms for its token. (At least 100 ms asserted: the calls are queued in one synchronous burst, which a
// loaded machine can pause for a few ms — once measured 10 ms short of 200.)
const last = results.slice(0, 5).reduce((a, b) => (b.timing.startedAt! > a.timing.startedAt! ? b : a));
assert.ok(last.timing.durations.queue >= 100, `queued ${last.timing.durations.queue} ms`);
assert.ok(last.timing.durations.execute < last.timing.durations.queue, 'the wait is not in the run time');
console.log('rateLimit: quota held');
