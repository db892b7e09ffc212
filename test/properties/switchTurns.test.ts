/**
 * The graceful switch (issue 26's acceptance): user messages and each turn's model stream arrive in
 * random interleavings (fast-check's scheduler decides every arrival, body step, policy answer and the
 * end of each run), with random calls — parallel, exclusive, timed out, failing, streamed, hanging —,
 * policies and approvals, model streams that fail, durable turns, and runs that take a while to end
 * after their last result (as a durable turn's journal does). What must hold:
 * - every call each turn received is answered exactly once, in that turn's model order;
 * - the output is the turns' results one turn after the other;
 * - no body of a turn starts after its abort, and its unfinished calls carry the abort's reason;
 * - the turns projected and aborted are exactly those the state machine says (a waiting message is
 *   replaced by a newer one, never projected), checked against a model replaying the log;
 * - within each turn the pool's own invariants hold (concurrency, exclusive calls alone).
 */
import fc from 'fast-check';
import { catchError, concatWith, defer, EMPTY, ignoreElements, Observable, Subject, tap } from 'rxjs';
import { describe, expect, it } from 'vitest';
import {
  createPipeline,
  memoryJournal,
  SourceError,
  switchTurns,
  type Pipeline,
  type ToolCall,
  type ToolContext,
  type ToolResult,
} from '../../src/index.js';
import { BodyMonitor, callSpecs, gateApprover, gatePolicy, monitoredTools, NEVER_MS, schedulerTimers, type CallSpec } from '../support/monitor.js';

const NUM_RUNS = Number(process.env.PROPERTY_RUNS ?? 1000);

type Event =
  | { readonly kind: 'message'; readonly n: number }
  | { readonly kind: 'project'; readonly n: number }
  | { readonly kind: 'abort'; readonly n: number; readonly by: number }
  | { readonly kind: 'start'; readonly n: number; readonly key: string }
  | { readonly kind: 'end'; readonly n: number }
  | { readonly kind: 'failed'; readonly n: number };

const turnOfKey = (key: string) => Number(/^t(\d+)c/.exec(key)![1]);

/** Routes each body to its turn's own monitor (keys are call ids, `t<turn>c<call>`) and logs its start. */
class TurnsMonitor extends BodyMonitor {
  readonly turns = new Map<number, BodyMonitor>();
  constructor(private readonly events: Event[]) {
    super();
  }
  of(n: number): BodyMonitor {
    let monitor = this.turns.get(n);
    if (monitor === undefined) this.turns.set(n, (monitor = new BodyMonitor()));
    return monitor;
  }
  override enter(key: string, exclusive: boolean, ctx: ToolContext): void {
    this.started.add(key);
    this.signals.set(key, ctx.signal);
    this.events.push({ kind: 'start', n: turnOfKey(key), key });
    this.of(turnOfKey(key)).enter(key, exclusive, ctx);
  }
  override exit(key: string, exclusive: boolean): void {
    this.of(turnOfKey(key)).exit(key, exclusive);
  }
}

const messageSpecs = fc.array(
  fc.record({
    calls: callSpecs.map((specs) => specs.slice(0, 6)),
    /** How the model stream ends: completes; fails and `project` catches it; fails and the output errors. */
    end: fc.constantFrom('complete', 'complete', 'caught', 'thrown'),
  }),
  { minLength: 1, maxLength: 5 },
);
type MessageSpec = (typeof messageSpecs extends fc.Arbitrary<infer T> ? T : never)[number];

/** Turn `n`'s model stream: each call a scheduler task (unless a burst), logged once delivered; then its end. */
function modelStream(s: fc.Scheduler, n: number, spec: MessageSpec, delivered: Map<number, string[]>): Observable<ToolCall> {
  return new Observable<ToolCall>((subscriber) => {
    void (async () => {
      for (const [i, call] of spec.calls.entries()) {
        if (!call.burst) await s.schedule(Promise.resolve(), `turn ${n} call ${i}`);
        if (subscriber.closed) return;
        const id = `t${n}c${i}`;
        delivered.set(n, [...(delivered.get(n) ?? []), id]);
        subscriber.next({ id, name: call.name, args: { key: id, steps: call.steps, outcome: call.outcome, gate: call.gate } });
      }
      await s.schedule(Promise.resolve(), `turn ${n} ends`);
      if (spec.end === 'complete') subscriber.complete();
      else subscriber.error(new Error(`turn ${n}'s stream failed`));
    })();
  });
}

