import { randomUUID } from 'node:crypto';
import { beforeAll, describe, expect, it } from 'vitest';
import { remoteTools, RemoteToolError, type RemoteTools } from '../../src/bullmq/index.js';
import { signPayload, type UnsignedPayload } from '../../src/bullmq/jobPayload.js';
import { createPipeline } from '../../src/index.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { fails, nowhere, sleep, strict } from './support/contracts.js';
import { SECRET, useFleet, useQueueView, WITH_REDIS } from './support/fleet.js';

requireRedis();

describe.skipIf(!redisAvailable())(`a worker refuses what it must not run (${WITH_REDIS})`, () => {
  const name = `q-${randomUUID()}`;
  const suite = useFleet({ workers: 1, queues: [{ queue: name, concurrency: 4 }] });
  const view = useQueueView(suite, name);
  let remote: RemoteTools;
  beforeAll(() => {
    remote = suite.remote([strict, nowhere, fails, sleep], { queue: name });
  });

  it('arguments the worker\'s schema rejects, a tool no worker has, a body that throws: error results with the worker\'s text', async () => {
    const results = await createPipeline({ tools: remote.tools }).run([
      { id: 'ok', name: 'strict', args: { n: 3 } },
      { id: 'big', name: 'strict', args: { n: 11 } }, // the agent's schema admits it, the worker's does not
      { id: 'none', name: 'nowhere', args: {} },
      { id: 'throws', name: 'fails', args: { message: 'disk full' } },
    ]);
    expect(results[0]).toMatchObject({ status: 'ok', value: 3 });
    expect(results[1]).toMatchObject({ status: 'error', error: { code: 'tool_error', cause: { code: 'invalid_args' } } });
    expect(results[1]!.error!.message).toMatch(/Invalid arguments for tool "strict" \(checked on the worker\):\n- n: .*10/);
    expect(results[2]).toMatchObject({ status: 'error', error: { code: 'tool_error', cause: { code: 'unknown_tool' } } });
    expect(results[2]!.error!.message).toContain('No tool "nowhere" on the workers');
    expect(results[3]).toMatchObject({ status: 'error', error: { code: 'tool_error', message: 'Tool "fails" failed: disk full' } });
    expect((results[3]!.error as { cause: unknown }).cause).toBeInstanceOf(RemoteToolError);
  });

  /** Adds a job straight with bullmq and waits for its failure. */
  const failureOf = async (jobId: string, data: unknown) => view.outcomeOf(await view.queue.add('sleep', data, { jobId }));

  it('an unsigned job, a forged signature, a signed payload copied under another id or queue: refused, nothing runs', async () => {
    const unsigned: UnsignedPayload = { v: 2, tool: 'sleep', args: { ms: 1 }, callId: 'unsigned', turn: null, index: 0, key: `tsk-${randomUUID()}`, attempt: 1, deadline: null, expiresAt: Date.now() + 60_000, keepMs: 60_000 };
    expect(await failureOf(`u-${randomUUID()}`, unsigned)).toMatch(/^\[refused\] .*it is not signed/);
    const forged = signPayload(Buffer.from('another secret, also 32 bytes long!!'), { ...unsigned, callId: 'forged' }, { jobId: 'f-1', prefix: suite.fleet.prefix, queue: name });
    expect(await failureOf('f-1', forged)).toMatch(/^\[refused\] .*signature does not match/);
    const signed = signPayload(Buffer.from(SECRET), { ...unsigned, callId: 'copied' }, { jobId: 'original', prefix: suite.fleet.prefix, queue: name });
    expect(await failureOf('copy', signed)).toMatch(/^\[refused\] .*signature does not match/);
    const elsewhere = signPayload(Buffer.from(SECRET), { ...unsigned, callId: 'moved' }, { jobId: 'moved', prefix: suite.fleet.prefix, queue: 'another-queue' });
    expect(await failureOf('moved', elsewhere)).toMatch(/^\[refused\] .*signature does not match/);
    const tampered = { ...signPayload(Buffer.from(SECRET), { ...unsigned, callId: 'tampered' }, { jobId: 'tampered', prefix: suite.fleet.prefix, queue: name }), args: { ms: 2 } };
    expect(await failureOf('tampered', tampered)).toMatch(/^\[refused\] .*signature does not match/);
    // The control: the same payload signed for its id and queue runs.
    const good = signPayload(Buffer.from(SECRET), { ...unsigned, callId: 'good' }, { jobId: 'good', prefix: suite.fleet.prefix, queue: name });
    expect(await failureOf('good', good)).toBe('completed');
    const ran = suite.fleet.events().filter((event) => event.e === 'start').map((event) => event.callId);
    expect(ran).toContain('good');
    for (const callId of ['unsigned', 'forged', 'copied', 'moved', 'tampered']) expect(ran).not.toContain(callId);
  });

  it('an agent with another secret: refused, nothing runs, and the refusal (signed with the workers\' secret) is result_unverified', async () => {
    const stranger = remoteTools([sleep], { connection: { url: suite.redis.url }, queue: name, prefix: suite.fleet.prefix, secret: 'not the secret the workers have, 32+ bytes' });
    try {
      const [result] = await createPipeline({ tools: stranger.tools }).run([{ id: 'stranger', name: 'sleep', args: { ms: 1 } }]);
      expect(result).toMatchObject({ status: 'error', error: { code: 'tool_error', cause: { code: 'result_unverified' } } });
      expect(result!.content).toMatch(/another secret/);
      expect(suite.fleet.events().some((event) => event.callId === 'stranger')).toBe(false);
    } finally {
      await stranger.close();
    }
  });
});
