import { execFile } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { promisify } from 'node:util';
import { Subject } from 'rxjs';
import { afterAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import {
  askTools,
  createPipeline,
  defineTool,
  memoryJournal,
  runCodeTool,
  suspendApprovals,
  type AnyTool,
  type CodeRuntime,
  type JournalStore,
  type PendingApproval,
  type PipelineOptions,
  type ProgramOutput,
  type ToolCall,
  type ToolResult,
} from '../../src/index.js';
import { createQuickJSRuntime } from '../../src/ptc/quickjs/index.js';
import { appendAsProcess, nonceOf, ProcessView } from '../support/crashes.js';
import { deferred } from '../support/deferred.js';
import { scriptedRuntime, type ScriptTools } from './programsRuntime.js';

const SECRET = 'a test secret that is long enough to sign with';
const quickjs = createQuickJSRuntime({ timeoutMs: 20_000, poolSize: 1 });
afterAll(() => quickjs.close());

/** Tools that count their runs, so a test can tell an answer from the journal from a re-run. */
function counted() {
  const runs: string[] = [];
  const read = defineTool({ name: 'read', description: 'r', input: z.object({ path: z.string() }), mode: 'parallel', execute: ({ path }) => (runs.push(`read ${path}`), `text of ${path}`) });
  const write = defineTool({ name: 'write', description: 'w', input: z.object({ path: z.string() }), execute: ({ path }) => (runs.push(`write ${path}`), `wrote ${path}`) });
  const send = defineTool({ name: 'send', description: 's', input: z.object({ to: z.string() }), mode: 'parallel', execute: ({ to }) => (runs.push(`send ${to}`), `sent to ${to}`) });
  return { runs, tools: [read, write, send] };
}

const pipelineOf = (journal: JournalStore, runtime: CodeRuntime, tools: readonly AnyTool[], extra: Partial<PipelineOptions> = {}) =>
  createPipeline({ tools: [...tools, runCodeTool({ runtime })], journal, approvalSecret: SECRET, pre: [askTools(['write', 'send'])], approve: suspendApprovals(), ...extra });

const program = (source: string, id = 'p'): ToolCall => ({ id, name: 'run_code', args: { program: source } });
const outline = (results: readonly ToolResult[]) => results.map((r) => [r.id, r.status, r.error?.code]);
const output = (result: ToolResult | undefined): ProgramOutput => {
  expect(result?.status, result?.content).toBe('ok');
  return result!.value as ProgramOutput;
};
const pendingOf = (result: ToolResult | undefined): PendingApproval => {
  if (result?.error?.code !== 'approval_pending') throw new Error(`expected a pending approval, got ${result?.content}`);
  return result.error.approval;
};
const allow = (approvals: readonly PendingApproval[]) => approvals.map(({ token }) => ({ token, answer: 'allowed-once' as const }));

const READ_WRITE_READ = `
  const before = await tools.read({ path: 'a' });
  const wrote = await tools.write({ path: 'b' }).catch((e) => e.code);
  const after = await tools.read({ path: 'c' });
  return [before, wrote, after];`;

describe('programs in durable turns (QuickJS)', () => {
  it('a sub-call that suspends suspends the program; resuming answers the finished reads from the journal and runs the write once', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    const first = await pipelineOf(journal, quickjs, tools).run([program(READ_WRITE_READ), { id: 'r9', name: 'read', args: { path: 'z' } }], { turn: 't' });
    // The program never saw the suspension: it stopped, waiting; the read after it waits behind it (run_code is exclusive).
    expect(outline(first)).toEqual([['p', 'suspended', 'approval_pending'], ['r9', 'suspended', 'behind_suspended']]);
    expect(first[0]!.content).toMatch(/waits for a human's approval of 1 of its tool call\(s\): "write"/);
    expect(pendingOf(first[0])).toMatchObject({ turn: 't', callId: 'p#2', index: 0, tool: 'write', args: { path: 'b' } });
    expect(runs).toEqual(['read a']);

    // Another pipeline, as in another process sharing the store.
    const later = pipelineOf(journal, quickjs, tools);
    const approvals = await later.pendingApprovals('t');
    expect(approvals).toEqual([pendingOf(first[0])]);
    const resumed = await later.resume('t', { answers: allow(approvals) });
    expect(outline(resumed)).toEqual([['p', 'ok', undefined], ['r9', 'ok', undefined]]);
    const { value, subCalls } = output(resumed[0]);
    expect(value).toEqual(['text of a', 'wrote b', 'text of c']);
    expect(subCalls.map(({ id, name, status }) => [id, name, status])).toEqual([['p#1', 'read', 'ok'], ['p#2', 'write', 'ok'], ['p#3', 'read', 'ok']]);
    expect(runs).toEqual(['read a', 'write b', 'read c', 'read z']); // the first read was answered from the journal
    expect(await later.pendingApprovals('t')).toEqual([]);

    // The turn is done: resuming again replays everything, the program's value too, and runs nothing.
    const again = await later.resume('t');
    expect(output(again[0]).value).toEqual(value);
    expect(runs).toHaveLength(4);
  });

  it('no answer suspends it again with the same token; a rejection reaches the program as approval_rejected', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    const pipeline = pipelineOf(journal, quickjs, tools);
    const first = await pipeline.run([program(READ_WRITE_READ)], { turn: 't' });
    const still = await pipeline.resume('t');
    expect(outline(still)).toEqual([['p', 'suspended', 'approval_pending']]);
    expect(pendingOf(still[0]).token).toBe(pendingOf(first[0]).token);
    expect(await pipeline.pendingApprovals('t')).toEqual([pendingOf(first[0])]);
    expect(runs).toEqual(['read a']);

    const rejected = await pipeline.resume('t', { answers: [{ token: pendingOf(first[0]).token, answer: 'rejected' }] });
    expect(output(rejected[0]).value).toEqual(['text of a', 'approval_rejected', 'text of c']);
    expect(runs).toEqual(['read a', 'read c']);
  });

  it('a crash mid-program: a finished sub-call is answered from the journal, a started one is outcome_unknown unless idempotent', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    const started = { charge: deferred(), fetch: deferred() };
    const hang = (name: 'charge' | 'fetch', idempotent: boolean) =>
      defineTool({ name, description: name, input: z.object({}), mode: 'parallel', idempotent, execute: () => (runs.push(name), started[name].resolve(), new Promise<never>(() => {})) });
    const source = `
      const text = await tools.read({ path: 'a' });
      const [charged, page] = await Promise.all([tools.charge({}).catch((e) => e.code), tools.fetch({})]);
      return [text, charged, page];`;
    const crashed = new Subject<ToolCall>();
    // "Crash": the process stops mid-turn — here the subscription is dropped while both bodies run.
    const subscription = crashed.pipe(pipelineOf(journal, quickjs, [...tools, hang('charge', false), hang('fetch', true)]).operator({ turn: 't' })).subscribe();
    crashed.next(program(source));
    await Promise.all([started.charge.promise, started.fetch.promise]);
    subscription.unsubscribe();
    expect([...runs].sort()).toEqual(['charge', 'fetch', 'read a']);

    const fresh: string[] = [];
    const again = (name: string, idempotent: boolean, value: string) =>
      defineTool({ name, description: name, input: z.object({}), mode: 'parallel', idempotent, execute: () => (fresh.push(name), value) });
    const resumed = await pipelineOf(journal, quickjs, [...tools, again('charge', false, 'charged'), again('fetch', true, 'page')], { leaseMs: 1 }).resume('t');
    expect(output(resumed[0]).value).toEqual(['text of a', 'outcome_unknown', 'page']);
    expect(fresh).toEqual(['fetch']);
    expect(runs.filter((run) => run === 'read a')).toHaveLength(1);
  });

  it("the README's example runs (examples/readme/durable-programs.ts)", async () => {
    const { stdout } = await promisify(execFile)(process.execPath, ['--import', 'tsx', 'examples/readme/durable-programs.ts'], { encoding: 'utf8' });
    expect(stdout).toContain('durable program: ok');
  });
});

