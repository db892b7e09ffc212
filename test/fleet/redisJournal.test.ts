/**
 * `redisJournal` on a real Redis: the contract every store passes, and what only a store shared over
 * a network has to get right — two clients racing on a lease or a nonce, a turn suspended through one
 * connection and resumed through another, prefixes kept apart, a close that leaves no handle, and an
 * append that ioredis resends after a dropped connection, kept once.
 */
import { randomUUID } from 'node:crypto';
import { connect, createServer, type Server, type Socket } from 'node:net';
import { Redis } from 'ioredis';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { redisJournal, type RedisJournal } from '../../src/bullmq/index.js';
import { askTools, ConfigError, createPipeline, defineTool, memoryJournal, suspendApprovals, type JournalEntry, type JournalStore, type ToolCall } from '../../src/index.js';
import { journalStoreContract } from '../durable/journalStoreContract.js';
import { REDIS_MISSING, redisAvailable, requireRedis, startRedis, type TestRedis } from '../support/redis.js';

requireRedis();
const available = redisAvailable();
const SECRET = 'the secret of the redisJournal tests, 32+ bytes';
const RACES = Number(process.env.RACE_ROUNDS ?? 10) * 50;

/** A prefix no other test uses, and the removal of every key under it. */
const freshPrefix = () => `test:${randomUUID()}`;
async function removeKeys(url: string, prefix: string): Promise<void> {
  const client = new Redis(url);
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    if (keys.length > 0) await client.del(...keys);
    cursor = next;
  } while (cursor !== '0');
  await client.quit();
}

let redis: TestRedis | undefined;
const prefixes: string[] = [];
const url = async (): Promise<string> => (redis ??= await startRedis()).url;
const journalOn = async (prefix = freshPrefix()): Promise<RedisJournal> => {
  prefixes.push(prefix);
  return redisJournal({ connection: await url(), prefix });
};

