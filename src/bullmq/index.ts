/**
 * `toolstream/bullmq` — tool bodies on a worker fleet through BullMQ on Redis, and durable turns kept
 * in Redis. The agent's pipeline keeps every stage; only the body runs as a signed job on a worker;
 * `redisJournal` lets any agent process resume a turn. Needs `bullmq` 6.7+ and `ioredis` 5 (optional
 * peer dependencies: `npm install bullmq ioredis`; `redisJournal` alone needs only `ioredis`).
 *
 * @example
 * ```ts
 * // agent
 * const fleet = remoteTools([renderPage], { connection, queue: 'browsers', secret });
 * const pipeline = createPipeline({ tools: fleet.tools, journal: redisJournal({ connection }), approvalSecret });
 * // worker process
 * createToolWorker({ connection, queue: 'browsers', secret, tools: [implementTool(renderPage, browse)] });
 * ```
 *
 * @packageDocumentation
 */
export { remoteTools } from './remoteTools.js';
export type { RemoteTools, RemoteToolsOptions } from './remoteTools.js';
export { warnFleet } from './fleetWarning.js';
export type { FleetWarning } from './fleetWarning.js';
export { createToolWorker } from './toolWorker.js';
export type { ToolWorker, ToolWorkerOptions } from './toolWorker.js';
export { setFleetLimits } from './fleetLimits.js';
export type { FleetLimitsOptions } from './fleetLimits.js';
export { RemoteToolError } from './remoteToolError.js';
export type { RemoteToolErrorCode, RemoteToolErrorPlace } from './remoteToolError.js';
export { redisJournal } from './redisJournal.js';
export type { RedisJournal, RedisJournalOptions } from './redisJournal.js';
export type { JobEnd, JobObserver, JobWatch, ObservedJob, TraceCarrier } from '../types/traceContext.js';
