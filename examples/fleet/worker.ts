// A worker of the fleet example: runs `render_page` bodies from the `browsers` queue.
//
//   export FLEET_SECRET=$(openssl rand -hex 32)     # the agents' secret: the same on both sides
//   REDIS_URL=redis://127.0.0.1:6379 npx tsx examples/fleet/worker.ts
import { implementTool } from 'toolstream';
import { createToolWorker } from 'toolstream/bullmq';
import { redisConnection, renderPage, type Rendered } from './contracts.js';

const secret = process.env['FLEET_SECRET'];
if (secret === undefined || secret.length < 32) {
  console.error('Set FLEET_SECRET to the secret the agents sign jobs with (32 bytes or more); make one with `openssl rand -hex 32`.');
  process.exit(1);
}

const sleep = (ms: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    const timer = setTimeout(resolve, ms);
    signal.addEventListener('abort', () => (clearTimeout(timer), reject(signal.reason)), { once: true });
  });

const renderPageTool = implementTool(renderPage, async ({ url }, { signal }): Promise<Rendered> => {
  const startedAt = Date.now();
  await sleep(300, signal); // the "browser" at work
  return { url, title: `Title of ${new URL(url).hostname}`, worker: process.pid, startedAt, endedAt: Date.now() };
});

const worker = createToolWorker({
  connection: redisConnection(),
  queue: 'browsers',
  tools: [renderPageTool],
  concurrency: 5, // this process could run 5; the fleet limit allows 2 in all
  secret,
});
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
try {
  await worker.ready(); // connected, and seen by the agents; rejects (naming the address) when Redis is out of reach
} catch (error) {
  console.error(`worker ${process.pid}: ${(error as Error).message}`);
  process.exit(1);
}
console.log(`worker ${process.pid} ready`);
process.send?.('ready');
