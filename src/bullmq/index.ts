/**
 * `toolstream/bullmq` — tool bodies on a worker fleet through BullMQ on Redis. The agent's pipeline
 * keeps every stage; only the body runs as a signed job on a worker. Needs `bullmq` 6.7+ and `ioredis` 5
 * (optional peer dependencies: `npm install bullmq ioredis`).
 *
 * @example
 * ```ts
 * // agent
 * const fleet = remoteTools([renderPage], { connection, queue: 'browsers', secret });
 * const pipeline = createPipeline({ tools: fleet.tools });
 * // worker process
 * createToolWorker({ connection, queue: 'browsers', secret, tools: [implementTool(renderPage, browse)] });
 * ```
 *
 * @packageDocumentation
 */
export { remoteTools } from './remoteTools.js';
export type { RemoteTools, RemoteToolsOptions } from './remoteTools.js';
export { createToolWorker } from './toolWorker.js';
export type { ToolWorker, ToolWorkerOptions } from './toolWorker.js';
export { setFleetLimits } from './fleetLimits.js';
export type { FleetLimitsOptions } from './fleetLimits.js';
export { RemoteToolError } from './remoteToolError.js';
export type { RemoteToolErrorCode } from './remoteToolError.js';
