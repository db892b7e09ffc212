/**
 * A worker process of the chaos suite's phase 2, bundled once and run with plain node
 * (`chaosProcesses.ts`): `node child.js <config JSON>` ({@link WorkerConfig}) runs the chaos tools'
 * bodies (`workerTools`, logging to `logDir`) for the jobs of one queue, prints `{"ready":true}` once it
 * takes jobs, and exits when its stdin closes: the test is gone.
 */
import { createInterface } from 'node:readline';
import { createToolWorker } from '../../src/bullmq/index.js';
import { FLEET_SECRET, LOCK_MS, workerTools } from './chaosTools.js';

export interface WorkerConfig {
  readonly url: string;
  readonly prefix: string;
  readonly queue: string;
  readonly logDir: string;
  readonly concurrency: number;
}

const config = JSON.parse(process.argv[2]!) as WorkerConfig;
const worker = createToolWorker({
  connection: { url: config.url },
  queue: config.queue,
  prefix: config.prefix,
  secret: FLEET_SECRET,
  tools: workerTools(config.logDir),
  concurrency: config.concurrency,
  lockMs: LOCK_MS,
});
await worker.ready();
createInterface({ input: process.stdin }).on('close', () => process.exit(0));
process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
