// A worker process of the cluster scenarios: `node --import tsx scenarios.worker.ts`, configured by
// CLUSTER_WORKER (JSON of ClusterWorkerConfig). Its workers share one ioredis Cluster of its own, made
// as a user makes it (the fleet duplicates it for each role and never closes it: this process does, last).
// Prints "ready" once its workers take jobs; SIGTERM closes them.
import { Cluster } from 'ioredis';
import { createToolWorker } from '../../../src/bullmq/index.js';
import { fleetTools } from '../support/fleetTools.js';
import { CLUSTER_OPTIONS, type ClusterWorkerConfig } from './scenarios.support.js';

const config = JSON.parse(process.env['CLUSTER_WORKER']!) as ClusterWorkerConfig;
const cluster = new Cluster(config.nodes.map((node) => ({ ...node })), CLUSTER_OPTIONS);
const tools = fleetTools(config.logDir);
const workers = config.queues.map(({ queue, concurrency }) =>
  createToolWorker({
    connection: cluster,
    queue,
    prefix: config.prefix,
    secret: config.secret,
    tools,
    concurrency,
    ...(config.lockMs === undefined ? {} : { lockMs: config.lockMs }),
  }),
);
await Promise.all(workers.map((worker) => worker.ready()));
process.stdout.write('ready\n');
process.once('SIGTERM', () => void Promise.all(workers.map((worker) => worker.close())).then(() => cluster.quit()).then(() => process.exit(0)));