describe('programs in durable turns (scripted runtime)', () => {
  it('a program that reorders its calls still gets every finished one from the journal, each once', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    let run = 0;
    const runtime = scriptedRuntime({
      reorders: async (t: ScriptTools) => {
        run++;
        const texts = run === 1 ? [await t.read!({ path: 'a' }), await t.read!({ path: 'b' })] : [await t.read!({ path: 'b' }), await t.read!({ path: 'a' }), await t.read!({ path: 'c' })];
        return [...texts, await t.write!({ path: 'x' })];
      },
    });
    const first = await pipelineOf(journal, runtime, tools).run([program('reorders')], { turn: 't' });
    expect(runs).toEqual(['read a', 'read b']);
    const resumed = await pipelineOf(journal, runtime, tools).resume('t', { answers: allow([pendingOf(first[0])]) });
    expect(output(resumed[0]).value).toEqual(['text of b', 'text of a', 'text of c', 'wrote x']);
    expect(runs).toEqual(['read a', 'read b', 'read c', 'write x']);
  });

  it('a program that diverges gets fresh sub-calls from there on: its new ask suspends, and the approval it no longer needs is withdrawn', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    let target = 'x';
    const runtime = scriptedRuntime({ diverges: async (t: ScriptTools) => [await t.read!({ path: 'a' }), await t.write!({ path: target })] });
    const pipeline = pipelineOf(journal, runtime, tools);
    const first = await pipeline.run([program('diverges')], { turn: 't' });
    const forX = pendingOf(first[0]);
    expect(forX.args).toEqual({ path: 'x' });

    target = 'y'; // the program now writes elsewhere: the approval for x answers nothing
    const second = await pipeline.resume('t', { answers: allow([forX]) });
    const forY = pendingOf(second[0]);
    expect(forY.args).toEqual({ path: 'y' });
    expect(await pipeline.pendingApprovals('t')).toEqual([forY]);
    await expect(pipeline.resume('t', { answers: allow([forX]) })).rejects.toMatchObject({ code: 'token_used' });

    const done = await pipeline.resume('t', { answers: allow([forY]) });
    expect(output(done[0]).value).toEqual(['text of a', 'wrote y']);
    expect(runs).toEqual(['read a', 'write y']);
  });

  it('a sub-call asked again at another position (its token expired) is answered by its new token', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    let run = 0;
    const runtime = scriptedRuntime({
      moves: async (t: ScriptTools) => {
        const reads = ++run === 1 ? [await t.read!({ path: 'a' })] : [await t.read!({ path: 'a' }), await t.read!({ path: 'b' })];
        return [...reads, await t.write!({ path: 'x' })];
      },
    });
    const pipeline = pipelineOf(journal, runtime, tools, { approvalTtlMs: 300 });
    const first = pendingOf((await pipeline.run([program('moves')], { turn: 't' }))[0]);
    await new Promise((resolve) => setTimeout(resolve, 350));
    const second = pendingOf((await pipeline.resume('t'))[0]); // expired: asked anew, now as the third call
    expect([first.callId, second.callId]).toEqual(['p#2', 'p#3']);
    expect(second.token).not.toBe(first.token);
    const done = await pipeline.resume('t', { answers: allow([second]) });
    expect(output(done[0]).value).toEqual(['text of a', 'text of b', 'wrote x']);
    expect(runs).toEqual(['read a', 'read b', 'write x']);
  });

  it('several suspended sub-calls: every approval is listed; each answered one runs once, the others wait with their tokens', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    const runtime = scriptedRuntime({ sends: async (t: ScriptTools) => Promise.all([t.send!({ to: 'ann' }), t.send!({ to: 'bob' }), t.read!({ path: 'a' })]) });
    const pipeline = pipelineOf(journal, runtime, tools);
    await pipeline.run([program('sends')], { turn: 't' });
    const [ann, bob, ...rest] = await pipeline.pendingApprovals('t');
    expect(rest).toEqual([]);
    expect([ann?.callId, bob?.callId]).toEqual(['p#1', 'p#2']);
    expect(runs).toEqual(['read a']);

    const half = await pipeline.resume('t', { answers: allow([bob!]) });
    expect(pendingOf(half[0])).toEqual(ann);
    expect(await pipeline.pendingApprovals('t')).toEqual([ann]);
    expect(runs).toEqual(['read a', 'send bob']);
    await expect(pipeline.resume('t', { answers: allow([bob!]) })).rejects.toMatchObject({ code: 'token_used' });

    const done = await pipeline.resume('t', { answers: allow([ann!]) });
    expect(output(done[0]).value).toEqual(['sent to ann', 'sent to bob', 'text of a']);
    expect(runs).toEqual(['read a', 'send bob', 'send ann']);
  });

  it('an approved program is not asked again when it runs again after a sub-call suspended it', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    const runtime = scriptedRuntime({ writes: async (t: ScriptTools) => [await t.read!({ path: 'a' }), await t.write!({ path: 'b' })] });
    const pipeline = pipelineOf(journal, runtime, tools, { pre: [askTools(['write', 'run_code'])] });
    const first = await pipeline.run([program('writes')], { turn: 't' });
    expect(pendingOf(first[0]).callId).toBe('p'); // the program itself asks first
    const second = await pipeline.resume('t', { answers: allow(await pipeline.pendingApprovals('t')) });
    expect(pendingOf(second[0]).callId).toBe('p#2'); // then its write
    expect((await pipeline.pendingApprovals('t')).map((a) => a.callId)).toEqual(['p#2']);
    const done = await pipeline.resume('t', { answers: allow(await pipeline.pendingApprovals('t')) });
    expect(output(done[0]).value).toEqual(['text of a', 'wrote b']);
    expect(runs).toEqual(['read a', 'write b']);
    expect(runtime.runs.get('writes')).toBe(2);
  });

  it('a streamed sub-call answered from the journal gives the program the same items', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    const lines = defineTool({
      name: 'lines',
      description: 'l',
      input: z.object({}),
      mode: 'parallel',
      async *execute() {
        runs.push('lines');
        yield 'one';
        yield 'two';
      },
    });
    const runtime = scriptedRuntime({ streams: async (t: ScriptTools) => [await t.lines!({}), await t.write!({ path: 'b' })] });
    const pipeline = pipelineOf(journal, runtime, [...tools, lines]);
    const first = await pipeline.run([program('streams')], { turn: 't' });
    const done = await pipeline.resume('t', { answers: allow([pendingOf(first[0])]) });
    expect(output(done[0]).value).toEqual([['one', 'two'], 'wrote b']);
    expect(runs).toEqual(['lines', 'write b']);
  });

  it("a runtime's settleMs must be a number of milliseconds", () => {
    for (const settleMs of [-1, Number.NaN, '5', 2 ** 31]) {
      expect(() => runCodeTool({ runtime: { ...scriptedRuntime({}), settleMs } as unknown as CodeRuntime })).toThrow(/`runtime.settleMs` must be 0 to/);
    }
  });

  it('outside a durable turn a sub-call that suspends still fails closed', async () => {
    const { runs, tools } = counted();
    const runtime = scriptedRuntime({ writes: async (t: ScriptTools) => t.write!({ path: 'b' }).catch((e: { code: string }) => e.code) });
    const pipeline = createPipeline({ tools: [...tools, runCodeTool({ runtime })], pre: [askTools(['write'])], approve: suspendApprovals() });
    expect(output((await pipeline.run([program('writes')]))[0]).value).toBe('approval_unavailable');
    expect(runs).toEqual([]);
  });
});