describe.skipIf(!available)(`redisJournal (${available ? 'a real Redis' : REDIS_MISSING})`, () => {
  afterAll(async () => {
    if (redis === undefined) return;
    for (const prefix of prefixes) await removeKeys(redis.url, prefix);
    await redis.stop();
  });

  journalStoreContract('redisJournal', async () => {
    const prefix = freshPrefix();
    const store = await journalOn(prefix);
    const connection = await url();
    return { store, reopen: () => redisJournal({ connection, prefix }) };
  }, { durable: true });

  it('checks its options eagerly', () => {
    const bad: [unknown, string][] = [
      [undefined, 'options'],
      [{}, 'connection'],
      [{ connection: 6379 }, 'connection'],
      [{ connection: 'localhost:6379' }, 'connection'],
      [{ connection: 'http://localhost:6379' }, 'connection'],
      [{ connection: { port: 0 } }, 'connection.port'],
      [{ connection: { port: '6379' } }, 'connection.port'],
      [{ connection: { host: '' } }, 'connection.host'],
      [{ connection: 'redis://127.0.0.1:1', prefix: '' }, 'prefix'],
      [{ connection: 'redis://127.0.0.1:1', prefix: 'a{b' }, 'prefix'],
      [{ connection: 'redis://127.0.0.1:1', prefix: 'a{b}{c}' }, 'prefix'],
      [{ connection: 'redis://127.0.0.1:1', prefix: 7 }, 'prefix'],
    ];
    for (const [options, option] of bad) {
      expect(() => redisJournal(options as never), option).toThrow(ConfigError);
      expect(() => redisJournal(options as never)).toThrow(expect.objectContaining({ where: 'redisJournal', option }));
    }
  });

  it('two clients racing on the same leases and nonces: exactly one wins each', async () => {
    const prefix = freshPrefix();
    const [a, b] = [await journalOn(prefix), await journalOn(prefix)];
    const wins = { a: 0, b: 0 };
    for (let i = 0; i < RACES; i++) {
      // Who sends first alternates; the two connections reach Redis in either order.
      const [first, second] = i % 2 === 0 ? [a, b] : [b, a];
      const nonces = await Promise.all([first.consume('race', `n${i}`), second.consume('race', `n${i}`)]);
      const leases = await Promise.all([first.acquire(`race ${i}`, 'first', 60_000), second.acquire(`race ${i}`, 'second', 60_000)]);
      expect(nonces.filter(Boolean), `nonce ${i}`).toHaveLength(1);
      expect(leases.filter((epoch) => epoch !== undefined), `lease ${i}`).toEqual([1]);
      // Then the loser takes it over once the winner lets go — and only then, at the next epoch.
      const won = leases[0] !== undefined;
      const loser = won ? second : first;
      expect(await loser.acquire(`race ${i}`, won ? 'second' : 'first', 60_000)).toBeUndefined();
      await (won ? first : second).release({ turn: `race ${i}`, owner: won ? 'first' : 'second', epoch: 1 });
      expect(await loser.acquire(`race ${i}`, won ? 'second' : 'first', 60_000)).toBe(2);
      if (nonces[0] === (first === a)) wins.a++;
      else wins.b++;
    }
    await Promise.all([a.close(), b.close()]);
    expect(wins.a + wins.b).toBe(RACES);
  });

  it('a turn suspended by one pipeline is resumed by another, on a connection of its own; the body runs once', async () => {
    const prefix = freshPrefix();
    const runs: string[] = [];
    const read = defineTool({ name: 'read', description: 'r', input: z.object({ path: z.string() }), mode: 'parallel', execute: ({ path }) => (runs.push(`read ${path}`), `text of ${path}`) });
    const write = defineTool({ name: 'write', description: 'w', input: z.object({ path: z.string() }), execute: ({ path }) => (runs.push(`write ${path}`), `wrote ${path}`) });
    const pipelineOf = (journal: JournalStore) => createPipeline({ tools: [read, write], journal, approvalSecret: SECRET, pre: [askTools(['write'])], approve: suspendApprovals() });
    const calls: ToolCall[] = [
      { id: 'r1', name: 'read', args: { path: 'a' } },
      { id: 'w1', name: 'write', args: { path: 'b' } },
      { id: 'r2', name: 'read', args: { path: 'c' } },
    ];
    const outline = (results: readonly { id: string; status: string; content: string }[]) => results.map((r) => [r.id, r.status, r.content]);

    const here = await journalOn(prefix);
    const first = await pipelineOf(here).run(calls, { turn: 'conv/1' });
    expect(first.map((r) => r.status)).toEqual(['ok', 'suspended', 'suspended']);
    await here.close();

    // "Another process": its own client, made from options this time.
    const { port, hostname } = new URL(await url());
    const there = redisJournal({ connection: { host: hostname, port: Number(port) }, prefix });
    const later = pipelineOf(there);
    const [approval] = await later.pendingApprovals('conv/1');
    expect(approval).toMatchObject({ callId: 'w1', tool: 'write', args: { path: 'b' } });
    const resumed = await later.resume('conv/1', { answers: [{ token: approval!.token, answer: 'allowed-once' }] });
    expect(outline(resumed)).toEqual([['r1', 'ok', 'text of a'], ['w1', 'ok', 'wrote b'], ['r2', 'ok', 'text of c']]);
    expect(runs).toEqual(['read a', 'write b', 'read c']);
    // The token answered once: used again it is refused; a plain resume replays, running nothing.
    await expect(later.resume('conv/1', { answers: [{ token: approval!.token, answer: 'allowed-once' }] })).rejects.toMatchObject({ code: 'token_used' });
    expect(outline(await later.resume('conv/1'))).toEqual(outline(resumed));
    expect(runs).toHaveLength(3);
    await there.close();
  });

  it('keys written by toolstream 0.1 still resume: a suspended turn is answered, its lease (no epoch) taken at epoch 1, a program\'s old journal read first', async () => {
    const prefix = freshPrefix();
    prefixes.push(prefix);
    let ran = 0;
    const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => (ran++, 'wrote') });
    const pipelineOn = (journal: JournalStore) => createPipeline({ tools: [write], journal, approvalSecret: SECRET, pre: [askTools(['write'])], approve: suspendApprovals() });
    const scratch = memoryJournal();
    await pipelineOn(scratch).run([{ id: 'w', name: 'write', args: {} }], { turn: 'old' });
    const entries = (await scratch.read('old')).filter((entry) => entry.kind !== 'ended'); // 0.1 wrote no `ended`
    const client = new Redis(await url());
    await client.rpush(`${prefix}:{old}:log`, `a0.0\n${JSON.stringify(entries)}`);
    await client.hset(`${prefix}:{old}:lease`, 'owner', 'a process of 0.1', 'until', Date.now() - 1);
    const oldProgram: JournalEntry = { kind: 'started', index: 0, at: 1 };
    await client.rpush(`${prefix}:{old\u0000call_9}:log`, `a0.1\n${JSON.stringify([oldProgram])}`);

    const journal = await journalOn(prefix);
    const pipeline = pipelineOn(journal);
    const [approval] = await pipeline.pendingApprovals('old');
    expect(await pipeline.resume('old', { answers: [{ token: approval!.token, answer: 'allowed-once' }] })).toMatchObject([{ status: 'ok', content: 'wrote' }]);
    expect(ran).toBe(1);
    expect(await client.hget(`${prefix}:{old}:lease`, 'epoch')).toBe('1');
    const lease = { turn: 'old', owner: 'me', epoch: (await journal.acquire('old', 'me', 60_000))! };
    const newer: JournalEntry = { kind: 'started', index: 1, at: 2 };
    expect(await journal.append('old\u0000call_9', [newer], lease)).toBe(true);
    expect(await journal.read('old\u0000call_9')).toEqual([oldProgram, newer]);
    await client.quit();
    await journal.close();
  });

  it('journals of different prefixes on one Redis keep apart; every key is under its prefix', async () => {
    const [p, q] = [freshPrefix(), freshPrefix()];
    const [one, other] = [await journalOn(p), await journalOn(q)];
    const entry = (index: number): JournalEntry => ({ kind: 'started', index, at: index });
    expect(await one.acquire('turn', 'a', 60_000)).toBe(1);
    expect(await other.acquire('turn', 'b', 60_000)).toBe(1);
    await one.append('turn', [entry(1)], { turn: 'turn', owner: 'a', epoch: 1 });
    await other.append('turn', [entry(2)], { turn: 'turn', owner: 'b', epoch: 1 });
    expect(await one.read('turn')).toEqual([entry(1)]);
    expect(await other.read('turn')).toEqual([entry(2)]);
    expect(await one.consume('turn', 'n')).toBe(true);
    expect(await other.consume('turn', 'n')).toBe(true);
    const client = new Redis(await url());
    expect((await client.keys(`${p}:*`)).sort()).toEqual([`${p}:{turn}:lease`, `${p}:{turn}:log`, `${p}:{turn}:nonces`]);
    expect(await client.keys(`${q}:*`)).toHaveLength(3);
    await client.quit();
    await Promise.all([one.close(), other.close()]);
  });

  it('close() quits the client it made, after the replies it waits for, and leaves no handle; a client it was given stays open', async () => {
    const sockets = () => process.getActiveResourcesInfo().filter((kind) => kind === 'TCPSocketWrap').length;
    /** The count once it stops changing (a QUIT resolves before its socket closes), or once it is `expected`. */
    const settled = async (expected?: number) => {
      for (let i = 0, last = -1; i < 100; i++) {
        const now = sockets();
        if (now === expected || (expected === undefined && now === last)) return now;
        last = now;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      return sockets();
    };
    const before = await settled();
    const journal = await journalOn();
    await journal.read('warm'); // connected
    expect(sockets()).toBe(before + 1);
    const epoch = (await journal.acquire('closing', 'me', 60_000))!;
    const appended = journal.append('closing', [{ kind: 'started', index: 0, at: 1 }], { turn: 'closing', owner: 'me', epoch });
    await journal.close();
    await appended; // QUIT came after it: it was answered
    await journal.close(); // again: nothing more to do
    expect(await settled(before)).toBe(before);
    await expect(journal.read('closing')).rejects.toThrow(/closed/i);

    const client = new Redis(await url());
    const given = redisJournal({ connection: client, prefix: journal.prefix });
    expect(await given.read('closing')).toEqual([{ kind: 'started', index: 0, at: 1 }]);
    await given.close();
    expect(await client.ping()).toBe('PONG');
    await client.quit();
  });

  describe('an append whose reply a dropped connection lost', () => {
    let proxy: Server;
    let port = 0;
    /** Set to drop the connection on the next reply from Redis, before the client gets it. */
    let dropNextReply = false;
    let drops = 0;
    const open = new Set<Socket>();

    beforeAll(async () => {
      const target = new URL(await url());
      // A TCP proxy between the client and Redis, which can lose one reply: Redis has run the command,
      // the client never hears so.
      proxy = createServer((client) => {
        const upstream = connect(Number(target.port), target.hostname);
        for (const socket of [client, upstream]) {
          open.add(socket);
          socket.on('close', () => open.delete(socket));
          socket.on('error', () => undefined);
        }
        client.pipe(upstream);
        upstream.on('data', (chunk: Buffer) => {
          if (dropNextReply) {
            dropNextReply = false;
            drops++;
            client.destroy();
            upstream.destroy();
          } else client.write(chunk);
        });
        client.on('close', () => upstream.destroy());
        upstream.on('close', () => client.destroy());
      });
      await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
      port = (proxy.address() as { port: number }).port;
    });
    afterAll(async () => {
      for (const socket of open) socket.destroy();
      await new Promise((resolve) => proxy.close(resolve));
    });

    it('is resent by ioredis on reconnecting, and kept once', async () => {
      const prefix = freshPrefix();
      prefixes.push(prefix);
      const journal = redisJournal({ connection: `redis://127.0.0.1:${port}`, prefix });
      const direct = await journalOn(prefix);
      const lease = { turn: 'resent', owner: 'me', epoch: (await direct.acquire('resent', 'me', 60_000))! };
      for (let i = 0; i < 5; i++) {
        await journal.read('resent'); // connected, nothing outstanding
        dropNextReply = true;
        expect(await journal.append('resent', [{ kind: 'started', index: i, at: i }], lease)).toBe(true);
        expect(drops).toBe(i + 1);
      }
      expect(await direct.read('resent')).toEqual(Array.from({ length: 5 }, (_, i) => ({ kind: 'started', index: i, at: i })));
      await Promise.all([journal.close(), direct.close()]);
    });
  });
});
