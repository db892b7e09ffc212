import { Observable, type Subscriber, type TeardownLogic } from 'rxjs';
import { ChainAnswer } from '../../stream/chainAnswer.js';
import type { NextAnswer } from '../../types/answer.js';
import { Later, type MaybeLater } from '../../util/later.js';
import { outcome } from '../../util/outcome.js';

/** How an output settled: its value (a streamed one's: its items), or the error it failed with. */
export class Settled {
  constructor(
    readonly ok: boolean,
    readonly value: unknown,
    /** `value` is a stream's items, collected. */
    readonly streamed = false,
  ) {}
}

const NONE: readonly unknown[] = Object.freeze([]);

/** Who hears of a retry an {@link ExecuteAnswer} refused: the chain, which traces it for the middleware `policy`. */
export interface RetryWatcher {
  retried(policy: string): void;
}

/** A subscriber to an {@link ExecuteAnswer}, with how many of the items it has been given. */
interface Listener {
  readonly subscriber: Subscriber<unknown>;
  delivered: number;
}

/**
 * The streamed items of one level of an execute chain (a middleware's output, or the body's) as they
 * come: the items the collector following that output keeps, told at once to whoever listens. A level
 * whose middleware returned what its `next()` gave passes through: its items are the level's below it.
 * Items are only counted here (never copied): `kept` is the collector's own live view.
 */
export class OutputFeed {
  /** The items kept so far (the collector's live view; empty until the first). */
  kept: readonly unknown[] = NONE;
  /** The level below, when this level's middleware returned its `next()` unchanged. */
  passTo: OutputFeed | undefined = undefined;
  /** Copied on write: a listener added or removed while items are told changes only the next round. */
  #listeners: readonly Listener[] = NONE as readonly Listener[];

  /** The feed whose collector holds the items: this one, or the one it passes through to. */
  source(): OutputFeed {
    let feed: OutputFeed = this;
    while (feed.passTo !== undefined) feed = feed.passTo;
    return feed;
  }

  /** An item was kept: `kept` is now every item kept so far. Each listener is given what it lacks. */
  push(kept: readonly unknown[]): void {
    this.kept = kept;
    for (const listener of this.#listeners) tell(listener, kept);
  }

  /** `listener` gets the items kept so far now, and each later one as it comes. */
  listen(listener: Listener): void {
    this.#listeners = [...this.#listeners, listener];
    tell(listener, this.kept);
  }

  unlisten(listener: Listener): void {
    this.#listeners = this.#listeners.filter((l) => l !== listener);
  }
}

/** Gives `listener` the items of `items` it has not had yet. */
function tell(listener: Listener, items: readonly unknown[]): void {
  const { subscriber } = listener;
  while (listener.delivered < items.length && !subscriber.closed) subscriber.next(items[listener.delivered++]);
}

/**
 * What `next()` gives an execute middleware: the rest of the chain and the body, already running (its
 * outcome is `outcome`), as a {@link NextAnswer} whose Observable form is the output's **items**:
 *
 * 1. Awaited (`then`), it is the output as a body's: the value, or the items collected (`Streamed`),
 *    through a {@link ChainAnswer} made on first use (so a native promise only when one is asked for).
 * 2. Subscribed, it emits the streamed items as they come (those the collector keeps): a subscriber
 *    that comes late is given the items kept so far, then the live ones; then it completes when the
 *    output did. A value output is emitted once. A failure is the error, after the items that came.
 * 3. It runs nothing: subscribing or unsubscribing neither starts nor stops the rest of the chain.
 * 4. A subscription after a subscriber has seen the failure is a retry: it gets the same error (by
 *    identity, no items again), and `watcher` is told (the chain traces `retry_refused` for `policy`).
 */
export class ExecuteAnswer extends Observable<unknown> implements NextAnswer<unknown> {
  readonly #outcome: MaybeLater<Settled>;
  readonly #feed: OutputFeed | undefined;
  readonly #watcher: RetryWatcher;
  readonly #policy: string;
  /** The failure a subscriber has seen: any later subscription is a retry. */
  #seen: Settled | undefined = undefined;
  /** The promise form, made on first `then`/`catch`/`finally`. */
  #promised: ChainAnswer<unknown> | undefined = undefined;

  constructor(outcome: MaybeLater<Settled>, feed: OutputFeed | undefined, watcher: RetryWatcher, policy: string) {
    super();
    this.#outcome = outcome;
    this.#feed = feed;
    this.#watcher = watcher;
    this.#policy = policy;
  }

  /**
   * A middleware returned this answer unchanged: its output is the rest of the chain's, as it is (a
   * value stays a value), and its level's items (`feed`) are the ones below, as they come.
   */
  passThrough(feed: OutputFeed | undefined): MaybeLater<Settled> {
    if (feed !== undefined) feed.passTo = this.#feed;
    return this.#outcome;
  }

  /** @internal RxJS calls it for each subscriber. */
  protected _subscribe(subscriber: Subscriber<unknown>): TeardownLogic {
    if (this.#seen !== undefined) {
      this.#watcher.retried(this.#policy);
      subscriber.error(this.#seen.value);
      return;
    }
    const listener: Listener = { subscriber, delivered: 0 };
    const feed = this.#feed?.source();
    const outcome = this.#outcome;
    if (!(outcome instanceof Later)) {
      if (feed !== undefined) tell(listener, feed.kept);
      this.#end(listener, outcome);
      return;
    }
    feed?.listen(listener);
    const end = (settled: Settled) => {
      feed?.unlisten(listener);
      this.#end(listener, settled);
    };
    outcome.then(end, (error: unknown) => end(new Settled(false, error)));
    return () => feed?.unlisten(listener);
  }

  then<R1 = unknown, R2 = never>(
    onValue?: ((value: unknown) => R1 | PromiseLike<R1>) | null,
    // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as Promise<T> declares it
    onError?: ((reason: any) => R2 | PromiseLike<R2>) | null,
  ): Promise<R1 | R2> {
    return this.#promise().then(onValue, onError);
  }

  // eslint-disable-next-line @typescript-eslint/no-explicit-any -- as Promise<T> declares it
  catch<R = never>(onError?: ((reason: any) => R | PromiseLike<R>) | null): Promise<unknown> {
    return this.#promise().catch(onError);
  }

  finally(onFinally?: (() => void) | null): Promise<unknown> {
    return this.#promise().finally(onFinally);
  }

  get [Symbol.toStringTag](): string {
    return 'NextAnswer';
  }

  #promise(): ChainAnswer<unknown> {
    const outcome = this.#outcome;
    return (this.#promised ??= new ChainAnswer(outcome instanceof Later ? outcome.then(unwrap) : outcome.ok ? unwrap(outcome) : Later.rejected(outcome.value)));
  }

  /** The rest of the chain has ended: the items `listener` lacks, then `complete()`; or its value once; or the error. */
  #end(listener: Listener, settled: Settled): void {
    const { subscriber } = listener;
    if (subscriber.closed) return;
    if (!settled.ok) {
      this.#seen = settled;
      subscriber.error(settled.value);
      return;
    }
    if (settled.streamed) tell(listener, settled.value as readonly unknown[]);
    else if (listener.delivered === 0) subscriber.next(settled.value);
    subscriber.complete();
  }
}

/** What the promise form gives: the value, a stream's items as a `Streamed` (as `await next()` always gave), or the error. */
function unwrap(settled: Settled): unknown {
  if (!settled.ok) throw settled.value;
  return settled.streamed ? outcome.streamed(settled.value as readonly unknown[]) : settled.value;
}
