/**
 * The stream floor (issue 25): the contract floor's per-call work (`contractFloor.ts`) inside the least
 * machinery a streaming engine of the pipeline's shape needs — calls in as an Observable, a record per
 * call, a FIFO queue and `concurrency` slots, a context per call with a lazy abort signal, one timer per
 * pool for every call's time limit, results reordered by index and out as an Observable. Nothing else: no
 * policies, barriers, cancellation of the rest, admission gates, hooks, retries, pulled sources or
 * teardown of running bodies. It answers "how close to the contract floor can an engine of this shape get
 * at all"; the pipeline's distance from it is what its own features and seams cost.
 *
 * @example
 * ```ts
 * const run = streamFloor(input, 10);
 * const results = await run(calls, async ({ i }) => i);
 * ```
 */
import { asyncScheduler, from, lastValueFrom, Observable, toArray, type Subscription } from 'rxjs';
import type { z } from 'zod';
import type { ToolCall } from '../src/index.js';
import { RecentIds } from '../src/util/recentIds.js';
import { renderValue } from '../src/util/renderContent.js';
import { deepFreeze, snapshotArgs } from '../src/util/snapshot.js';
import type { FloorResult } from './contractFloor.js';

const NONE: readonly never[] = Object.freeze([]);
const NO_META: Readonly<Record<string, unknown>> = Object.freeze({});
/** Every call's time limit (the pipeline's default): armed for each, never reached here. */
const TIMEOUT_MS = 300_000;

/** A call from intake to its result. */
class Call {
  args: unknown = undefined;
  admittedAt = 0;
  startedAt = 0;
  endedAt = 0;
  /** Its deadline, on the scheduler's clock. */
  deadline = 0;
  /** Settled (or timed out): its deadline is withdrawn, its slot free. */
  done = false;
  controller: AbortController | undefined = undefined;

  constructor(
    readonly index: number,
    readonly id: string,
    readonly name: string,
    readonly receivedAt: number,
  ) {}
}

/** What a body gets: its signal made on first read, as most bodies never look. */
class Context {
  constructor(private readonly call: Call) {}

  get signal(): AbortSignal {
    return (this.call.controller ??= new AbortController()).signal;
  }

  get callId(): string {
    return this.call.id;
  }
}

function streamOperator<A>(input: z.ZodType<A>, concurrency: number, body: (args: A, ctx: Context) => unknown) {
  return (calls: Observable<ToolCall>): Observable<FloorResult> =>
    new Observable<FloorResult>((out) => {
      const seen = new RecentIds(10_000);
      const queue: Call[] = [];
      let queueHead = 0;
      // Deadlines of one length come due in start order: a FIFO and one timer for all of them.
      const deadlines: Call[] = [];
      let deadlineHead = 0;
      let timer: Subscription | undefined;
      const early = new Map<number, FloorResult>();
      let nextOut = 0;
      let running = 0;
      let received = 0;
      let ended = false;

      const arm = (): void => {
        while (deadlineHead < deadlines.length && deadlines[deadlineHead]!.done) deadlineHead++;
        if (deadlineHead > 1024 && deadlineHead * 2 > deadlines.length) {
          deadlines.splice(0, deadlineHead); // drop the passed ones now and then, not one shift per call
          deadlineHead = 0;
        }
        const next = deadlines[deadlineHead];
        if (timer === undefined && next !== undefined) timer = asyncScheduler.schedule(expire, Math.max(0, next.deadline - asyncScheduler.now()));
      };
      const expire = (): void => {
        timer = undefined;
        const now = asyncScheduler.now();
        for (let call = deadlines[deadlineHead]; call !== undefined && (call.done || call.deadline <= now); call = deadlines[++deadlineHead]) {
          if (call.done) continue;
          call.controller?.abort();
          settle(call, 'error', undefined);
        }
        arm();
      };
      const emit = (index: number, result: FloorResult): void => {
        if (index !== nextOut) {
          early.set(index, result);
          return;
        }
        out.next(result);
        nextOut++;
        for (let held = early.get(nextOut); held !== undefined; held = early.get(nextOut)) {
          early.delete(nextOut);
          out.next(held);
          nextOut++;
        }
        if (ended && nextOut === received) {
          timer?.unsubscribe();
          out.complete();
        }
      };
      const settle = (call: Call, status: string, value: unknown): void => {
        if (call.done) return;
        call.done = true;
        running--;
        call.endedAt = performance.now();
        const content = renderValue(value, false);
        const finishedAt = performance.now();
        const { receivedAt, admittedAt, startedAt, endedAt, id, name, index, args } = call;
        // The floor's result, written out as contractFloor.ts writes it rather than shared through a call:
        // a floor is a lower bound, and a helper taking an object per call measured slower in the floor.
        const durations = Object.freeze({
          intake: admittedAt - receivedAt,
          policy: 0,
          queue: startedAt - admittedAt,
          limit: 0,
          execute: endedAt - startedAt,
          post: 0,
          total: finishedAt - receivedAt,
        });
        const timing = Object.freeze({ receivedAt, startedAt, endedAt, finishedAt, durations });
        const result = Object.freeze({
          id, name, index, turn: undefined, status, content, value, streamed: false,
          args, originalArgs: args, rewrittenBy: NONE, decision: 'allow', trace: NONE, meta: NO_META, omitted: undefined,
          started: true, attempts: 1, timing,
        });
        pump();
        emit(index, result);
      };
      const pump = (): void => {
        while (running < concurrency && queueHead < queue.length) {
          const call = queue[queueHead++]!;
          if (queueHead > 1024 && queueHead * 2 > queue.length) {
            queue.splice(0, queueHead);
            queueHead = 0;
          }
          running++;
          call.startedAt = performance.now();
          call.deadline = asyncScheduler.now() + TIMEOUT_MS;
          deadlines.push(call);
          if (timer === undefined) arm();
          let output: unknown;
          try {
            output = body(call.args as A, new Context(call));
          } catch {
            settle(call, 'error', undefined);
            continue;
          }
          if (typeof output === 'object' && output !== null && typeof (output as PromiseLike<unknown>).then === 'function') {
            (output as PromiseLike<unknown>).then(
              (value) => settle(call, 'ok', value),
              () => settle(call, 'error', undefined),
            );
          } else settle(call, 'ok', output);
        }
      };
      const subscription = calls.subscribe({
        next: ({ id, name, args }) => {
          const call = new Call(received++, id, name, performance.now());
          if (!seen.add(id)) throw new Error(`duplicate id ${id}`);
          call.args = deepFreeze(input.parse(snapshotArgs(args)));
          call.admittedAt = performance.now();
          queue.push(call);
          pump();
        },
        error: (error: unknown) => out.error(error),
        complete: () => {
          ended = true;
          if (nextOut === received) out.complete();
        },
      });
      return () => {
        subscription.unsubscribe();
        timer?.unsubscribe();
      };
    });
}

/** The stream floor as a function of an array of calls, as the other baselines are. */
export function streamFloor<A>(input: z.ZodType<A>, concurrency: number): (calls: readonly ToolCall[], body: (args: A) => unknown) => Promise<FloorResult[]> {
  return (calls, body) => lastValueFrom(from(calls).pipe(streamOperator(input, concurrency, body), toArray()));
}
