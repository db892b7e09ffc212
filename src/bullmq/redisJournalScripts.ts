import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

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

/** Lua: whether the lease hash KEYS[n] is (owner, epoch) = ARGV[o], ARGV[o + 1] — a hash of version 1 has epoch 0. */
const isCurrent = (n: number, o: number) =>
  `(function() local held = redis.call('HMGET', KEYS[${n}], 'owner', 'epoch') return held[1] == ARGV[${o}] and tonumber(held[2] or '0') == tonumber(ARGV[${o + 1}]) end)()`;

/**
 * KEYS[1] the log appended to (the turn's, or a program's), KEYS[2] the turn's lease, KEYS[3] the turn's
 * set of programs; ARGV[1] the append's id and a newline, ARGV[2] its entries as one JSON array, ARGV[3]
 * and ARGV[4] the lease's owner and epoch, ARGV[5] the program's call id ('' for the turn's own log).
 * Returns -1, appending nothing, unless the lease is the turn's current one (the fence). Pushes
 * `id \n json` unless the log's last element is that same append: ioredis resends a command whose reply
 * a dropped connection lost (`autoResendUnfulfilledCommands`), and an append Redis had already run must
 * not be kept twice (0). The last element is enough: a turn's appends come one after the other from the
 * process holding its lease, so a resent one is always the latest. A program's log is listed in the
 * turn's set, for `prune`.
 */
export const APPEND = script(`
if not ${isCurrent(2, 3)} then return -1 end
local last = redis.call('LINDEX', KEYS[1], -1)
if last and string.sub(last, 1, #ARGV[1]) == ARGV[1] then return 0 end
redis.call('RPUSH', KEYS[1], ARGV[1] .. ARGV[2])
if ARGV[5] ~= '' then redis.call('SADD', KEYS[3], ARGV[5]) end
return 1
`);

/**
 * KEYS[1] the turn's lease (a hash: owner, until, epoch); ARGV owner, now, until (epoch ms, the caller's
 * clock). Takes the lease unless another owner holds one that has not expired (-1): the epoch grows by
 * one (from 0 for a turn never leased, or leased by toolstream 0.1), and is returned.
 */
export const ACQUIRE = script(`
local held = redis.call('HMGET', KEYS[1], 'owner', 'until', 'epoch')
if held[1] and held[1] ~= '' and held[1] ~= ARGV[1] and tonumber(held[2]) > tonumber(ARGV[2]) then return -1 end
local epoch = tonumber(held[3] or '0') + 1
redis.call('HSET', KEYS[1], 'owner', ARGV[1], 'until', ARGV[3], 'epoch', epoch)
return epoch
`);

/** KEYS[1] the turn's lease; ARGV owner, epoch, until. Extends the lease (1) only while it is that owner's at that epoch (else 0). */
export const RENEW = script(`
if not ${isCurrent(1, 1)} then return 0 end
redis.call('HSET', KEYS[1], 'until', ARGV[3])
return 1
`);

/** KEYS[1] the turn's lease; ARGV owner, epoch. Gives the lease up if it is that owner's at that epoch; the epoch stays. */
export const RELEASE = script(`
if ${isCurrent(1, 1)} then redis.call('HSET', KEYS[1], 'owner', '', 'until', 0) end
return 1
`);

/**
 * KEYS: the turn's log, lease, nonces and programs set, then its programs' logs; ARGV finishedBefore,
 * now, and 'keep' or 'expired' (turns that ended with calls suspended). Deletes every key given (1)
 * when the log's last append ends with an `ended` entry that `prune` may remove (as `mayPrune` in
 * src/durable/pruning.ts decides) and the lease is not live; 0 when the turn is not ended (gone, or
 * running again: unlist it), -2 when it must stay listed (not old enough, tokens alive, leased).
 */
export const PRUNE = script(`
local last = redis.call('LINDEX', KEYS[1], -1)
if not last then return 0 end
local batch = cjson.decode(string.sub(last, string.find(last, '\\n', 1, true) + 1))
local ended = batch[#batch]
if type(ended) ~= 'table' or ended.kind ~= 'ended' then return 0 end
local now = tonumber(ARGV[2])
if not (ended.at < tonumber(ARGV[1])) then return -2 end
if ended.suspendedUntil ~= nil and not (ARGV[3] == 'expired' and ended.suspendedUntil <= now) then return -2 end
local held = redis.call('HMGET', KEYS[2], 'owner', 'until')
if held[1] and held[1] ~= '' and tonumber(held[2]) > now then return -2 end
redis.call('DEL', unpack(KEYS))
return 1
`);

/**
 * Runs a script by its digest (EVALSHA), loading it (EVAL) the first time a Redis has not seen it —
 * after a restart, or on a server that flushed its script cache.
 */
export async function runScript(redis: Redis | Cluster, { source, sha }: Script, keys: readonly string[], args: readonly (string | number)[]): Promise<unknown> {
  try {
    return await redis.evalsha(sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!(error instanceof Error) || !error.message.startsWith('NOSCRIPT')) throw error;
    return redis.eval(source, keys.length, ...keys, ...args);
  }
}
