/**
 * Streamed items and progress reports are signed like results: each entry of a job's Redis stream
 * carries a MAC over the job id, its sequence number from 0 and its JSON. The agent checks items in
 * order — one that does not verify, is out of sequence or duplicated fails the call `result_unverified`
 * with the verified items before it as the partial output — and holds the signed item count against
 * what it read. A progress report that does not verify is dropped. The jobs here are settled by hand,
 * writing entries as a worker would (signed with the fleet's secret) and as it never would.
 */
import { randomUUID } from 'node:crypto';
import { Worker, type Job } from 'bullmq';
import { Redis } from 'ioredis';
import { firstValueFrom, toArray } from 'rxjs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { argsHash } from '../../src/durable/canonical.js';
import type { RemoteTools } from '../../src/bullmq/index.js';
import { FleetKeys } from '../../src/bullmq/fleetKeys.js';
import type { JobPayload } from '../../src/bullmq/jobPayload.js';
import { OutcomeSigner } from '../../src/bullmq/outcomeSigner.js';
import { createPipeline, type PipelineEvent, type ToolCall, type ToolResult } from '../../src/index.js';
import { redisAvailable, requireRedis } from '../support/redis.js';
import { items, progressing } from './support/contracts.js';
import { SECRET, useFleet, WITH_REDIS } from './support/fleet.js';

requireRedis();

/** One entry a by-hand worker writes: an item or report signed as `seq` (or `mac`, as given), or one of `json` unsigned. */
type Entry = { readonly json: string; readonly seq?: number; readonly mac?: string };

describe.skipIf(!redisAvailable())(`streamed items and progress are verified (${WITH_REDIS})`, () => {
  const name = `q-${randomUUID()}`; // no toolstream worker serves it
  const suite = useFleet({ workers: 0, queues: [] });
  let remote: RemoteTools;
  let redis: Redis;
  let keys: FleetKeys;
  beforeAll(() => {
    remote = suite.remote([items, progressing], { queue: name, reconcileMs: 100 });
    redis = new Redis(suite.redis.url);
    keys = new FleetKeys(suite.fleet.prefix, name);
  });
  afterAll(async () => {
    await redis?.quit();
  });

  /**
   * Runs `call` and settles its job by hand: writes `entries` to its item (or progress) stream, then
   * completes it with what `returned(signer)` gives.
   */
  async function settledByHand(call: ToolCall, kind: 'item' | 'progress', entries: readonly Entry[], returned: (signer: OutcomeSigner) => unknown): Promise<{ result: ToolResult; events: PipelineEvent[] }> {
    const byHand = new Worker(name, null, { connection: suite.connection, prefix: suite.fleet.prefix });
    try {
      const running = firstValueFrom(createPipeline({ tools: remote.tools }).events([call]).pipe(toArray()));
      let job: Job | undefined;
      const token = randomUUID();
      while (job === undefined) job = await byHand.getNextJob(token, { block: true });
      const payload = job.data as JobPayload;
      const signer = new OutcomeSigner(Buffer.from(SECRET), { jobId: job.id!, callId: payload.callId, argsHash: argsHash(payload.args) });
      const key = kind === 'item' ? keys.items(job.id!) : keys.progress(job.id!);
      for (const { json, seq, mac } of entries) {
        const fields = mac !== undefined ? ['v', json, 'm', mac] : seq === undefined ? ['v', json] : ['v', json, 'm', signer.entry(kind, seq, json)];
        await redis.multi().xadd(key, '*', ...fields).publish(keys.itemsChannel, kind === 'item' ? job.id! : `p:${job.id!}`).exec();
      }
      await job.moveToCompleted(returned(signer), token, false);
      const events = await running;
      const result = (events.find((event) => event.type === 'result') as Extract<PipelineEvent, { type: 'result' }>).result;
      return { result, events };
    } finally {
      await byHand.close();
    }
  }

  const stream = (signer: OutcomeSigner, n: number) => signer.returned({ k: 's', n });
  const call = (): ToolCall => ({ id: `s-${randomUUID()}`, name: 'items', args: { count: 3, gapMs: 0 } });
  const expectUnverified = (result: ToolResult, partial: unknown[]) => {
    expect(result).toMatchObject({ status: 'error', error: { code: 'tool_error', cause: { code: 'result_unverified' } }, partial });
    expect(result.content).not.toContain('forged');
  };

  it('items signed in sequence and a matching signed count: the stream, as written (the control)', async () => {
    const { result } = await settledByHand(call(), 'item', [{ json: '0', seq: 0 }, { json: '1', seq: 1 }, { json: '2', seq: 2 }], (signer) => stream(signer, 3));
    expect(result).toMatchObject({ status: 'ok', streamed: true, value: [0, 1, 2] });
  });

  it('an unsigned or badly signed item: result_unverified, the verified items before it are the partial output', async () => {
    const unsigned = await settledByHand(call(), 'item', [{ json: '0', seq: 0 }, { json: '"forged"' }], (signer) => stream(signer, 2));
    expectUnverified(unsigned.result, [0]);
    const badMac = await settledByHand(call(), 'item', [{ json: '"forged"', mac: 'A'.repeat(43) }], (signer) => stream(signer, 1));
    expectUnverified(badMac.result, []);
  });

  it('an item duplicated or out of sequence (each genuinely signed for its own number): result_unverified', async () => {
    const duplicated = await settledByHand(call(), 'item', [{ json: '0', seq: 0 }, { json: '1', seq: 1 }, { json: '1', seq: 1 }], (signer) => stream(signer, 3));
    expectUnverified(duplicated.result, [0, 1]);
    const skipped = await settledByHand(call(), 'item', [{ json: '0', seq: 0 }, { json: '2', seq: 2 }], (signer) => stream(signer, 3));
    expectUnverified(skipped.result, [0]);
  });

  it('a signed count that does not match the items read (one deleted at the end): result_unverified after them', async () => {
    const { result } = await settledByHand(call(), 'item', [{ json: '0', seq: 0 }, { json: '1', seq: 1 }], (signer) => stream(signer, 3));
    expectUnverified(result, [0, 1]);
  });

  it('progress reports that do not verify are dropped; the signed ones arrive once, in order', async () => {
    const progressCall: ToolCall = { id: `p-${randomUUID()}`, name: 'progressing', args: { steps: 2, gapMs: 0 } };
    const { result, events } = await settledByHand(
      progressCall,
      'progress',
      [{ json: '"forged"' }, { json: '{"done":1}', seq: 0 }, { json: '{"done":1}', seq: 0 }, { json: '"forged too"', mac: 'A'.repeat(43) }, { json: '{"done":2}', seq: 1 }],
      (signer) => signer.returned({ k: 'v', value: 'all done', p: 2 }),
    );
    expect(result).toMatchObject({ status: 'ok', value: 'all done' });
    const reports = events.filter((event) => event.type === 'progress').map((event) => (event as Extract<PipelineEvent, { type: 'progress' }>).value);
    expect(reports).toEqual([{ done: 1 }, { done: 2 }]);
  });
});