/** What the state machine projects and aborts, replayed from the log's messages and the runs' ends (until one failed). */
function expectedTurns(log: readonly Event[]) {
  const projects: number[] = [];
  const aborts: [number, number][] = [];
  let running: number | undefined;
  let aborted = false;
  let waiting: number | undefined;
  for (const event of log) {
    if (event.kind === 'failed') break; // the output ended with the turn's error
    if (event.kind === 'message') {
      if (running === undefined) {
        projects.push((running = event.n));
        aborted = false;
      } else {
        waiting = event.n;
        if (!aborted) aborts.push([running, event.n]);
        aborted = true;
      }
    } else if (event.kind === 'end') {
      running = waiting;
      waiting = undefined;
      aborted = false;
      if (running !== undefined) projects.push(running);
    }
  }
  return { projects, aborts };
}

interface Options {
  readonly concurrency: number;
  readonly onError: 'cancel-rest' | 'continue';
  readonly policies: boolean;
  readonly durable: boolean;
  /** Runs end a scheduler task after their last result, as a durable turn's journal may make them. */
  readonly lateEnd: boolean;
}

async function conversation(s: fc.Scheduler, messages: readonly MessageSpec[], options: Options) {
  const log: Event[] = [];
  const monitor = new TurnsMonitor(log);
  const asked: string[] = [];
  const plain = createPipeline({
    tools: monitoredTools(s, monitor),
    abortGraceMs: Infinity, // slots are freed only by bodies settling
    defaultTimeoutMs: Infinity, // the specs model their own time limits (the `slow` tool)
    approvalTimeoutMs: Infinity,
    scheduler: schedulerTimers(s),
    concurrency: options.concurrency,
    onError: options.onError,
    ...(options.policies ? { pre: [gatePolicy(s)], approve: gateApprover(s, asked), policyTimeoutMs: NEVER_MS } : {}),
    ...(options.durable ? { journal: memoryJournal(), approvalSecret: 'a test secret that is long enough to sign with' } : {}),
  });
  // The pipeline as switchTurns sees it, logging the moment each run ends (maybe a scheduler task late).
  let current = -1;
  const pipeline: Pick<Pipeline, 'operator'> = {
    operator: (runOptions) => (calls) => {
      const n = current;
      const late = options.lateEnd ? defer(() => s.schedule(Promise.resolve(), `turn ${n}'s run ends`)).pipe(ignoreElements()) : EMPTY;
      return calls.pipe(plain.operator(runOptions), concatWith(late), tap({ complete: () => log.push({ kind: 'end', n }), error: () => log.push({ kind: 'failed', n }) }));
    },
  };
  const delivered = new Map<number, string[]>();
  const project = (n: number) => {
    log.push({ kind: 'project', n });
    current = n;
    const stream = modelStream(s, n, messages[n]!, delivered);
    return messages[n]!.end === 'caught' ? stream.pipe(catchError(() => EMPTY)) : stream;
  };
  const reason = (next: number) => {
    log.push({ kind: 'abort', n: current, by: next });
    return `superseded by message ${next}`;
  };

  const messages$ = new Subject<number>();
  const results: ToolResult[] = [];
  let failure: unknown;
  const done = new Promise<void>((resolve) =>
    messages$
      .pipe(switchTurns(pipeline, (n, turn) => (expect(turn.index).toBe(n), project(n)), { reason, ...(options.durable ? { run: (_n, i) => ({ turn: `m${i}` }) } : {}) }))
      .subscribe({ next: (r) => results.push(r), error: (error: unknown) => ((failure = error), resolve()), complete: resolve }),
  );
  void (async () => {
    for (const n of messages.keys()) {
      await s.schedule(Promise.resolve(), `message ${n}`);
      log.push({ kind: 'message', n });
      messages$.next(n);
    }
    await s.schedule(Promise.resolve(), 'no more messages');
    messages$.complete();
  })();
  await s.waitFor(done);
  await s.waitAll();
  return { log, monitor, results, failure, delivered };
}

