import { concatMap, defer, from, map, mergeMap, Observable, of, ReplaySubject, tap, catchError, type OperatorFunction } from 'rxjs';

/**
 * The user's mental model of the pool, in plain RxJS, as the reference `test/properties/poolModel.test.ts`
 * compares the real pipeline with:
 *
 *     calls → segments → concatMap(segment → segment.pipe(mergeMap(run, concurrency))) → in model order
 *
 * A segment is an exclusive call alone, or a run of consecutive parallel calls (open while the model
 * keeps sending parallel calls). `concatMap` makes every segment wait for the one before it to finish
 * — that is the barrier — and `mergeMap` runs a segment's calls `concurrency` at a time, in arrival
 * order. A failure that cancels the rest aborts every running body and answers every call not yet
 * started `cancelled` (one batch, one turn). Nothing here knows how the pool is written.
 */

/** A call as the reference sees it: its place in model order and whether it is a barrier. */
export interface ModelCall {
  readonly id: string;
  readonly index: number;
  readonly exclusive: boolean;
}

/** How a call ended, as both the pipeline's result and the reference give it. */
export type ModelOutcome =
  | { readonly id: string; readonly index: number; readonly status: 'ok'; readonly value: unknown; readonly started: true }
  | { readonly id: string; readonly index: number; readonly status: 'error'; readonly code: 'tool_error'; readonly started: true }
  | { readonly id: string; readonly index: number; readonly status: 'cancelled'; readonly code: 'cancelled'; readonly by: string; readonly started: boolean };

/** A body: returns its value (synchronously or as a promise) or throws / rejects; honours `signal`. */
export type ModelBody = (call: ModelCall, signal: AbortSignal) => unknown;

export interface ReferenceOptions {
  readonly concurrency: number;
  /** Whether a failure of this call cancels the rest (`onError`). */
  readonly cancelsRest: (call: ModelCall) => boolean;
}

/** Cuts the calls into segments as they arrive: each exclusive call alone, each run of parallel calls together. */
export function segments(calls: Observable<ModelCall>): Observable<Observable<ModelCall>> {
  return new Observable((out) => {
    let open: ReplaySubject<ModelCall> | undefined;
    const close = () => {
      open?.complete();
      open = undefined;
    };
    const subscription = calls.subscribe({
      next: (call) => {
        if (call.exclusive) {
          close();
          out.next(of(call));
          return;
        }
        if (open === undefined) {
          open = new ReplaySubject<ModelCall>();
          out.next(open);
        }
        open.next(call);
      },
      error: (error: unknown) => {
        close();
        out.error(error);
      },
      complete: () => {
        close();
        out.complete();
      },
    });
    return () => subscription.unsubscribe();
  });
}

/** Releases each outcome once every earlier one (by `index`) is out. */
export function inModelOrder(): OperatorFunction<ModelOutcome, ModelOutcome> {
  return (outcomes) =>
    defer(() => {
      const waiting = new Map<number, ModelOutcome>();
      let next = 0;
      return outcomes.pipe(
        mergeMap((outcome) => {
          waiting.set(outcome.index, outcome);
          const ready: ModelOutcome[] = [];
          for (let out = waiting.get(next); out !== undefined; out = waiting.get(next)) {
            waiting.delete(next++);
            ready.push(out);
          }
          return ready;
        }),
      );
    });
}

/** The reference pool: the calls' outcomes in model order. */
export function referencePool(options: ReferenceOptions, body: ModelBody): OperatorFunction<ModelCall, ModelOutcome> {
  return (calls) =>
    defer(() => {
      const batch = new AbortController();
      let cancelledBy: string | undefined;
      const cancelled = (call: ModelCall, started: boolean): ModelOutcome => ({ id: call.id, index: call.index, status: 'cancelled', code: 'cancelled', by: cancelledBy!, started });
      const failed = (call: ModelCall): ModelOutcome => ({ id: call.id, index: call.index, status: 'error', code: 'tool_error', started: true });
      const ok = (call: ModelCall, value: unknown): ModelOutcome => ({ id: call.id, index: call.index, status: 'ok', value, started: true });

      // A body that returns a value ends where it started, like `of(value)`; a promise ends when it settles.
      const execute = (call: ModelCall): Observable<ModelOutcome> => {
        let output: unknown;
        try {
          output = body(call, batch.signal);
        } catch {
          return of(failed(call));
        }
        if (!(output instanceof Promise)) return of(ok(call, output));
        return from(output).pipe(
          map((value) => ok(call, value)),
          catchError(() => of(batch.signal.aborted ? cancelled(call, true) : failed(call))),
        );
      };
      const run = (call: ModelCall): Observable<ModelOutcome> =>
        defer(() =>
          cancelledBy !== undefined
            ? of(cancelled(call, false))
            : execute(call).pipe(
                tap((outcome) => {
                  if (outcome.status !== 'error' || !options.cancelsRest(call) || cancelledBy !== undefined) return;
                  cancelledBy = call.id;
                  batch.abort(new DOMException(`${call.id} failed`, 'AbortError'));
                }),
              ),
        );
      return segments(calls).pipe(
        concatMap((segment) => segment.pipe(mergeMap(run, options.concurrency))),
        inModelOrder(),
      );
    });
}
