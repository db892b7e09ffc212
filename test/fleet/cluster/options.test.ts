/**
 * A Redis Cluster as the connection (issue 29), checked before anything connects: a `Cluster` is a
 * connection every fleet entry point and `redisJournal` accept (by type and at run time); a prefix
 * whose keys would spread over slots is a `ConfigError` at creation that says what to use; a client
 * that is neither a `Redis` nor a `Cluster` is refused rather than read as options. Needs no Redis: the
 * `Cluster`s here are lazy and never connect.
 */
import { Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, expectTypeOf, it } from 'vitest';
import { createToolWorker, redisJournal, remoteTools, setFleetLimits, type FleetLimitsOptions, type RedisJournalOptions, type RemoteToolsOptions, type ToolWorkerOptions } from '../../../src/bullmq/index.js';
import { ConfigError } from '../../../src/index.js';
import { echo } from '../support/contracts.js';
import { SECRET } from '../support/fleet.js';

const lazy: Cluster[] = [];
const cluster = (): Cluster => {
  const made = new Cluster([{ host: '127.0.0.1', port: 1 }], { lazyConnect: true });
  lazy.push(made);
  return made;
};
afterAll(() => lazy.forEach((made) => made.disconnect()));

/** What a creation threw: `where option`, or 'accepted' (then the object is closed at once). */
async function outcome(make: () => { close(): Promise<void> } | Promise<void>): Promise<string> {
  try {
    const made = make();
    if (made instanceof Promise) await made.catch((error: unknown) => { if (error instanceof ConfigError) throw error; });
    else await made.close();
    return 'accepted';
  } catch (error) {
    expect(error).toBeInstanceOf(ConfigError);
    return `${(error as ConfigError).where} ${(error as ConfigError).option}`;
  }
}

describe('a Redis Cluster as the connection: checked at creation', () => {
  it('every entry point takes a Cluster by type', () => {
    expectTypeOf<Cluster>().toExtend<RemoteToolsOptions['connection']>();
    expectTypeOf<Cluster>().toExtend<ToolWorkerOptions['connection']>();
    expectTypeOf<Cluster>().toExtend<FleetLimitsOptions['connection']>();
    expectTypeOf<Cluster>().toExtend<RedisJournalOptions['connection']>();
    expectTypeOf<Redis>().toExtend<RedisJournalOptions['connection']>();
  });

  it('a prefix without a hash tag is a ConfigError saying what to use, for the agent, the worker and setFleetLimits', async () => {
    const connection = cluster();
    const base = { connection, secret: SECRET, connectTimeoutMs: 100 };
    expect(await outcome(() => remoteTools([echo], { ...base, queue: 'q' }))).toBe('remoteTools prefix');
    expect(await outcome(() => createToolWorker({ ...base, queue: 'q', tools: [] }))).toBe('createToolWorker prefix');
    expect(await outcome(() => setFleetLimits({ connection, queue: 'q', concurrency: 1 }))).toBe('setFleetLimits prefix');
    expect(() => remoteTools([echo], { ...base, queue: 'q', prefix: 'fleet' })).toThrow("prefix: '{fleet}'");
    // One queue of several without a tag is enough to refuse: its keys would spread.
    expect(await outcome(() => remoteTools([echo], { ...base, queue: (c) => (c.name === 'echo' ? 'plain' : '{x}') }))).toBe('remoteTools prefix');
    // An empty tag hashes the whole key; a brace left open is closed later in some keys and not others.
    expect(await outcome(() => remoteTools([echo], { ...base, queue: 'q', prefix: '{}fleet' }))).toBe('remoteTools prefix');
    expect(await outcome(() => remoteTools([echo], { ...base, queue: 'q', prefix: '{fleet' }))).toBe('remoteTools prefix');
  });

  it('a hash tag in the prefix, or in each queue name, is accepted; on a single Redis none is needed', async () => {
    const base = { secret: SECRET, connectTimeoutMs: 100, onWarning: () => undefined };
    expect(await outcome(() => remoteTools([echo], { ...base, connection: cluster(), queue: 'q', prefix: '{toolstream}' }))).toBe('accepted');
    expect(await outcome(() => remoteTools([echo], { ...base, connection: cluster(), queue: 'q', prefix: 'app-{fleet}' }))).toBe('accepted');
    expect(await outcome(() => remoteTools([echo], { ...base, connection: cluster(), queue: '{browsers}' }))).toBe('accepted');
    expect(await outcome(() => createToolWorker({ ...base, connection: cluster(), queue: '{browsers}', tools: [] }))).toBe('accepted');
    expect(await outcome(() => remoteTools([echo], { ...base, connection: { host: '127.0.0.1', port: 1 }, queue: 'q' }))).toBe('accepted');
  });

  it('a client that is neither an ioredis Redis nor a Cluster is refused, not read as options (which would mean localhost:6379)', async () => {
    const notIoredis = { connect: () => undefined, duplicate: () => undefined, isOpen: false };
    expect(await outcome(() => remoteTools([echo], { connection: notIoredis, queue: 'q', secret: SECRET }))).toBe('remoteTools connection');
    expect(await outcome(() => createToolWorker({ connection: notIoredis, queue: 'q', secret: SECRET, tools: [] }))).toBe('createToolWorker connection');
  });

  it('redisJournal takes a Cluster; its prefix may carry one hash tag, and no other brace', async () => {
    const connection = cluster();
    for (const prefix of ['journal', '{journal}', 'app:{journal}:x']) await redisJournal({ connection, prefix }).close();
    for (const prefix of ['{}', '{a}{b}', 'a{b', 'a}b', '{a{b}}']) {
      expect(() => redisJournal({ connection, prefix }), prefix).toThrow(ConfigError);
    }
  });
});
