/**
 * `toolstream/bullmq` — a fleet on Redis: durable turns kept in Redis (`redisJournal`), shared by
 * every agent process that reaches it. Needs `ioredis` 5 (an optional peer dependency:
 * `npm install ioredis@5`; the worker fleet needs `bullmq` 6.7 as well).
 *
 * @example
 * ```ts
 * import { createPipeline } from 'toolstream';
 * import { redisJournal } from 'toolstream/bullmq';
 *
 * const pipeline = createPipeline({ tools, journal: redisJournal({ connection: process.env.REDIS_URL! }), approvalSecret });
 * ```
 *
 * @packageDocumentation
 */
export { redisJournal } from './redisJournal.js';
export type { RedisJournal, RedisJournalOptions } from './redisJournal.js';