describe('a sub-call answered before its process stopped', () => {
  it("a sub-call's approval the turn's journal records as answered, though its own journal lost it, admits it once", async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    const runtime = scriptedRuntime({ writes: async (t: ScriptTools) => [await t.read!({ path: 'a' }), await t.write!({ path: 'b' })] });
    const pipeline = pipelineOf(journal, runtime, tools);
    const [result] = await pipeline.run([program('writes')], { turn: 't' });
    const { token } = pendingOf(result);
    // A process consumed it and journaled the answer in the turn, then stopped before the sub-call's journal had it.
    expect(await journal.consume('t', nonceOf(token))).toBe(true);
    await appendAsProcess(journal, 't', [{ kind: 'approval_answered', index: 0, answer: 'allowed-once', token, at: Date.now() }]);
    expect(await pipeline.pendingApprovals('t')).toEqual([]);

    const resumed = await pipeline.resume('t');
    expect(output(resumed[0]).value).toEqual(['text of a', 'wrote b']);
    expect(runs).toEqual(['read a', 'write b']);
  });
});

describe('sub-calls whose arguments change every run (the clock, a random value)', () => {
  const charge = (charged: string[], body: () => unknown) =>
    defineTool({ name: 'charge', description: 'c', input: z.object({ nonce: z.string() }), execute: ({ nonce }) => (charged.push(nonce), body()) });

  /** Runs the turn in a process that stops while the program's first call, a charge, runs. */
  async function crashWhileCharging(journal: JournalStore, runtime: CodeRuntime, tools: readonly AnyTool[], charged: string[]): Promise<void> {
    const started = deferred();
    const dying = new ProcessView(journal);
    const hanging = charge(charged, () => (started.resolve(), new Promise<never>(() => {})));
    void pipelineOf(dying, runtime, [...tools, hanging]).run([program('charges')], { turn: 't' }).catch(() => undefined);
    await started.promise;
    dying.crash('t');
  }

  it('a process stopped while one ran: each later run of its program gets outcome_unknown there, and the body ran once', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    const nonces: string[] = [];
    const runtime = scriptedRuntime({
      charges: async (t: ScriptTools) => {
        const nonce = randomUUID();
        nonces.push(nonce);
        const charged = await t.charge!({ nonce }).catch((e: { code: string }) => e.code);
        return [charged, await t.write!({ path: 'receipt' })];
      },
    });
    const charged: string[] = [];
    await crashWhileCharging(journal, runtime, tools, charged);

    const later = pipelineOf(journal, runtime, [...tools, charge(charged, () => 'charged')]);
    const second = await later.resume('t');
    expect(pendingOf(second[0]).tool).toBe('write'); // past the charge, which it was told is outcome_unknown
    const done = await later.resume('t', { answers: allow(await later.pendingApprovals('t')) });
    const { value, subCalls } = output(done[0]);
    expect(value).toEqual(['outcome_unknown', 'wrote receipt']);
    expect(subCalls[0]).toMatchObject({ name: 'charge', status: 'error', error: { code: 'outcome_unknown' } });
    expect(new Set(nonces).size).toBe(3); // three runs, each with other arguments
    expect(charged).toEqual([nonces[0]]);
    expect(runs).toEqual(['write receipt']);
  });

  it('one that finished is answered from the journal, though its arguments differ; an idempotent one runs again', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    const fetched: string[] = [];
    const fetch = defineTool({ name: 'fetch', description: 'f', input: z.object({ nonce: z.string() }), mode: 'parallel', idempotent: true, execute: ({ nonce }) => (fetched.push(nonce), 'page') });
    const runtime = scriptedRuntime({
      sends: async (t: ScriptTools) => [await t.send!({ to: `ann ${randomUUID()}` }), await t.fetch!({ nonce: randomUUID() }), await t.write!({ path: 'b' })],
    });
    const pipeline = pipelineOf(journal, runtime, [...tools, fetch], { pre: [askTools(['write'])] });
    const first = await pipeline.run([program('sends')], { turn: 't' });
    const done = await pipeline.resume('t', { answers: allow([pendingOf(first[0])]) });
    const sent = runs[0]!;
    expect(output(done[0]).value).toEqual([`sent to ${sent.slice('send '.length)}`, 'page', 'wrote b']);
    expect(runs).toEqual([sent, 'write b']);
    expect(new Set(fetched).size).toBe(2);
  });

  it('a run that calls another tool there leaves the started one where it was: a later run that calls it again gets outcome_unknown', async () => {
    const journal = memoryJournal();
    const { runs, tools } = counted();
    let run = 0;
    const refund = defineTool({ name: 'refund', description: 'r', input: z.object({}), execute: () => (runs.push('refund'), 'refunded') });
    const runtime = scriptedRuntime({
      charges: async (t: ScriptTools) => {
        // The second run takes another way at its first call.
        const first = ++run === 2 ? await t.refund!({}) : await t.charge!({ nonce: randomUUID() }).catch((e: { code: string }) => e.code);
        return [first, await t.write!({ path: 'receipt' })];
      },
    });
    const charged: string[] = [];
    await crashWhileCharging(journal, runtime, [...tools, refund], charged);

    const later = pipelineOf(journal, runtime, [...tools, refund, charge(charged, () => 'charged')]);
    const second = await later.resume('t');
    expect(pendingOf(second[0]).tool).toBe('write');
    const done = await later.resume('t', { answers: allow(await later.pendingApprovals('t')) });
    expect(output(done[0]).value).toEqual(['outcome_unknown', 'wrote receipt']);
    expect(charged).toHaveLength(1);
    expect(runs).toEqual(['refund', 'write receipt']);
  });
});
