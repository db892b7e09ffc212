// A worker of the fleet example: runs `render_page` bodies from the `browsers` queue.
//
//   REDIS_URL=redis://127.0.0.1:6379 FLEET_SECRET=… npx tsx examples/fleet/worker.ts
import { implementTool } from '../../src/index.js';
import { createToolWorker } from '../../src/bullmq/index.js';
import { redisConnection, renderPage, type Rendered } from './contracts.js';

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
  secret: process.env['FLEET_SECRET'] ?? '',
});
console.log(`worker ${process.pid} ready`);
process.send?.('ready');
process.once('SIGTERM', () => void worker.close().then(() => process.exit(0)));
