// A worker process of the fleet tests: `node --import tsx workerProcess.ts`, configured by FLEET_WORKER
// (JSON of WorkerConfig). Prints "ready" once its workers take jobs; SIGTERM closes them.
import { createToolWorker } from '../../../src/bullmq/index.js';
import { fleetTools } from './fleetTools.js';

export interface WorkerConfig {
  readonly url: string;
  readonly prefix: string;
  readonly secret: string;
  readonly logDir: string;
  readonly lockMs?: number;
  readonly maxReruns?: number;
  readonly queues: readonly { readonly queue: string; readonly concurrency: number }[];
}

const config = JSON.parse(process.env['FLEET_WORKER']!) as WorkerConfig;
const tools = fleetTools(config.logDir);
const workers = config.queues.map(({ queue, concurrency }) =>
  createToolWorker({
    connection: { url: config.url },
    queue,
    prefix: config.prefix,
    secret: config.secret,
    tools,
    concurrency,
    ...(config.lockMs === undefined ? {} : { lockMs: config.lockMs }),
    ...(config.maxReruns === undefined ? {} : { maxReruns: config.maxReruns }),
  }),
);
await Promise.all(workers.map((worker) => worker.ready()));
process.stdout.write('ready\n');
process.once('SIGTERM', () => void Promise.all(workers.map((worker) => worker.close())).then(() => process.exit(0)));
