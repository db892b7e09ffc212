// A worker fleet on a local Redis: this agent starts two worker processes (examples/fleet/worker.ts),
// limits the `browsers` queue to 2 bodies fleet-wide, and runs 8 page renders through its pipeline
// (concurrency 8) beside a local tool. The workers could run 10 at once; the fleet limit lets 2 run.
//
//   redis-server --port 6379 --save '' &       # or set REDIS_URL to a Redis you have
//   npm run example:fleet
//
// Without a Redis it says what to start and exits 1 within seconds, leaving no worker behind.
import { fork, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { z } from 'zod';
import { createPipeline, defineTool, type ToolCall } from 'toolstream';
import { RemoteToolError, remoteTools, setFleetLimits } from 'toolstream/bullmq';
import { redisConnection, renderPage, type Rendered } from './fleet/contracts.js';

const secret = randomBytes(32).toString('hex'); // shared with the workers: they run only jobs signed with it
const connection = redisConnection();
try {
  await setFleetLimits({ connection, queue: 'browsers', concurrency: 2 }); // at most 2 browsers in the fleet
} catch (error) {
  if (!(error instanceof RemoteToolError) || error.code !== 'redis_unreachable') throw error;
  console.error(`${error.message}\nThis example needs a Redis: start one (redis-server --port 6379 --save '') or set REDIS_URL to yours.`);
  process.exit(1);
}

const workers = [0, 1].map(() =>
  fork(new URL('fleet/worker.ts', import.meta.url), { execArgv: ['--import', 'tsx'], env: { ...process.env, FLEET_SECRET: secret } }),
);
/** Resolves once the worker says it is ready (connected); rejects when it exits first. */
const ready = (worker: ChildProcess) =>
  new Promise<void>((resolve, reject) => {
    worker.once('message', () => resolve());
    worker.once('exit', (code) => reject(new Error(`worker ${worker.pid} exited (${code}) before it was ready`)));
  });
try {
  await Promise.all(workers.map(ready));
} catch (error) {
  console.error(`${(error as Error).message}: see its message above.`);
  for (const worker of workers) worker.kill('SIGTERM');
  await setFleetLimits({ connection, queue: 'browsers', concurrency: null }).catch(() => undefined);
  process.exit(1);
}

const fleet = remoteTools([renderPage], { connection, queue: 'browsers', secret });
const wordCount = defineTool({
  name: 'word_count',
  description: 'Count the words of a text',
  input: z.object({ text: z.string() }),
  mode: 'parallel',
  execute: ({ text }) => text.split(/\s+/).filter(Boolean).length, // cheap: stays in the agent
});
const pipeline = createPipeline({ tools: [...fleet.tools, wordCount], concurrency: 8 });

const calls: ToolCall[] = [
  ...['a', 'b', 'c', 'd', 'e', 'f', 'g', 'h'].map((site, i) => ({ id: `r${i}`, name: 'render_page', args: { url: `https://${site}.example/` } })),
  { id: 'w', name: 'word_count', args: { text: 'bodies run where they belong' } },
];
try {
  const results = await pipeline.run(calls);
  const rendered = results.flatMap((r) => (r.name === 'render_page' && r.status === 'ok' ? [r.value as Rendered] : []));
  const t0 = Math.min(...rendered.map((r) => r.startedAt));
  for (const r of results) {
    const ran = r.name === 'render_page' && r.status === 'ok' ? (r.value as Rendered) : undefined;
    const where = ran === undefined ? 'in the agent' : `on worker ${ran.worker}, ${ran.startedAt - t0}–${ran.endedAt - t0} ms`;
    console.log(`${r.id.padEnd(3)} ${r.name.padEnd(12)} ${r.status.padEnd(4)} ${r.content.padEnd(22)} ${where}`);
  }
  // The most bodies that ran at the same moment, from the workers' own clocks.
  const overlap = Math.max(...rendered.map((a) => rendered.filter((b) => b.startedAt <= a.startedAt && a.startedAt < b.endedAt).length));
  const ranOn = new Set(rendered.map((r) => r.worker)).size;
  console.log(`\n${rendered.length} pages rendered on ${ranOn} worker(s); at most ${overlap} at once (fleet limit 2)`);
} finally {
  await fleet.close();
  await setFleetLimits({ connection, queue: 'browsers', concurrency: null });
  for (const worker of workers) worker.kill('SIGTERM');
}
