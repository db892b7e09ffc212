/**
 * `resume` reads and plans the turn before it takes the lease. A resume whose lease comes back after
 * another resume finished the turn must not work from that stale plan — it would run the calls behind
 * the approval again (a non-idempotent body twice: invariant 8) and journal the approved call a second
 * time, as denied. Between the read and the lease there is a store round trip (Redis) or a
 * descheduled process (the two-process race of test/durable/sqlite hit it on a loaded machine); here a
 * store whose `lease` waits stands for it. Once the lease is taken the journal is read again, and a
 * turn that changed meanwhile refuses the resume (`turn_leased`: resume it again).
 */
import { expect, it } from 'vitest';
import { z } from 'zod';
import { askTools, createPipeline, defineTool, memoryJournal, suspendApprovals, type JournalStore } from '../../src/index.js';
import { deferred } from '../support/deferred.js';

it('a resume planned before another resume finished the turn runs nothing again', async () => {
  const runs: string[] = [];
  const write = defineTool({ name: 'write', description: 'w', input: z.object({}), execute: () => (runs.push('write'), 'wrote') });
  const charge = defineTool({ name: 'charge', description: 'c', input: z.object({}), mode: 'parallel', execute: () => (runs.push('charge'), 'charged') });
  const pipelineOn = (journal: JournalStore) =>
    createPipeline({ tools: [write, charge], journal, approvalSecret: 'a test secret that is long enough to sign with', pre: [askTools(['write'])], approve: suspendApprovals() });
  const journal = memoryJournal();
  await pipelineOn(journal).run([{ id: 'w', name: 'write', args: {} }, { id: 'c', name: 'charge', args: {} }], { turn: 't' });
  const [approval] = await pipelineOn(journal).pendingApprovals('t');
  const answers = [{ token: approval!.token, answer: 'allowed-once' as const }];

  const gate = deferred();
  const slowLease: JournalStore = { ...journal, acquire: async (...args) => (await gate.promise, journal.acquire(...args)) };
  const late = pipelineOn(slowLease).resume('t', { answers }).catch((error: unknown) => error); // plans now, leases later
  await new Promise((resolve) => setTimeout(resolve, 5));
  expect((await pipelineOn(journal).resume('t', { answers })).map((r) => r.status)).toEqual(['ok', 'ok']);
  gate.resolve();
  expect(await late).toMatchObject({ code: 'turn_leased' });

  expect(runs).toEqual(['write', 'charge']); // before: ['write', 'charge', 'charge']
  expect((await pipelineOn(journal).resume('t')).map((r) => r.status)).toEqual(['ok', 'ok']); // before: w was 'denied'
});
