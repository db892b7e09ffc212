import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

/**
 * The Lua scripts of `redisJournal`. Redis runs a script as one step — no other client's command runs
 * in between — so each is a compare-and-set across every process that shares the Redis. Each touches
 * the keys of one turn only (passed in KEYS, as Redis requires).
 */
interface Script {
  readonly source: string;
  readonly sha: string;
}

const script = (source: string): Script => ({ source, sha: createHash('sha1').update(source).digest('hex') });

/**
 * KEYS[1] the turn's log; ARGV[1] the append's id and a newline, ARGV[2] its entries as one JSON array.
 * Pushes `id \n json` unless the log's last element is that same append: ioredis resends a command
 * whose reply a dropped connection lost (`autoResendUnfulfilledCommands`), and an append Redis had
 * already run must not be kept twice. The last element is enough: a turn's appends come one after the
 * other from the process holding its lease, so a resent one is always the latest.
 */
export const APPEND = script(`
local last = redis.call('LINDEX', KEYS[1], -1)
if last and string.sub(last, 1, #ARGV[1]) == ARGV[1] then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1] .. ARGV[2])
return 1
`);

/**
 * KEYS[1] the turn's lease (a hash: owner, until); ARGV owner, now, until (epoch ms, the caller's clock).
 * Takes or renews the lease unless another owner holds one that has not expired.
 */
export const LEASE = script(`
local held = redis.call('HMGET', KEYS[1], 'owner', 'until')
if held[1] and held[1] ~= ARGV[1] and tonumber(held[2]) > tonumber(ARGV[2]) then return 0 end
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'until', ARGV[3])
return 1
`);

/** KEYS[1] the turn's lease; ARGV[1] the owner. Deletes the lease only if that owner holds it. */
export const RELEASE = script(`
if redis.call('HGET', KEYS[1], 'owner') == ARGV[1] then redis.call('DEL', KEYS[1]) end
return 1
`);

/**
 * Runs a script by its digest (EVALSHA), loading it (EVAL) the first time a Redis has not seen it —
 * after a restart, or on a server that flushed its script cache.
 */
export async function runScript(redis: Redis, { source, sha }: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  try {
    return await redis.evalsha(sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return redis.eval(source, keys.length, ...keys, ...args);
  }
}