describe('switchTurns under random interleavings of messages and model streams', () => {
  it('answers every call of every turn once, in order, turn after turn; no body of an aborted turn starts after its abort', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.scheduler(),
        messageSpecs,
        fc.record({
          concurrency: fc.integer({ min: 1, max: 3 }),
          onError: fc.constantFrom('cancel-rest' as const, 'continue' as const),
          policies: fc.boolean(),
          durable: fc.boolean(),
          lateEnd: fc.boolean(),
        }),
        async (s, messages, options) => {
          const { log, monitor, results, failure, delivered } = await conversation(s, messages, options);
          const projects = log.flatMap((e) => (e.kind === 'project' ? [e.n] : []));
          const aborts = log.flatMap((e) => (e.kind === 'abort' ? [[e.n, e.by] as [number, number]] : []));

          // The turns started and aborted are the state machine's, given when messages came and runs ended.
          const expected = expectedTurns(log);
          expect(projects).toEqual(expected.projects);
          expect(aborts).toEqual(expected.aborts);

          // Turn after turn, each turn's results exactly the calls it received, in its model order.
          const turnsOut = results.map((r) => turnOfKey(r.id));
          expect(turnsOut).toEqual([...turnsOut].sort((a, b) => a - b));
          for (const n of messages.keys()) {
            expect(results.filter((r) => turnOfKey(r.id) === n).map((r) => r.id)).toEqual(delivered.get(n) ?? []);
            if (!projects.includes(n)) expect(delivered.has(n)).toBe(false);
          }

          // No body of turn k starts after its abort; its unfinished calls carry the reason.
          for (const [k, by] of aborts) {
            const abortAt = log.findIndex((e) => e.kind === 'abort' && e.n === k);
            const lateStarts = log.slice(abortAt).filter((e) => e.kind === 'start' && e.n === k);
            expect(lateStarts).toEqual([]);
            for (const r of results) {
              if (turnOfKey(r.id) === k && r.error?.code === 'cancelled' && r.error.reason === 'aborted') expect(r.error.abortReason).toBe(`superseded by message ${by}`);
            }
          }
          const abortedTurns = new Set(aborts.map(([k]) => k));
          for (const r of results) {
            if (r.error?.code === 'cancelled' && r.error.reason === 'aborted') expect(abortedTurns.has(turnOfKey(r.id))).toBe(true);
            // (In a durable turn a call cancelled while its `started` entry is being made durable says
            // `started: true` though its body never ran: the journal's view, not the body's.)
            if (options.durable) expect(r.started || !monitor.started.has(r.id)).toBe(true);
            else expect(r.started).toBe(monitor.started.has(r.id));
            if (r.status === 'cancelled' && monitor.started.has(r.id)) expect(monitor.signals.get(r.id)!.aborted).toBe(true);
          }

          // Within a turn, the pool's bounds.
          for (const turn of monitor.turns.values()) {
            expect(turn.violations).toEqual([]);
            expect(turn.maxRunning).toBeLessThanOrEqual(options.concurrency);
          }

          // The end: a turn's failing model stream ends the output with its SourceError; else every message had its turn or a newer one did.
          const last = projects[projects.length - 1]!;
          if (failure === undefined) {
            expect(last).toBe(messages.length - 1);
          } else {
            expect(failure).toBeInstanceOf(SourceError);
            expect(messages[last]!.end).toBe('thrown');
            expect((failure as SourceError).answered).toBe((delivered.get(last) ?? []).length);
            expect(results.filter((r) => turnOfKey(r.id) === last).map((r) => r.id)).toEqual(delivered.get(last) ?? []);
          }
        },
      ),
      { numRuns: NUM_RUNS },
    );
  });
});
