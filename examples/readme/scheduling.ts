// examples/readme/scheduling.ts
// The README's scheduling example, run: a shared browser limiter and a per-host clone limit hold, and a
// call waiting for its limit does not hold up the parallel calls behind it.
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { z } from 'zod';
import { createLimiter, createPipeline, defineTool } from 'toolstream';

let browsersBusy = 0;
let mostBrowsers = 0;
const page = async () => {
  mostBrowsers = Math.max(mostBrowsers, ++browsersBusy);
  await sleep(20);
  browsersBusy--;
  return 'done';
};
const hostsBusy = new Map<string, number>();
const cloneRepo = async (url: string) => {
  const host = new URL(url).host;
  assert.equal(hostsBusy.get(host) ?? 0, 0, 'one clone per host at a time');
  hostsBusy.set(host, 1);
  await sleep(20);
  hostsBusy.set(host, 0);
  return 'cloned';
};

// #region readme
// One browser pool for two tools, in every pipeline of the process: at most 2 pages at once.
const browsers = createLimiter({ max: 2 });
const url = z.object({ url: z.url() });

const screenshot = defineTool({ name: 'screenshot', description: 'Screenshot a page', input: url, mode: 'parallel', limit: browsers, execute: page });
const scrape = defineTool({ name: 'scrape', description: 'Scrape a page', input: url, mode: 'parallel', limit: browsers, execute: page });
// At most one clone per host at a time; clones of different hosts run side by side.
const clone = defineTool({
  name: 'git_clone',
  description: 'Clone a repository',
  input: url,
  mode: 'parallel',
  limit: { max: 1, key: ({ url }) => new URL(url).host },
  execute: ({ url }) => cloneRepo(url),
});

const pipeline = createPipeline({ tools: [screenshot, scrape, clone], concurrency: 8 });
// #endregion readme

const calls = [
  ...['a', 'b', 'c', 'd'].map((p, i) => ({ id: `s${i}`, name: i % 2 ? 'scrape' : 'screenshot', args: { url: `https://example.com/${p}` } })),
  { id: 'g1', name: 'git_clone', args: { url: 'https://github.com/x/one' } },
  { id: 'g2', name: 'git_clone', args: { url: 'https://github.com/x/two' } },
  { id: 'g3', name: 'git_clone', args: { url: 'https://gitlab.com/x/three' } },
];
const results = await pipeline.run(calls);
assert.deepEqual(results.map((r) => r.status), calls.map(() => 'ok'));
assert.equal(mostBrowsers, 2);
assert.equal(browsers.active(), 0);
// g3 (another host) did not wait behind g2, which waited for g1's permit: told by order, not by a
// number of milliseconds (a busy machine stretches those).
const [g1, g2, g3] = results.slice(4).map((r) => r.timing);
assert.ok(g2!.startedAt! >= g1!.endedAt! && g3!.startedAt! < g1!.endedAt!);
console.log('scheduling: limits held');
