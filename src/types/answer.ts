import type { InteropObservable, Observable, Subscribable } from 'rxjs';

/**
 * What a callback that answers once (a policy, a result middleware, an approver, a start check) may
 * return: the answer itself, a promise of it, or a stream whose **first value** is the answer (an
 * Observable, an interop observable, an async iterable). A stream is unsubscribed as soon as it has
 * answered, or at the chain's deadline; one that completes without a value fails closed. Arrays and
 * strings are answers, not streams.
 *
 * @example
 * ```ts
 * import { timer, map } from 'rxjs';
 * import type { Approver } from 'toolstream';
 *
 * // Answers 30 ms later; inside `TestScheduler.run()` that is frame 30.
 * const approve: Approver = () => timer(30).pipe(map(() => 'allowed-once' as const));
 * ```
 */
export type AnswerInput<T> = T | PromiseLike<T> | Subscribable<T> | InteropObservable<T> | AsyncIterable<T>;

/**
 * What `next()` gives inside a chain: the rest of the chain, run **once** (when `next()` is called)
 * and shared. Await it as a promise, or use it as an Observable (pipe RxJS operators into it, return
 * it): subscribing to it, or awaiting it, never runs the rest again. Once it has failed, a new
 * subscription (`retry`) gets the same error: a chain is never re-run from inside; retries are the
 * tool's `retry` option. It is not `instanceof Promise`.
 *
 * Inside a chain whose members answer at once, a `NextAnswer` has settled before `next()` returns,
 * so `return next().pipe(map(...))` keeps the chain synchronous.
 *
 * @example
 * ```ts
 * import { map } from 'rxjs';
 * import type { PrePolicy } from 'toolstream';
 *
 * // Await it…
 * const logged: PrePolicy = async (ctx, next) => {
 *   const decision = await next();
 *   console.log(ctx.call.name, decision);
 *   return decision;
 * };
 * // …or pipe it.
 * const alsoLogged: PrePolicy = (ctx, next) => next().pipe(map((decision) => (console.log(decision), decision)));
 * ```
 */
export interface NextAnswer<T> extends Observable<T>, Promise<T> {}
